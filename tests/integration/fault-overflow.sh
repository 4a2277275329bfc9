#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Lost events against the real daemon: with the smallest receive buffer
# (netlink_rcvbuf = 4K) a storm of forks, threads and exits overflows the
# proc connector socket. While it runs, long-lived jitter processes start and
# grow a thread and a child each, so that their events are at risk too.
# Afterwards:
#   - the overflow is counted (metrics and status) and /proc was rescanned;
#   - once the storm is over, the TIDs in `turbosched-ctl --json dump` are the
#     machine's live TIDs, no more and no fewer (every task is in the dump:
#     default_class = intensive, which the daemon leaves alone);
#   - every thread and child of the long-lived processes is tracked and
#     classified jitter by its rule;
#   - the daemon stops cleanly and ASan/LSan/UBSan report nothing.
# Unlike procmon.sh (tests/helpers/ts-procwatch), this goes through the
# daemon's own hooks, which add a forked child lazily (from its creator,
# without reading /proc): the path a stale or lost event would corrupt.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/storm-lib.bash"
require_storm
WAIT_STEP=0.2
T0=$(now_us)   # with the lock held
ms_since() { echo $(( ($(now_us) - $1) / 1000 )); }

KEEP="ok$$"
SHORT="os$$"
write_config <<CONF
[daemon]
# the minimum (daemon/model/config.c): a few events fill it
netlink_rcvbuf = 4K

[classify]
# every task in the dump, none of them acted upon
default_class = intensive

[rule long-lived]
comm = ${KEEP}*
class = jitter
CONF

check "daemon starts with netlink_rcvbuf = 4K" start_daemon || exit 1
OVF0=$(metric turbosched_netlink_overflows_total)
RSC0=$(metric turbosched_rescans_total)
echo "at start: overflows $OVF0, rescans $RSC0"

metric_above() { [ "$(metric "$1")" -gt "$2" ] 2>/dev/null; }

spawn STORM_PID "$STORM" -n 0 -w 4 -j 4 -t 2 -c "$SHORT" > "$TMP/storm.out"
FAULTS=$((FAULTS + 1))
check "the storm overflows the socket" wait_for 30 metric_above turbosched_netlink_overflows_total "$OVF0"

# Long-lived processes born during the storm, each then adding a thread
# (SIGUSR1) and a child process (SIGUSR2) while events are still being lost.
start_keepers KEEPERS "$TMP/keep" "$KEEP" 3 2 || { fail "long-lived processes start"; finish; exit; }
keepers() { cut -d' ' -f1 "$TMP/keep"; }
for p in $(keepers); do kill -USR1 "$p"; kill -USR2 "$p"; done
# 3 keepers x (main + 2 threads + 1 new thread + 1 child)
offspring_up() { [ "$(family $(keepers) | wc -l)" -eq 15 ]; }
check "long-lived processes grew a thread and a child" wait_for 30 offspring_up
check "the socket overflows again after they did" \
    wait_for 30 metric_above turbosched_netlink_overflows_total "$(metric turbosched_netlink_overflows_total)"

echo "  storm ran $(ms_since "$T0") ms into the test"
stop_storm "$STORM_PID"
rc=$?
echo "  $(cat "$TMP/storm.out")"
check "storm ran clean" test "$rc" -eq 0
check "daemon alive" kill -0 "$DAEMON_PID"
OVF=$(metric turbosched_netlink_overflows_total)
RSC=$(metric turbosched_rescans_total)
check "overflows counted in metrics ($OVF)" test "$OVF" -gt 0
check "overflows counted in status" test "$(status_num overflows)" -ge "$OVF"
check "/proc rescanned after an overflow ($RSC rescans, $RSC0 at start)" test "$RSC" -gt "$RSC0"
check "the overflow is logged" grep -q "proc connector overflowed, events lost: rescanning /proc" "$TMP/daemon.log"

