#!/usr/bin/env bash
# Idle CPU kept idle, on this machine: turbo-bench with one intensive thread
# pinned to CPU 0 and jitter threads (free to run anywhere), with the daemon
# off and on, alternating in the same run. Counts how often CPU 1 leaves idle
# (cpuidle "usage" counters) and its idle residency, from 1 s into each run
# to its end, and takes the intensive ops/s and the jitter wake-up latency
# from turbo-bench.
#
# A POWER core keeps spare SMT capacity beside a busy thread; this VM has no
# SMT, so a fully busy CPU has none. The daemon's config models that headroom
# with smt1 = 1.25 (an SMT2 core's capacity): without it the plan would
# rightly find no room on CPU 0 and leave the jitter alone.
#
# usage: idle.sh BUILD_DIR [SECONDS] [ROUNDS]
. "$(dirname "$0")/lib.bash"
SECS=${2:-10}
ROUNDS=${3:-2}
IDLE_CPU=1
[ -d /sys/devices/system/cpu/cpu$IDLE_CPU/cpuidle ] || { echo "idle.sh: no cpuidle on CPU $IDLE_CPU" >&2; exit 77; }

bench_config <<CONF
[capacity]
smt1 = 1.25
[packing]
hold_time = 200ms
min_change_interval = 200ms
[rule turbo-bench-jitter]
comm = tb-jitter*
class = jitter
CONF
sed -i 's/^\[daemon\]$/&\ntick_interval = 100ms/' "$TMP/turbosched.conf"

idle_counts() {   # "usage time_us" summed over CPU $IDLE_CPU's states
    local u=0 t=0 s
    for s in /sys/devices/system/cpu/cpu$IDLE_CPU/cpuidle/state*; do
        u=$((u + $(cat "$s/usage"))); t=$((t + $(cat "$s/time")))
    done
    echo "$u $t"
}
json_num() { sed -n "s/.*\"$1\": *\([0-9.]*\).*/\1/p" "$2" | head -1; }

# run_phase on|off: "wakeups_per_s residency_pct ops_per_s p99_us"
run_phase() {
    [ "$1" = on ] && daemon_start
    "$BUILD/turbo-bench" -n 1 -c 0 -m 6 -p 20 -w 200 -t "$SECS" --json > "$TMP/tb.json" &
    local tb=$!
    sleep 1
    local u0 t0 u1 t1 s0 s1
    read -r u0 t0 < <(idle_counts); s0=$(date +%s%N)
    wait "$tb"
    read -r u1 t1 < <(idle_counts); s1=$(date +%s%N)
    [ "$1" = on ] && daemon_stop
    local el_us=$(( (s1 - s0) / 1000 ))
    awk -v u=$((u1 - u0)) -v t=$((t1 - t0)) -v e=$el_us -v ops="$(json_num ops_per_s_total "$TMP/tb.json")" \
        -v p99="$(sed -n 's/.*"p99": *\([0-9.]*\).*/\1/p' "$TMP/tb.json" | head -1)" \
        'BEGIN { printf "%.1f %.1f %.0f %s\n", u / (e / 1e6), 100 * t / e, ops, p99 }'
}

echo "| round | daemon | CPU $IDLE_CPU wake-ups/s | CPU $IDLE_CPU idle residency | intensive ops/s | jitter latency p99 µs |"
echo "|---|---|---|---|---|---|"
sum() { awk -v a="$1" -v b="$2" 'BEGIN { print a + b }'; }
W_OFF=0 W_ON=0 O_OFF=0 O_ON=0
for r in $(seq "$ROUNDS"); do
    read -r w_off res_off o_off p_off < <(run_phase off)
    read -r w_on res_on o_on p_on < <(run_phase on)
    echo "| $r | off | $w_off | $res_off% | $o_off | $p_off |"
    echo "| $r | on | $w_on | $res_on% | $o_on | $p_on |"
    W_OFF=$(sum "$W_OFF" "$w_off"); W_ON=$(sum "$W_ON" "$w_on")
    O_OFF=$(sum "$O_OFF" "$o_off"); O_ON=$(sum "$O_ON" "$o_on")
done
echo
awk -v off="$W_OFF" -v on="$W_ON" -v oo="$O_OFF" -v on2="$O_ON" 'BEGIN {
    if (off > 0) printf "Wake-ups of the idle CPU with the daemon: %.3fx of without (%.1f%% fewer); intensive ops/s %.3fx.\n", on / off, 100 * (1 - on / off), (oo > 0 ? on2 / oo : 0)
    if (off > 0) printf "idle_fewer_wakeups_pct=%.1f\n", 100 * (1 - on / off) }'
