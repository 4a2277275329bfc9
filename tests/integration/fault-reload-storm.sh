#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Reload storms while tasks churn: two groups of long-lived tasks, A and B,
# and a churn of short tasks named like A. Config A makes group A jitter,
# config B makes group B jitter, a bad config (an unknown key in a rule that
# would make both jitter) must change nothing. CPU 0 is busy, so jitter is
# packed onto it.
#   1. paced: hundreds of reloads, alternately by SIGHUP and `ctl reload`,
#      cycling A, bad, B, bad. After each good one the masks follow the new
#      config; after each bad one they are exactly those of the config in
#      force, at once (never half-applied) and the reload is reported failed;
#   2. burst: hundreds of SIGHUPs with the config file rewritten under them,
#      ending on A: the daemon settles on A;
# then SIGTERM: every task has its original mask; no sanitizer report.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/storm-lib.bash"
require_storm
WAIT_STEP=0.2   # polls cost CPU on the CPU that must stay idle
PACED=${PACED:-120}
BURST=${BURST:-300}

A="ra$$"
B="rb$$"
# Each good reload starts the plan afresh (hold time, then one change); after
# that it stays put: a moment of overload on CPU 0 (the harness and the
# sanitizer build reloading back to back share it with the hog) must not
# unpack the group between two checks. Load-driven changes are other tests'.
steady_plan() { sed -i 's/^min_change_interval = .*/min_change_interval = 60min/' "$TMP/turbosched.conf"; }
conf_a() { write_config <<CONF
[rule group-a]
comm = ${A}*
class = jitter
CONF
steady_plan
}
conf_b() { write_config <<CONF
[rule group-b]
comm = ${B}*
class = jitter
CONF
steady_plan
}
conf_bad() { write_config <<CONF
[rule both]
comm = ${A}* ${B}*
clas = jitter
CONF
steady_plan
}

start_keepers KA "$TMP/keep-a" "$A" 3 2 || exit 1
start_keepers KB "$TMP/keep-b" "$B" 3 2 || exit 1
start_keepers KP "$TMP/keep-pinned" "$A" 1 1 taskset -c 1 || exit 1
record_masks "$TMP/original" "$TMP/keep-a" "$TMP/keep-b" "$TMP/keep-pinned"
# under_config JITTERFILE OUT: the jitter group's threads on CPU 0, every
# other task (the pinned one too) as it was
under_config() {
    awk 'NR == FNR { for (i = 1; i <= NF; i++) j[$i] = 1; next }
         { print $1, ($1 in j) ? "0" : $2 }' "$1" "$TMP/original" > "$2"
}
under_config "$TMP/keep-a" "$TMP/under-a"
under_config "$TMP/keep-b" "$TMP/under-b"
harness_on_cpu0
start_hog 40

conf_a
check "daemon starts" start_daemon || exit 1
check "group A packed onto CPU 0" wait_for 30 masks_match "$TMP/under-a"
spawn CHURN "$STORM" -n 0 -w 1 -j 1 -t 2 -p 100000 -c "${A}c" > "$TMP/churn.out"

# reload_now GOOD: one reload, by SIGHUP or over the socket by turns;
# fails when the daemon's verdict is not GOOD (1: ok, 0: failed).
reload_now() {
    local good=$1 before after out
    FAULTS=$((FAULTS + 1))
    if [ $((FAULTS % 2)) -eq 0 ]; then
        if out=$(ctl reload 2>&1); then [ "$good" = 1 ]; else
            [ "$good" = 0 ] && [[ $out == *"unknown key 'clas'"* ]] || { echo "  ctl reload: $out"; return 1; }
        fi
        return
    fi
    # counted from the daemon's log: polling `ctl metrics` (a sanitizer
    # build) would itself make the idle CPU busy and the plan fall back
    local pat='configuration reloaded'
    [ "$good" = 1 ] || pat='reload failed'
    before=$(grep -c "$pat" "$TMP/daemon.log")
    kill -HUP "$DAEMON_PID"
    counted() { after=$(grep -c "$pat" "$TMP/daemon.log"); [ "$after" -gt "$before" ]; }
    wait_for 20 counted || { echo "  SIGHUP: no '$pat' in the log"; return 1; }
}

echo "--- paced: $PACED reloads (A, bad, B, bad, ...)"
bad_steps=0
mismatch() {
    bad_steps=$((bad_steps + 1))
    echo "  $1 (config $in_force in force): $(ctl status | grep '^Plan:')"
    masks_report "$TMP/under-$in_force"
}
in_force=a
for i in $(seq 0 $((PACED - 1))); do
    case $((i % 4)) in
        0) conf_b; reload_now 1 || { fail "reload $i (B) accepted"; break; }; in_force=b ;;
        2) conf_a; reload_now 1 || { fail "reload $i (A) accepted"; break; }; in_force=a ;;
        *) conf_bad; reload_now 0 || { fail "reload $i (bad) refused"; break; }
           # nothing may have moved: the masks are those of the config in force now
           masks_match "$TMP/under-$in_force" || mismatch "after bad reload $i" ;;
    esac
    if [ $((i % 4)) -eq 0 ] || [ $((i % 4)) -eq 2 ]; then
        wait_for 20 masks_match "$TMP/under-$in_force" || mismatch "20 s after good reload $i"
    fi
    TASKS_CHECKED=$((TASKS_CHECKED + $(wc -l < "$TMP/original")))
done
check "paced: masks followed every good config, no bad one moved anything" test "$bad_steps" -eq 0
check "paced: daemon alive" kill -0 "$DAEMON_PID"

echo "--- burst: $BURST SIGHUPs, the config rewritten every 10"
for i in $(seq 1 "$BURST"); do
    if [ $((i % 10)) -eq 0 ]; then
        case $(((i / 10) % 3)) in 0) conf_a ;; 1) conf_bad ;; 2) conf_b ;; esac
    fi
    kill -HUP "$DAEMON_PID"
    FAULTS=$((FAULTS + 1))
done
conf_a
kill -HUP "$DAEMON_PID"
answering() { ctl status >/dev/null; }
check "burst: daemon alive and answering" wait_for 30 answering
check "burst: settled on config A" wait_for 30 masks_match "$TMP/under-a"
masks_report "$TMP/under-a"
echo "  reloads counted: $(metric turbosched_reloads_total ok) ok, $(metric turbosched_reloads_total failed) failed"

kill -TERM "$CHURN"; wait "$CHURN"
check "churn ran clean" test $? -eq 0
check "daemon stops cleanly" stop_daemon
check "every task has its original mask" masks_report "$TMP/original"
check "no sanitizer report in the daemon's log" sanitizer_clean "$TMP/daemon.log"
print_counts
finish
