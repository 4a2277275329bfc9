#!/usr/bin/env bash
# Idle CPU kept idle, on this machine: turbo-bench with one intensive thread
# pinned to CPU 0 and jitter threads free to run anywhere, with the daemon off
# and on, alternating in the same run. Counts how often CPU 1 leaves idle and
# its idle residency, from the moment the plan holds (1 s in, without the
# daemon) to the end, and takes the intensive ops/s and the jitter wake-up
# latency from turbo-bench.
#
# A fully busy CPU has no room on this VM (no SMT), so the intensive thread
# computes 70% of each 10 ms (turbo-bench -d 70): the room a POWER core keeps
# beside a busy thread in its SMT siblings.
#
# usage: idle.sh BUILD_DIR [SECONDS] [ROUNDS]
. "$(dirname "$0")/lib.bash"
SECS=${2:-10}
ROUNDS=${3:-2}
IDLE_CPU=1
# Wake-ups: the cpuidle "usage" counters where there is a cpuidle driver;
# without one, CPU 1's local timer and rescheduling interrupts (a task woken
# on an idle CPU sends it a rescheduling IPI; a running CPU takes ticks),
# with residency from its idle time in /proc/stat.
CPUIDLE=/sys/devices/system/cpu/cpu$IDLE_CPU/cpuidle
if [ -d "$CPUIDLE" ] && ls "$CPUIDLE"/state* >/dev/null 2>&1; then
    SOURCE="cpuidle usage"
else
    grep -q '^ *LOC:' /proc/interrupts || { echo "idle.sh: no cpuidle and no LOC line in /proc/interrupts" >&2; exit 77; }
    SOURCE="LOC+RES interrupts"
fi

# The shipped tick and hysteresis, and the shipped rule for the daemon
# itself. busy_threshold as in the integration tests: the idle CPU also runs
# this harness and the VM's own background, which hover around the shipped
# 12.5% here and would make both CPUs "busy" (nothing then to keep idle).
bench_config <<CONF
[packing]
busy_threshold = 30%
[rule turbosched-itself]
comm = turboschedd
class = jitter
[rule turbo-bench-jitter]
comm = tb-jitter*
class = jitter
CONF

idle_counts() {   # "wake-ups idle_time_us" of CPU $IDLE_CPU so far
    local u=0 t=0 s
    if [ "$SOURCE" = "cpuidle usage" ]; then
        for s in "$CPUIDLE"/state*; do
            u=$((u + $(cat "$s/usage"))); t=$((t + $(cat "$s/time")))
        done
    else
        u=$(awk -v c=$((IDLE_CPU + 2)) '$1 == "LOC:" || $1 == "RES:" { n += $c } END { print n + 0 }' /proc/interrupts)
        t=$(awk -v cpu="cpu$IDLE_CPU" -v hz="$(getconf CLK_TCK)" '$1 == cpu { printf "%.0f", ($5 + $6) * 1e6 / hz }' /proc/stat)
    fi
    echo "$u $t"
}
json_num() { sed -n "s/.*\"$1\": *\([0-9.]*\).*/\1/p" "$2" | head -1; }

# run_phase on|off|pinned: "wakeups_per_s residency_pct ops_per_s p99_us";
# pinned: no daemon, the whole of turbo-bench pinned to CPU 0 by hand (the
# floor: what this machine wakes CPU 1 for anyway)
run_phase() {
    [ "$1" = on ] && daemon_start
    local pin=()
    [ "$1" = pinned ] && pin=(taskset -c 0)
    "${pin[@]}" "$BUILD/turbo-bench" -n 1 -c 0 -d 70 -m 6 -p 20 -w 200 -t "$SECS" --json > "$TMP/tb.json" &
    local tb=$!
    if [ "$1" = on ]; then
        wait_until 20 plan_restricted || { echo "idle.sh: the plan did not restrict jitter within 20 s: $(ctl status 2>&1 | grep "^Plan")" >&2; }
    else
        sleep 1
    fi
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

echo "Wake-ups counted from $SOURCE."
echo
echo "| round | daemon | CPU $IDLE_CPU wake-ups/s | CPU $IDLE_CPU idle residency | intensive ops/s | jitter latency p99 µs |"
echo "|---|---|---|---|---|---|"
sum() { awk -v a="$1" -v b="$2" 'BEGIN { print a + b }'; }
W_OFF=0 W_ON=0 O_OFF=0 O_ON=0 W_PIN=0
for r in $(seq "$ROUNDS"); do
    read -r w_off res_off o_off p_off < <(run_phase off)
    read -r w_on res_on o_on p_on < <(run_phase on)
    read -r w_pin res_pin o_pin p_pin < <(run_phase pinned)
    echo "| $r | off | $w_off | $res_off% | $o_off | $p_off |"
    echo "| $r | on | $w_on | $res_on% | $o_on | $p_on |"
    echo "| $r | pinned by hand (floor) | $w_pin | $res_pin% | $o_pin | $p_pin |"
    W_OFF=$(sum "$W_OFF" "$w_off"); W_ON=$(sum "$W_ON" "$w_on"); W_PIN=$(sum "$W_PIN" "$w_pin")
    O_OFF=$(sum "$O_OFF" "$o_off"); O_ON=$(sum "$O_ON" "$o_on")
done
echo
awk -v off="$W_OFF" -v on="$W_ON" -v oo="$O_OFF" -v on2="$O_ON" -v pin="$W_PIN" 'BEGIN {
    if (off > 0) printf "Wake-ups of the idle CPU with the daemon: %.3fx of without (%.1f%% fewer); intensive ops/s %.3fx.\n", on / off, 100 * (1 - on / off), (oo > 0 ? on2 / oo : 0)
    if (off > pin) printf "Of the wake-ups the jitter caused (without the daemon, less the floor with everything pinned by hand), the daemon removed %.1f%%.\n", 100 * (off - on) / (off - pin)
    if (off > pin) printf "idle_avoidable_removed_pct=%.1f\n", 100 * (off - on) / (off - pin)
    if (off > 0) printf "idle_fewer_wakeups_pct=%.1f\n", 100 * (1 - on / off) }'
