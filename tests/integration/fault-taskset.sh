#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A mask changed by someone else after the daemon packed a task is the
# user's: long-lived jitter tasks are packed onto the busy CPU 0; then
#   - `taskset -p -c 1` moves one packed thread to CPU 1;
#   - a packed process's main thread widens its own mask to every CPU
#     (sched_setaffinity on itself), back to what its original was;
# while CPU 0 stays busy and the daemon keeps planning. Each of them must
# keep the mask it was given, at once, after many ticks, after a reload and
# after the daemon stops; every other task is packed meanwhile and gets its
# original back at the stop.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/storm-lib.bash"
require_storm
WAIT_STEP=0.2

KEEP="ts$$"
config_jitter "$KEEP"

start_keepers K "$TMP/keep" "$KEEP" 3 2 || exit 1
record_masks "$TMP/original" "$TMP/keep"
expect_mask "$TMP/packed" 0 "$TMP/keep"
harness_on_cpu0
start_hog 40
check "daemon starts" start_daemon || exit 1
check "packed onto CPU 0" wait_for 30 masks_match "$TMP/packed"

# the first process's second thread: moved by taskset
MOVED=$(sed -n '1s/^[0-9]* [0-9]* \([0-9]*\).*/\1/p' "$TMP/keep")
# the second process's main thread: widens its own mask
SELF=$(sed -n '2s/^\([0-9]*\) .*/\1/p' "$TMP/keep")
[ -n "$MOVED" ] && [ -n "$SELF" ] || { echo "keepers: unexpected $TMP/keep"; exit 1; }
ALL=$(all_cpus)
taskset -p -c 1 "$MOVED" >/dev/null
kill -URG "$SELF"
FAULTS=$((FAULTS + 2))
check "self-change took effect" wait_for 10 affinity_is "$SELF" "$ALL"
# the daemon's view: both left alone (logged), the rest still packed
noticed() { [ "$(grep -c "affinity changed to .* by someone else" "$TMP/daemon.log")" -ge 2 ]; }
check "the daemon noticed both changes" wait_for 30 noticed
awk -v m="$MOVED" -v s="$SELF" -v all="$ALL" '
    $1 == m { print m, "1"; next } $1 == s { print s, all; next } { print }' "$TMP/packed" > "$TMP/expect"
# many ticks later (50 at 100 ms), CPU 0 still busy: nothing re-packed
ticks() { [ "$(status_num uptime_s)" -ge $((UP0 + 5)) ]; }
UP0=$(status_num uptime_s)
wait_for 30 ticks
check "5 s later: their masks stay, the others packed" masks_report "$TMP/expect"
TASKS_CHECKED=$((TASKS_CHECKED + $(wc -l < "$TMP/expect")))

# a reload classifies every task again: still theirs
reloaded() { ctl reload >/dev/null; }
check "reload" reloaded
check "after a reload: others packed again" wait_for 30 masks_match "$TMP/expect"
check "after a reload: their masks stay" masks_report "$TMP/expect"
TASKS_CHECKED=$((TASKS_CHECKED + $(wc -l < "$TMP/expect")))

check "daemon stops" stop_daemon
awk -v m="$MOVED" -v s="$SELF" -v all="$ALL" '
    $1 == m { print m, "1"; next } $1 == s { print s, all; next } { print }' "$TMP/original" > "$TMP/expect"
check "after the stop: theirs kept, every other task's original back" masks_report "$TMP/expect"
check "no sanitizer report in the daemon's log" sanitizer_clean "$TMP/daemon.log"
print_counts
finish
