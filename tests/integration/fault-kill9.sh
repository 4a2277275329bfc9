#!/usr/bin/env bash
# kill -9 while tasks are packed, then restart. Long-lived jitter processes
# with threads are packed onto the busy CPU 0; the daemon is killed; while
# no daemon runs, each packed process creates a thread and a child process
# (both inherit the confined mask); then the daemon starts again:
#   - odd rounds, same config: every task, old or new, is re-adopted (packed,
#     and its true original mask given back when the daemon stops);
#   - even rounds, the jitter rule gone: every task is restored at start-up.
# A task the user pinned to CPU 1 before any daemon ran keeps its mask
# throughout. A task left on CPU 0, or restored to anything but its
# original, fails the test.
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
check "no sanitizer report in the daemon's log" sanitizer_clean "$TMP/daemon.log"
print_counts
finish
