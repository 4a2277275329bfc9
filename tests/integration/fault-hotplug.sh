#!/usr/bin/env bash
# CPU hotplug while jitter is packed (CPU 1 goes offline and back; the trap
# brings it back whatever happens).
#   A. CPU 0 busy, jitter packed onto it; CPU 1 goes offline: with one core
#      left and busy there is nothing to protect, so the plan falls back and
#      the tasks get their originals; CPU 1 back: packed onto CPU 0 again.
#   B. CPU 1 busy, jitter packed onto it; CPU 1 goes offline: the sleeping
#      jitter threads would stay confined to a CPU that is gone (the kernel
#      moves a task only when it wakes), so the daemon must let them go; the
#      plan must not name CPU 1 while it is offline.
# Each part ends with the daemon stopped and every task's original mask.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/storm-lib.bash"
require_storm
CPU1=/sys/devices/system/cpu/cpu1/online
[ -w "$CPU1" ] || skip "CPU 1 cannot be taken offline here (no $CPU1)"
trap 'echo 1 > "$CPU1" 2>/dev/null; cleanup' EXIT
WAIT_STEP=0.2

KEEP="hp$$"
config_jitter "$KEEP"
start_keepers K "$TMP/keep" "$KEEP" 3 2 || exit 1
record_masks "$TMP/original" "$TMP/keep"
expect_mask "$TMP/on0" 0 "$TMP/keep"
expect_mask "$TMP/on1" 1 "$TMP/keep"
offline() { echo 0 > "$CPU1" && FAULTS=$((FAULTS + 1)); }
online() { echo 1 > "$CPU1"; }
is_online() { [ "$(all_cpus)" = "0-1" ]; }
plan() { ctl status | sed -n 's/^Plan: *//p'; }
plan_names_cpu1() { plan | grep -qE 'CPU[s]? [0-9,-]*1'; }
# none_on_cpu1_only: every keeper thread may run on CPU 0
none_on_cpu1_only() {
    local t m
    while read -r t m; do
        m=$(affinity_of "$t")
        [[ $m == 0* ]] || return 1
    done < "$TMP/original"
}
TCHK=$(wc -l < "$TMP/original")

echo "--- A: CPU 0 busy, CPU 1 offline and back"
harness_on_cpu0
start_hog 40
check "A: daemon starts" start_daemon || exit 1
check "A: packed onto CPU 0" wait_for 30 masks_match "$TMP/on0"
check "A: CPU 1 offline" offline
check "A: one busy core left: originals back" wait_for 30 masks_match "$TMP/original"
echo "  plan: $(plan)"
check "A: daemon alive" kill -0 "$DAEMON_PID"
check "A: CPU 1 online" online
check "A: packed onto CPU 0 again" wait_for 30 masks_match "$TMP/on0"
check "A: daemon stops" stop_daemon
check "A: every task has its original mask" masks_report "$TMP/original"
TASKS_CHECKED=$((TASKS_CHECKED + 3 * TCHK))
kill -9 "$HOG"; wait "$HOG" 2>/dev/null

echo "--- B: CPU 1 busy, CPU 1 offline"
taskset -p -c 1 $$ >/dev/null
spawn HOG1 "$LOAD" -c 1 -d 40 -p 10 -n "tshog1$$"
check "B: daemon starts" start_daemon || exit 1
check "B: packed onto CPU 1" wait_for 30 masks_match "$TMP/on1"
check "B: CPU 1 offline" offline
check "B: no jitter thread left on the offline CPU alone" wait_for 30 none_on_cpu1_only
plan_avoids_cpu1() { ! plan_names_cpu1; }
check "B: the plan does not name the offline CPU" plan_avoids_cpu1
echo "  plan: $(plan)"
check "B: daemon alive" kill -0 "$DAEMON_PID"
check "B: CPU 1 online" online
check "B: daemon stops" stop_daemon
check "B: every task has its original mask" masks_report "$TMP/original"
TASKS_CHECKED=$((TASKS_CHECKED + 2 * TCHK))
check "no sanitizer report in the daemon's log" sanitizer_clean "$TMP/daemon.log"
print_counts
finish
