#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The state file after a crash, whole or damaged. Long-lived jitter tasks
# are packed onto the busy CPU 0 and the daemon is killed with -9; its state
# file (which records each task's original mask) is then left intact,
# truncated, overwritten with garbage, or rewritten as if from another boot
# (a valid file whose boot id differs and whose entries claim an original
# mask of CPU 1 for the packed tasks). The daemon restarts without the
# jitter rule, so that recovery alone decides what happens:
#   - intact: every task gets its original mask back;
#   - cut short (at a line, no end line): its task lines are as written;
#     each task whose line survived and still matches gets its original
#     back, the others keep CPU 0, and the log says so;
#   - garbage or foreign: the file is ignored with a message naming the
#     problem, removed, and nothing is restored (the tasks keep CPU 0: above
#     all, none gets the foreign file's CPU 1).
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/storm-lib.bash"
require_storm
WAIT_STEP=0.2

KEEP="sf$$"

start_keepers K "$TMP/keep" "$KEEP" 3 2 || exit 1
record_masks "$TMP/original" "$TMP/keep"
expect_mask "$TMP/packed" 0 "$TMP/keep"
harness_on_cpu0
start_hog 40

# fnv1a FILE: the state file's checksum of its lines before the end line
# (64-bit FNV-1a, as daemon/apply/state.c; bash arithmetic wraps at 64 bits)
fnv1a() {
    local h=$((0xcbf29ce484222325)) b
    for b in $(od -An -v -tu1 "$1"); do
        h=$(( (h ^ b) * 0x100000001b3 ))
    done
    printf '%016x' "$h"
}
# foreign: another boot id, every task's original claimed to be CPU 1, and
# a valid end line, so that only the boot id can tell the daemon to ignore it
foreign() {
    local body="$TMP/state.body"
    grep -v '^end ' "$TMP/state" |
        sed -e 's/^boot .*/boot 00000000-1111-2222-3333-444444444444/' \
            -e 's/^\(task [0-9]* [0-9]* [0-9]*\) [^ ]* /\1 1 /' > "$body"
    { cat "$body"; echo "end $(wc -l < "$body") $(fnv1a "$body")"; } > "$TMP/state"
}

check_case() {   # check_case NAME EXPECTED_MESSAGE
    local name=$1 msg=$2
    echo "--- state file $name"
    config_jitter "$KEEP"
    check "$name: daemon starts" start_daemon || return
    check "$name: packed onto CPU 0" wait_for 30 masks_match "$TMP/packed"
    check "$name: state file written" test -s "$TMP/state"
    stop_daemon KILL
    FAULTS=$((FAULTS + 1))
    case $name in
        truncated)
            # the first half of its lines: a few task lines, no end line
            head -n $(( $(wc -l < "$TMP/state") / 2 )) "$TMP/state" > "$TMP/state.cut"
            cat "$TMP/state.cut" > "$TMP/state"
            # what comes back: the tasks whose line survived
            while read -r t m; do
                if grep -q "^task $t " "$TMP/state"; then echo "$t $m"; else echo "$t 0"; fi
            done < "$TMP/original" > "$TMP/after-cut"
            grep -q "^task " "$TMP/state" || echo "  (no task line survived the cut)" ;;
        garbage) { head -c 512 /dev/urandom; echo; } > "$TMP/state" ;;   # a first line, never the magic
        foreign) foreign ;;
    esac
    config_none
    check "$name: daemon starts on it" start_daemon || return
    if [ "$name" = intact ]; then
        check "$name: every task restored at start-up" wait_for 30 masks_match "$TMP/original"
    elif [ "$name" = truncated ]; then
        check "$name: the log names the problem" \
            bash -c "tail -c +$((LOG_START + 1)) '$TMP/daemon.log' | grep -E 'state file $TMP/state: .*$msg.*ignoring it'"
        check "$name: the log says what was restored and what may not be" \
            bash -c "tail -c +$((LOG_START + 1)) '$TMP/daemon.log' | grep -E 'state file $TMP/state: cut short; .*may keep their masks'"
        check "$name: tasks whose line survived restored, the others keep CPU 0" masks_report "$TMP/after-cut"
    else
        check "$name: the log names the problem" \
            bash -c "tail -c +$((LOG_START + 1)) '$TMP/daemon.log' | grep -E 'state file $TMP/state: .*$msg.*ignoring it'"
        check "$name: nothing restored (tasks keep CPU 0)" masks_report "$TMP/packed"
    fi
    check "$name: state file gone" test ! -e "$TMP/state"
    check "$name: daemon stops" stop_daemon
    TASKS_CHECKED=$((TASKS_CHECKED + $(wc -l < "$TMP/original")))
    # give the tasks their masks back by hand for the next case
    local t m
    while read -r t m; do taskset -p -c "$m" "$t" >/dev/null; done < "$TMP/original"
}

check_case intact ""
check_case truncated "truncated|corrupted"
check_case garbage "not a turbosched state file|corrupted"
check_case foreign "written during another boot"
check "no sanitizer report in the daemon's log" sanitizer_clean "$TMP/daemon.log"
print_counts
finish