# dump_tids: the TIDs in `ctl --json dump`, sorted, without the TID of the
# turbosched-ctl that asked (live while the daemon answered it).
dump_tids() {
    "$CTL" --socket "$TMP/control" --json dump > "$TMP/dump" 2>/dev/null &
    local ctl_pid=$!
    wait "$ctl_pid" || return 1
    sed -n 's/^ *"tid": \([0-9]*\),\?$/\1/p' "$TMP/dump" | grep -vx "$ctl_pid" | sort -u
}
# table_matches_live: what was live before and after the dump is in it, and
# nothing is in it that was live at neither time. Tasks born or dead during
# the read are the only slack; with wait_for, a miss just reads again.
COMPARED=0
READS=0
table_matches_live() {
    READS=$((READS + 1))
    live_tids > "$TMP/live1"
    dump_tids > "$TMP/table" || return 1
    live_tids > "$TMP/live2"
    comm -12 "$TMP/live1" "$TMP/live2" > "$TMP/live"
    comm -23 "$TMP/live" "$TMP/table" > "$TMP/missing"
    sort -u "$TMP/live1" "$TMP/live2" | comm -13 - "$TMP/table" > "$TMP/extra"
    COMPARED=$(wc -l < "$TMP/live")
    [ ! -s "$TMP/missing" ] && [ ! -s "$TMP/extra" ] && return 0
    echo "read $READS: missing $(tr '\n' ' ' < "$TMP/missing")extra $(dump_comms $(cat "$TMP/extra"))" >> "$TMP/reads"
    return 1
}
# dump_comms TID...: "TID:COMM:CLASS" of each TID, as the last dump has it
dump_comms() {
    awk -v want=" $* " '
        /"tid":/ { t = $2; gsub(/[^0-9]/, "", t) }
        /"comm":/ { c = $0; sub(/^[^:]*: *"/, "", c); sub(/",?$/, "", c) }
        /"class":/ { k = $2; gsub(/[",]/, "", k); if (index(want, " " t " ")) printf "%s:%s:%s ", t, c, k }' "$TMP/dump"
}
report_diff() {
    local t
    echo "  $(wc -l < "$TMP/missing") live TIDs not in the dump, $(wc -l < "$TMP/extra") in the dump not live (first 20 of each):"
    for t in $(cat "$TMP/missing"); do echo "  missing: tid $t ($(cat /proc/*/task/"$t"/comm 2>/dev/null | head -1))"; done | head -20
    echo "  extra (tid:comm:class): $(dump_comms $(head -20 "$TMP/extra"))"
    grep -E "overflowed|rescan" "$TMP/daemon.log" | tail -5
}
NAME="after the storm: the dump's TIDs are the live TIDs"
T1=$(now_us)
if wait_for 30 table_matches_live; then
    echo "  equal at read $READS, $(ms_since "$T1") ms after the storm"
    [ -s "$TMP/reads" ] && head -5 "$TMP/reads" | cut -c1-300 | sed 's/^/    /'
    pass "$NAME"
    TASKS_CHECKED=$((TASKS_CHECKED + COMPARED))
else
    fail "$NAME"
    MISMATCHES=$((MISMATCHES + $(cat "$TMP/missing" "$TMP/extra" | wc -l)))
    report_diff
fi

# keepers_jitter: every TID of the long-lived processes and their children
# is in the dump, classified jitter by the rule
family $(keepers) | sort -u > "$TMP/keep-tids"
KEPT=$(wc -l < "$TMP/keep-tids")
keepers_jitter() {
    dump_tasks | awk '$2 == "jitter" { print $1 }' | sort -u > "$TMP/jitter"
    [ -z "$(comm -23 "$TMP/keep-tids" "$TMP/jitter")" ]
}
NAME="the $KEPT threads of the long-lived processes are tracked as jitter"
if wait_for 20 keepers_jitter; then
    pass "$NAME"
    TASKS_CHECKED=$((TASKS_CHECKED + KEPT))
else
    fail "$NAME"
    MISMATCHES=$((MISMATCHES + $(comm -23 "$TMP/keep-tids" "$TMP/jitter" | wc -l)))
    for t in $(comm -23 "$TMP/keep-tids" "$TMP/jitter"); do
        echo "  not tracked as jitter: tid $t, comm $(cat /proc/*/task/"$t"/comm 2>/dev/null | head -1); in the dump: $(dump_comms "$t")"
    done | head -20
fi

check "daemon stops cleanly" stop_daemon
check "no sanitizer report (leaks checked at exit)" sanitizer_clean "$TMP/daemon.log"
echo "overflows $OVF, rescans $RSC (at start $RSC0), live TIDs compared $COMPARED, long-lived threads $KEPT; $(ms_since "$T0") ms"
print_counts
finish
