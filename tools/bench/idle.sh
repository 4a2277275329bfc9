#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
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
idle_source_init "$IDLE_CPU"

# The shipped tick and hysteresis, and the shipped rule for the daemon
# itself. busy_threshold as in the integration tests: the idle CPU also runs
# this harness and the VM's own background, which hover around the shipped
# 12.5% here and would make both CPUs "busy" (nothing then to keep idle).
# config [rule|behaviour]: with the rule that names turbo-bench's jitter, or
# without it (the jitter is then found by behaviour, as on a machine where
# nobody wrote a rule)
config() {
    bench_config <<CONF
[packing]
busy_threshold = 30%
[rule turbosched-itself]
comm = turboschedd
class = jitter
$([ "$1" = rule ] && printf '[rule turbo-bench-jitter]\ncomm = tb-jitter*\nclass = jitter\n')
CONF
}
# packed_at_least N: the daemon has packed N threads or more
packed_at_least() { [ "$(ctl --json status 2>/dev/null | sed -n 's/^ *"packed": \([0-9]*\).*/\1/p' | head -1)" -ge "$1" ] 2>/dev/null; }

# run_phase on|behaviour|off|pinned: "wakeups_per_s residency_pct ops_per_s p99_us";
# on: with the rule; behaviour: without it, measured once the six jitter
# threads are found and packed (turbo-bench runs 30 s longer to leave time
# for the 10 s window; its ops/s and latency cover the whole run);
# pinned: no daemon, the whole of turbo-bench pinned to CPU 0 by hand (the
# floor: what this machine wakes CPU 1 for anyway)
run_phase() {
    local pin=() secs=$SECS daemon=0
    case $1 in
    on) config rule; daemon_start; daemon=1 ;;
    behaviour) config behaviour; daemon_start; daemon=1; secs=$((SECS + 30)) ;;
    pinned) pin=(taskset -c 0) ;;
    esac
    "${pin[@]}" "$BUILD/turbo-bench" -n 1 -c 0 -d 70 -m 6 -p 20 -w 200 -t "$secs" --json > "$TMP/tb.json" &
    local tb=$!
    if [ "$1" = on ]; then
        wait_until 20 plan_restricted || { echo "idle.sh: the plan did not restrict jitter within 20 s: $(ctl status 2>&1 | grep "^Plan")" >&2; }
    elif [ "$1" = behaviour ]; then
        # the daemon's own thread is packed too, by its rule
        wait_until 30 packed_at_least 7 ||
            { echo "idle.sh: behaviour did not pack the jitter within 30 s: $(ctl status 2>&1 | grep -E "^(Plan|Tasks)")" >&2; }
    else
        sleep 1
    fi
    local u t e
    idle_while "$tb"; u=$IDLE_U t=$IDLE_T e=$IDLE_E
    [ $daemon = 1 ] && daemon_stop
    awk -v u="$u" -v t="$t" -v e="$e" -v ops="$(json_num ops_per_s_total "$TMP/tb.json")" \
        -v p99="$(sed -n 's/.*"p99": *\([0-9.]*\).*/\1/p' "$TMP/tb.json" | head -1)" \
        'BEGIN { printf "%.1f %.1f %.0f %s\n", u / (e / 1e6), 100 * t / e, ops, p99 }'
}

echo "Wake-ups counted from $SOURCE."
echo
echo "| round | daemon | CPU $IDLE_CPU wake-ups/s | CPU $IDLE_CPU idle residency | intensive ops/s | jitter latency p99 µs |"
echo "|---|---|---|---|---|---|"
sum() { awk -v a="$1" -v b="$2" 'BEGIN { print a + b }'; }
W_OFF=0 W_ON=0 O_OFF=0 O_ON=0 W_PIN=0 W_BEH=0
for r in $(seq "$ROUNDS"); do
    read -r w_off res_off o_off p_off < <(run_phase off)
    read -r w_on res_on o_on p_on < <(run_phase on)
    read -r w_beh res_beh o_beh p_beh < <(run_phase behaviour)
    read -r w_pin res_pin o_pin p_pin < <(run_phase pinned)
    echo "| $r | off | $w_off | $res_off% | $o_off | $p_off |"
    echo "| $r | on, with a rule | $w_on | $res_on% | $o_on | $p_on |"
    echo "| $r | on, no rule (behaviour) | $w_beh | $res_beh% | $o_beh (whole run) | $p_beh (whole run) |"
    echo "| $r | pinned by hand (floor) | $w_pin | $res_pin% | $o_pin | $p_pin |"
    W_OFF=$(sum "$W_OFF" "$w_off"); W_ON=$(sum "$W_ON" "$w_on"); W_PIN=$(sum "$W_PIN" "$w_pin")
    W_BEH=$(sum "$W_BEH" "$w_beh")
    O_OFF=$(sum "$O_OFF" "$o_off"); O_ON=$(sum "$O_ON" "$o_on")
done
echo
awk -v off="$W_OFF" -v on="$W_ON" -v oo="$O_OFF" -v on2="$O_ON" -v pin="$W_PIN" -v beh="$W_BEH" 'BEGIN {
    if (off > 0) printf "Wake-ups of the idle CPU with the daemon: %.3fx of without (%.1f%% fewer); intensive ops/s %.3fx.\n", on / off, 100 * (1 - on / off), (oo > 0 ? on2 / oo : 0)
    if (off > pin) printf "Of the wake-ups the jitter caused (without the daemon, less the floor with everything pinned by hand), the daemon removed %.1f%%.\n", 100 * (off - on) / (off - pin)
    if (off > on) printf "With no rule, behaviour alone removed %.1f%% of the wake-ups (%.1f%% of what the rule removed in the same run).\n", 100 * (1 - beh / off), 100 * (off - beh) / (off - on)
    if (off > pin) printf "idle_avoidable_removed_pct=%.1f\n", 100 * (off - on) / (off - pin)
    if (off > on) printf "idle_behaviour_of_rule_pct=%.1f\n", 100 * (off - beh) / (off - on)
    if (off > 0) printf "idle_fewer_wakeups_pct=%.1f\n", 100 * (1 - on / off) }'
