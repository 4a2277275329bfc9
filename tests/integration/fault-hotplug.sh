#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# CPU hotplug while tasks are confined to the CPU that goes away (CPU 1 goes
# offline and back; the trap brings it back whatever happens).
# The kernel keeps a sleeping thread's mask while its only CPU is offline
# (/proc/TID/status still says 1) and sched_getaffinity reports it empty;
# a thread that wakes meanwhile gets the kernel's fallback mask.
#   A. The applier on the real kernel with fixed plans (ts-apply), so that
#      nothing depends on the machine's load: a thread that never wakes and
#      one that does, restored while CPU 1 is offline and after it is back;
#      a thread first packed while CPU 1 is offline keeps CPU 1 in its
#      recorded original.
#   B. The daemon: CPU 1 busy, jitter threads; CPU 1 offline and back. How
#      the daemon plans depends on the load of the whole machine, so this
#      part checks what holds under any plan: no thread is left confined to
#      the offline CPU alone, and after the stop every thread has its
#      original mask. (Whether the plan packed onto CPU 1 is printed.)
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/storm-lib.bash"
require_root
CPU1=/sys/devices/system/cpu/cpu1/online
DRIVER="$TS_BUILD_DIR/ts-apply"
[ -w "$CPU1" ] || skip "CPU 1 cannot be taken offline here (no $CPU1)"
[ -x "$DRIVER" ] || skip "ts-apply driver not built"
[ -x "$STORM" ] || skip "ts-fault-storm not built"
DRV_PID=
trap 'echo 1 > "$CPU1" 2>/dev/null; [ -n "$DRV_PID" ] && kill -9 "$DRV_PID" 2>/dev/null; cleanup' EXIT
WAIT_STEP=0.1

# The state this test depends on, set up rather than assumed: CPU 1 online
# (a run killed half-way leaves it offline), both CPUs for this script and
# everything it starts (a harness may have left it pinned).
if [ "$(cat "$CPU1")" != 1 ]; then
    echo "CPU 1 was offline at the start; bringing it online"
    echo 1 > "$CPU1" || exit 1
fi
[ "$(all_cpus)" = "0-1" ] || skip "written for CPUs 0-1 online (online: $(all_cpus))"
taskset -p -c 0-1 $$ >/dev/null

offline() { echo 0 > "$CPU1" && FAULTS=$((FAULTS + 1)); }
online() { echo 1 > "$CPU1"; }
is_offline() { [ "$(cat "$CPU1")" = 0 ]; }

# --- A: the applier, fixed plans ---------------------------------------------------
start_driver() {
    coproc DRV { exec "$DRIVER" "$TMP/apply-state" 2>>"$TMP/driver.log"; }
    DRV_PID=$DRV_PID
    DRV_IN=${DRV[1]}
    DRV_OUT=${DRV[0]}
}
drv() {
    local reply
    echo "$*" >&"$DRV_IN"
    read -r -t 10 reply <&"$DRV_OUT" || reply="timeout"
    echo "$reply"
}
drv_is() {
    local want=${*: -1} got
    got=$(drv "${@:1:$#-1}")
    [ "$got" = "$want" ] || { echo "  '${*:1:$#-1}' answered '$got', expected '$want'"; return 1; }
}
mask_is() {
    local now
    now=$(affinity_of "$1")
    [ "$now" = "$2" ] || { echo "  tid $1: mask $now, expected $2"; return 1; }
}
not_mask() { ! affinity_is "$1" "$2"; }
# sleeper VAR: a thread that sleeps until it is told, with both CPUs
sleeper() { spawn "$1" taskset -c 0-1 sleep 1000; }

echo "--- A: the applier on the real kernel, fixed plans"
sleeper NEVER            # packed on 1, never wakes, restored while CPU 1 is offline
sleeper NEVER_LATE       # packed on 1, never wakes, restored after CPU 1 is back
sleeper WAKES            # packed on 1, woken while CPU 1 is offline
sleeper LATE             # first packed while CPU 1 is offline
for t in "$NEVER" "$NEVER_LATE" "$WAKES" "$LATE"; do
    wait_for 10 grep -q '^Name:.*sleep' "/proc/$t/status" || { echo "sleeper $t did not start"; exit 1; }
    check "A: tid $t starts with both CPUs" mask_is "$t" 0-1
