#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# SIGTERM in the middle of a fork storm: jitter tasks packed onto the busy
# CPU 0, a storm of short jitter processes (with threads) running, some of
# them moved into the daemon's cpuset group by a cgroup-mode rule; SIGTERM.
# Each round: the daemon exits 0 within the unit's stop timeout; every
# long-lived task it packed has its original mask back, a task the user
# pinned is untouched; its cpuset group and its state file are gone; no
# sanitizer report.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/storm-lib.bash"
require_storm
ROUNDS=${ROUNDS:-3}

KEEP="fk$$"      # long-lived jitter, packed per thread
SHORT="fs$$"     # the storm's short jitter processes
GROUP_MODE=no
[ -f "$CPUSET/cpuset.cpus" ] && GROUP_MODE=yes
GROUP="$CPUSET/turbosched-test-$$"
write_config <<CONF
[rule long-lived]
comm = ${KEEP}*
class = jitter

[rule storm]
comm = ${SHORT}*
class = jitter
cgroup_mode = $GROUP_MODE
CONF
[ "$GROUP_MODE" = yes ] || echo "no cgroup v1 cpuset hierarchy: the storm is packed per thread, no group to check"
remove_group() {   # after a failed check, so that nothing is left behind
    [ -d "$GROUP" ] || return 0
    local p
    while read -r p; do echo "$p" > "$CPUSET/tasks" 2>/dev/null; done < "$GROUP/tasks"
    rmdir "$GROUP" 2>/dev/null
}
trap 'remove_group; cleanup' EXIT

TIMEOUT_S=$(stop_timeout_s)
echo "stop timeout of the unit: ${TIMEOUT_S} s"

# Long-lived tasks before the daemon runs: their masks now are the originals.
start_keepers K1 "$TMP/keep" "$KEEP" 4 2 || exit 1
start_keepers K2 "$TMP/keep-pinned" "$KEEP" 1 1 taskset -c 1 || exit 1
record_masks "$TMP/original" "$TMP/keep" "$TMP/keep-pinned"
expect_mask "$TMP/packed" 0 "$TMP/keep"
echo "long-lived: $(wc -l < "$TMP/original") threads, $(wc -w < "$TMP/keep-pinned") of them pinned to CPU 1 by the user"
start_hog

fork_events() { status_num fork; }
storm_underway() { local n; n=$(fork_events); [ -n "$n" ] && [ "$n" -ge $(( FORKS0 + 300 )) ]; }
# cgroupfs files report size 0: read a line instead of testing -s
group_populated() { [ "$GROUP_MODE" = no ] || { local t; read -r t < "$GROUP/tasks" && [ -n "$t" ]; } 2>/dev/null; }

for round in $(seq "$ROUNDS"); do
    echo "--- round $round"
    check "round $round: daemon starts" start_daemon || break
    check "round $round: long-lived tasks packed onto CPU 0" wait_for 30 masks_match "$TMP/packed"
    FORKS0=$(fork_events)
    spawn STORM_PID "$STORM" -n 0 -w 4 -j 4 -t 2 -c "$SHORT" > "$TMP/storm.out"
    check "round $round: storm underway (fork events seen)" wait_for 30 storm_underway
    check "round $round: storm tasks in the daemon's cpuset group" wait_for 30 group_populated

    t0=$(now_us)
    kill -TERM "$DAEMON_PID"
    FAULTS=$((FAULTS + 1))
    # the timeout is systemd's; the wait here is only longer so a hang shows
    exited() { ! kill -0 "$DAEMON_PID" 2>/dev/null; }
    wait_for $((TIMEOUT_S * 2)) exited
    t1=$(now_us)
    if kill -0 "$DAEMON_PID" 2>/dev/null; then
        fail "round $round: daemon still running after $((TIMEOUT_S * 2)) s"
        kill -KILL "$DAEMON_PID"
    fi
    wait "$DAEMON_PID"
    rc=$?
    DAEMON_PID=
    ms=$(( (t1 - t0) / 1000 ))
    echo "  exit after SIGTERM: ${ms} ms (status $rc)"
    check "round $round: exit status 0" test "$rc" -eq 0
    check "round $round: exited within TimeoutStopSec=${TIMEOUT_S}s" test "$ms" -le $((TIMEOUT_S * 1000))
    check "round $round: every long-lived task has its original mask" masks_report "$TMP/original"
    check "round $round: the cpuset group is gone" test ! -d "$GROUP"
    check "round $round: state file removed" test ! -e "$TMP/state"
    remove_group

    stop_storm "$STORM_PID"
    rc=$?
    echo "  $(cat "$TMP/storm.out")"
    check "round $round: the storm ran clean" test "$rc" -eq 0
done
check "no sanitizer report in the daemon's log" sanitizer_clean "$TMP/daemon.log"
print_counts
finish
