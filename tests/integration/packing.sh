#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The real daemon on the real kernel: a CPU hog on CPU 0 and jitter processes
# matched by a rule. Jitter is confined to the busy CPU, follows the load,
# leaves a user-pinned task alone, and every mask comes back on stop, after
# kill -9 and a restart, and when the load goes away.
. "$(dirname "$0")/lib.bash"
require_root
[ "$(nproc)" -ge 2 ] || skip "needs 2 online CPUs"
ALL=$(all_cpus)
[ "$ALL" = "0-1" ] || skip "written for a 2-CPU machine (online: $ALL)"

NAME="tj$$"
write_config <<CONF
[rule test-jitter]
comm = ${NAME}*
class = jitter
CONF
# The shipped hold time: a plan must hold 1 s before it is applied, so that
# a burst of the checks' own work on the idle CPU (turbosched-ctl built with
# sanitizers) does not unpack the jitter between two checks.
sed -i 's/^hold_time = .*/hold_time = 1s/' "$TMP/turbosched.conf"

jitter_pids=()
start_jitter() {
    local p i
    for i in 1 2 3; do spawn p "$LOAD" -d 2 -p 20 -n "${NAME}$i"; jitter_pids+=("$p"); done
}
all_jitter_on() { local p; for p in "${jitter_pids[@]}"; do affinity_is "$p" "$1" || return 1; done; }
explain_class() { ctl --json explain "$1" 2>/dev/null | grep -q "\"class\": *\"$2\""; }

check "daemon starts" start_daemon

spawn HOG "$LOAD" -c 0 -d "$HOG_DUTY" -p 10 -n tshog$$
t0=$(now_us)
# The plan takes the hog's load in (smoothing, hold time) before it packs: a
# first jitter task shows when it has (polling the daemon itself, or its log
# through a pipeline, would make the idle CPU busy under a sanitizer build).
spawn FIRST "$LOAD" -d 2 -p 20 -n "${NAME}0"
check "plan packs on the busy CPU 0" wait_for 20 affinity_is "$FIRST" 0
echo "  plan packed $(( ($(now_us) - t0) / 1000 )) ms after the hog started"
# A jitter task the user pinned to CPU 1 before the daemon saw it.
spawn PINNED taskset -c 1 "$LOAD" -d 2 -p 20 -n "${NAME}p"
# placements timed from their event: the histogram's count (one read
# before, one after, so the idle CPU sees two short clients only)
latency_count() { ctl metrics 2>/dev/null | sed -n 's/^turbosched_placement_latency_seconds_count //p'; }
n0=$(latency_count)
t0=$(now_us)
start_jitter
# Placement follows each exec event at once: a second is generous.
check "jitter confined to the busy CPU 0 within 1 s" wait_for 1 all_jitter_on 0
for p in "${jitter_pids[@]}"; do echo "  jitter $p: $(affinity_of $p)"; done
echo "  confined $(( ($(now_us) - t0) / 1000 )) ms after the jitter tasks started"
# Each was placed on its rename event (ts-load names itself after exec):
# three placements, each timed from the kernel's event.
n1=$(latency_count)
counted_three() { [ -n "$n0" ] && [ -n "$n1" ] && [ "$n1" -eq $(( n0 + 3 )) ]; }
check "latency histogram counted the three placements (count $n0 -> $n1)" counted_three
check "pinned task classified jitter" wait_for 10 explain_class "$PINNED" jitter
check "pinned task left on CPU 1" affinity_is "$PINNED" 1
# dump_task PID: the task's object in the JSON dump, on one line
dump_task() { ctl --json dump | tr -d ' \n' | grep -o "{\"tid\":$1,[^}]*}"; }
dump_masks_ok() {
    local o; o=$(dump_task "${jitter_pids[0]}") || return 1
    echo "  dump: $o"
    [[ $o == *'"class":"jitter"'* && $o == *'"original_mask":"0-1"'* && $o == *'"current_mask":"0"'* ]]
}
check "dump shows a jitter task, its original and current masks" dump_masks_ok
check "text dump lists it too" bash -c "'$CTL' --socket '$TMP/control' dump | grep -q '${NAME}1'"

kill "$HOG"; wait "$HOG" 2>/dev/null
check "load gone: masks back to the originals" wait_for 20 all_jitter_on "$ALL"
check "pinned task still on CPU 1" affinity_is "$PINNED" 1

spawn HOG "$LOAD" -c 0 -d "$HOG_DUTY" -p 10 -n tshog$$
check "load back: confined again" wait_for 20 all_jitter_on 0
check "SIGTERM: daemon exits cleanly" stop_daemon TERM
check "SIGTERM: every mask restored" all_jitter_on "$ALL"
check "SIGTERM: pinned task untouched" affinity_is "$PINNED" 1
check "SIGTERM: state file removed" test ! -e "$TMP/state"

check "restart" start_daemon
check "restart: confined again" wait_for 20 all_jitter_on 0
# written at the end of the tick that made the changes, a moment after them
check "state file written" wait_for 5 test -s "$TMP/state"
stop_daemon KILL
check "kill -9 leaves tasks confined (the state file remembers them)" all_jitter_on 0
kill "$HOG"; wait "$HOG" 2>/dev/null
check "restart after kill -9" start_daemon
check "restart after kill -9: nothing left confined" wait_for 20 all_jitter_on "$ALL"
check "pinned task still on CPU 1 after all" affinity_is "$PINNED" 1
check "final SIGTERM" stop_daemon TERM

# --dry-run: the same load and plan, every change logged, none made.
spawn HOG "$LOAD" -c 0 -d "$HOG_DUTY" -p 10 -n tshog$$
check "dry run: daemon starts" start_daemon --dry-run
would_set() { local p; for p in "${jitter_pids[@]}"; do grep -q "would set pid $p (" "$TMP/daemon.log" || return 1; done; }
# polled slowly: each poll runs greps, whose events the daemon handles
logged_in_time() { WAIT_STEP=0.2 wait_for 20 would_set; }
check "dry run: each change logged" logged_in_time
check "dry run: no mask changed" all_jitter_on "$ALL"
check "dry run: no state file" test ! -e "$TMP/state"
check "dry run: SIGTERM" stop_daemon TERM
check "dry run: masks still the originals" all_jitter_on "$ALL"
check "no error in the daemon's log" bash -c "! grep -q '^<[0-3]>' '$TMP/daemon.log'"
finish