done
start_driver
for t in "$NEVER" "$NEVER_LATE" "$WAKES"; do
    check "A: tid $t packed onto CPU 1" drv_is pack "$t" 1 "ok 1"
done
check "A: CPU 1 offline" offline
check "A: never woken: the kernel keeps its mask 1" mask_is "$NEVER" 1
check "A: never woken: sched_getaffinity reports it empty" \
    bash -c "! taskset -p $NEVER 2>/dev/null | grep -q ': [1-9a-f]'"
# SIGSTOP, SIGCONT: the thread runs once, and the kernel moves it
kill -STOP "$WAKES"; kill -CONT "$WAKES"
check "A: woken: the kernel gave it its fallback mask" wait_for 10 not_mask "$WAKES" 1
check "A: a check finds only the woken one changed" drv_is verify "ok 1"
check "A: woken: its original back" mask_is "$WAKES" 0-1
check "A: never woken: still recorded as ours" drv_is find "$NEVER" "ok original 0-1 set 1"
check "A: never woken: restored while CPU 1 is offline" drv_is restore "$NEVER" "ok 1"
check "A: never woken: the whole original, CPU 1 too" mask_is "$NEVER" 0-1
check "A: first packed while CPU 1 is offline" drv_is pack "$LATE" 0 "ok 1"
check "A: its original keeps the offline CPU" drv_is find "$LATE" "ok original 0-1 set 0"
check "A: CPU 1 online" online
check "A: restore all after CPU 1 is back" drv_is restore-all "ok 2"
for t in "$NEVER" "$NEVER_LATE" "$WAKES" "$LATE"; do
    TASKS_CHECKED=$((TASKS_CHECKED + 1))
    check "A: tid $t has its original mask" mask_is "$t" 0-1
done
echo quit >&"$DRV_IN"; wait "$DRV_PID" 2>/dev/null; DRV_PID=
check "no sanitizer report in the driver's log" sanitizer_clean "$TMP/driver.log"

# --- B: the daemon -------------------------------------------------------------------
echo "--- B: the daemon, CPU 1 busy, CPU 1 offline and back"
KEEP="hp$$"
config_jitter "$KEEP"
start_keepers K "$TMP/keep" "$KEEP" 3 2 taskset -c 0-1 || exit 1
record_masks "$TMP/original" "$TMP/keep"
expect_mask "$TMP/on1" 1 "$TMP/keep"
TCHK=$(wc -l < "$TMP/original")
# none_on_cpu1_only: every keeper thread may run on CPU 0
none_on_cpu1_only() {
    local t m
    while read -r t m; do
        m=$(affinity_of "$t")
        [[ $m == 0* ]] || return 1
    done < "$TMP/original"
}
# busy, with room left for the jitter (a full CPU has no spare capacity)
spawn HOG1 "$LOAD" -c 1 -d 40 -p 10 -n "tshog1$$"
check "B: daemon starts" start_daemon || exit 1
if wait_for 20 masks_match "$TMP/on1"; then
    echo "  the plan packed the jitter onto CPU 1"
else
    echo "  the plan did not pack onto CPU 1 within 20 s (the machine's load decides): $(ctl status | sed -n 's/^Plan: *//p')"
fi
check "B: CPU 1 offline" offline
check "B: no jitter thread left on the offline CPU alone" wait_for 30 none_on_cpu1_only
check "B: daemon alive" kill -0 "$DAEMON_PID"
check "B: CPU 1 online" online
check "B: daemon stops" stop_daemon
check "B: every task has its original mask" masks_report "$TMP/original"
TASKS_CHECKED=$((TASKS_CHECKED + TCHK))
check "no sanitizer report in the daemon's log" sanitizer_clean "$TMP/daemon.log"
print_counts
finish
