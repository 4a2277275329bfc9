#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# kill -9 while tasks are packed, then restart. Long-lived jitter processes
# with threads are packed onto the busy CPU 0; the daemon is killed; while
# no daemon runs, each packed process creates a thread and a child process
# (both inherit the confined mask); then the daemon starts again:
#   - odd rounds, same config: every task, old or new, is re-adopted (packed,
#     and its true original mask given back when the daemon stops);
#   - even rounds, the jitter rule gone: every task is restored at start-up.
# A task the user pinned to CPU 1 before any daemon ran keeps its mask
# throughout. A task left on CPU 0, or restored to anything but its
# original, fails the test. Last, a kill -9 right after a task was packed
# on its exec, before the next tick.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/storm-lib.bash"
require_storm
ROUNDS=${ROUNDS:-4}
WAIT_STEP=0.2

KEEP="k9$$"

start_keepers K "$TMP/keep" "$KEEP" 3 2 || exit 1
start_keepers KP "$TMP/keep-pinned" "$KEEP" 1 1 taskset -c 1 || exit 1
ORIG=$(affinity_of "$(cut -d' ' -f1 "$TMP/keep" | head -1)")
PINNED=$(affinity_of "$(cut -d' ' -f1 "$TMP/keep-pinned")")
echo "original mask $ORIG, pinned $PINNED"
harness_on_cpu0
start_hog 40

keepers() { cut -d' ' -f1 "$TMP/keep"; }
# masks_now FILE MASK: every TID of the keepers' families should have MASK;
# the pinned task its own
expect_all() {
    { for t in $(family $(keepers)); do echo "$t $1"; done
      for t in $(family "$(cut -d' ' -f1 "$TMP/keep-pinned")"); do echo "$t $PINNED"; done; } > "$TMP/expect"
}
all_are() { expect_all "$1"; masks_match "$TMP/expect"; }

for round in $(seq "$ROUNDS"); do
    echo "--- round $round"
    config_jitter "$KEEP"
    check "round $round: daemon starts" start_daemon || break
    check "round $round: packed onto CPU 0" wait_for 30 all_are 0
    stop_daemon KILL
    FAULTS=$((FAULTS + 1))
    check "round $round: after kill -9 the tasks stay confined" all_are 0
    before=$(family $(keepers) | wc -l)
    for p in $(keepers); do kill -USR1 "$p"; kill -USR2 "$p"; done
    grown() { [ "$(family $(keepers) | wc -l)" -ge $((before + 2 * $(keepers | wc -l))) ]; }
    check "round $round: a thread and a child each, created while down" wait_for 20 grown
    check "round $round: the new tasks inherited the confined mask" all_are 0
    echo "  tasks now: $(family $(keepers) | wc -l) (were $before)"
    if [ $((round % 2)) -eq 1 ]; then
        check "round $round: restarted with the same rules" start_daemon
        check "round $round: every task re-adopted and packed" wait_for 30 all_are 0
        check "round $round: daemon stops" stop_daemon
    else
        config_none
        check "round $round: restarted without the jitter rule" start_daemon
        check "round $round: every task restored at start-up" wait_for 30 all_are "$ORIG"
        check "round $round: daemon stops" stop_daemon
    fi
    expect_all "$ORIG"
    check "round $round: every task has its original mask" masks_report "$TMP/expect"
    check "round $round: state file removed" test ! -e "$TMP/state"
done

# kill -9 between two ticks: a task packed on its exec is in the state file
# before the daemon sleeps again, not a tick later, so a restart after a
# crash right then still gives it its original mask back. The tick counter
# shows that no tick came in between (else the try is repeated). Each try
# follows a short storm of execs and a pause: the storm's long mute of the
# main socket must end with the task's exec, or its rename (which makes it
# jitter) waits for the tick.
echo "--- between two ticks"
config_jitter "$KEEP"
sed -i 's/^tick_interval = .*/tick_interval = 2s/' "$TMP/turbosched.conf"
check "between ticks: daemon starts" start_daemon
check "between ticks: packed onto CPU 0" wait_for 30 all_are 0
in_state() { local k t r; while read -r k t r; do [ "$k" = task ] && [ "$t" = "$1" ] && return 0; done < "$TMP/state"; return 1; } 2>/dev/null
NEW=
exec_storm() { local end=$(( $(now_us) + 400000 )); while [ "$(now_us)" -lt $end ]; do /bin/true; done; }
for try in 1 2 3 4 5 6; do
    exec_storm
    nap 0.5
    t0=$(metric turbosched_ticks_total)
    spawn p taskset -c 0-1 "$LOAD" -d 2 -p 20 -n "${KEEP}n$try"
    if ! wait_for 1 in_state "$p"; then echo "  try $try: pid $p not in the state file within 1 s"; continue; fi
    t1=$(metric turbosched_ticks_total)
    [ -n "$t0" ] && [ "$t0" = "$t1" ] && { NEW=$p; break; }
    echo "  try $try: ticks $t0 -> $t1 meanwhile, once more"
done
check "between ticks: a task packed on its exec is recorded before the next tick" test -n "$NEW"
stop_daemon KILL
FAULTS=$((FAULTS + 1))
if [ -n "$NEW" ]; then
    check "between ticks: after kill -9 it stays confined" affinity_is "$NEW" 0
    config_none
    check "between ticks: restarted without the jitter rule" start_daemon
    check "between ticks: its original mask back at start-up" wait_for 30 affinity_is "$NEW" "$(all_cpus)"
    check "between ticks: daemon stops" stop_daemon
fi
check "no sanitizer report in the daemon's log" sanitizer_clean "$TMP/daemon.log"
print_counts
finish
