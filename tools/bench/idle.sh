#!/usr/bin/env bash
# Idle CPU kept idle: a CPU-bound task on CPU 0 and a mix of jitter tasks,
# with and without turboschedd, side by side in one run. Counts how often
# CPU 1 leaves idle (cpuidle "usage" counters) and its idle residency.
# Prints a markdown table; not a test (timings are noisy on shared machines).
#
# usage: idle.sh BUILD_DIR [SECONDS] [ROUNDS]
set -euo pipefail
BUILD=${1:?usage: idle.sh BUILD_DIR [SECONDS] [ROUNDS]}
SECS=${2:-10}
ROUNDS=${3:-2}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
LOAD=$BUILD/ts-load
DAEMON=$BUILD/turboschedd
IDLE_CPU=1
N_JITTER=6

[ "$(id -u)" -eq 0 ] || { echo "idle.sh: needs root" >&2; exit 77; }
[ -d /sys/devices/system/cpu/cpu$IDLE_CPU/cpuidle ] || { echo "idle.sh: no cpuidle on CPU $IDLE_CPU" >&2; exit 77; }

TMP=$(mktemp -d /tmp/turbosched-bench.XXXXXX)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT

cat > "$TMP/turbosched.conf" <<CONF
[daemon]
tick_interval = 100ms
control_socket = $TMP/control
state_file = $TMP/state
[packing]
hold_time = 200ms
min_change_interval = 200ms
[classify]
unit_optin = no
[rule bench-jitter]
comm = tsjit*
class = jitter
CONF

idle_counts() {   # prints "usage time_us" summed over CPU $IDLE_CPU's states
    local u=0 t=0 s
    for s in /sys/devices/system/cpu/cpu$IDLE_CPU/cpuidle/state*; do
        u=$((u + $(cat "$s/usage"))); t=$((t + $(cat "$s/time")))
    done
    echo "$u $t"
}
affinity_of() { awk '/^Cpus_allowed_list:/ {print $2}' "/proc/$1/status" 2>/dev/null; }

# run_phase on|off → "wakeups_per_s residency_pct"
run_phase() {
    local mode=$1 dpid= pids=() p
    if [ "$mode" = on ]; then
        "$DAEMON" --config "$TMP/turbosched.conf" >"$TMP/daemon.log" 2>&1 &
        dpid=$!; PIDS+=("$dpid")
        for _ in $(seq 500); do [ -S "$TMP/control" ] && break; sleep 0.02; done
    fi
    "$LOAD" -c 0 -d 70 -p 10 -n tshog & pids+=($!)
    for _ in $(seq $N_JITTER); do "$LOAD" -d 2 -p 20 -n tsjit & pids+=($!); done
    PIDS+=("${pids[@]}")
    if [ "$mode" = on ]; then   # wait until every jitter task is confined to CPU 0
        for _ in $(seq 500); do
            local all=1
            for p in "${pids[@]:1}"; do [ "$(affinity_of "$p")" = 0 ] || all=0; done
            [ $all = 1 ] && break; sleep 0.02
        done
    fi
    sleep 1
    read -r u0 t0 < <(idle_counts); local s0; s0=$(date +%s%N)
    sleep "$SECS"
    read -r u1 t1 < <(idle_counts); local s1; s1=$(date +%s%N)
    kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null || true
    if [ -n "$dpid" ]; then kill -TERM "$dpid"; wait "$dpid" 2>/dev/null || true; fi
    local el_us=$(( (s1 - s0) / 1000 ))
    awk -v u=$((u1 - u0)) -v t=$((t1 - t0)) -v e=$el_us 'BEGIN { printf "%.1f %.1f\n", u / (e / 1e6), 100 * t / e }'
}

echo "| round | daemon | CPU $IDLE_CPU wake-ups/s | CPU $IDLE_CPU idle residency |"
echo "|---|---|---|---|"
tot_off=0; tot_on=0
for r in $(seq "$ROUNDS"); do
    read -r w_off res_off < <(run_phase off)
    read -r w_on res_on < <(run_phase on)
    echo "| $r | off | $w_off | $res_off% |"
    echo "| $r | on | $w_on | $res_on% |"
    tot_off=$(awk -v a="$tot_off" -v b="$w_off" 'BEGIN{print a+b}')
    tot_on=$(awk -v a="$tot_on" -v b="$w_on" 'BEGIN{print a+b}')
done
awk -v off="$tot_off" -v on="$tot_on" 'BEGIN {
    if (off > 0) printf "\nWake-ups of the idle CPU with the daemon: %.3fx of without (%.1f%% fewer).\n", on / off, 100 * (1 - on / off) }'
