#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A storm of short jitter tasks with threads against the sanitizer build of
# the daemon: STORM_TASKS (default 10,000; `make soak` runs 100,000), each
# creating STORM_THREADS threads, from 4 workers, while jitter is packed onto
# the busy CPU 0. Afterwards: the daemon is alive, its table equals the live
# TIDs in /proc, its RSS is back to what it was after a warm-up storm and
# its table memory within that baseline's high-water marks, every
# long-lived task it packed gets its original mask back when it stops, and
# ASan/LSan/UBSan report nothing (leaks are checked at exit).
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/storm-lib.bash"
require_storm
TASKS=${STORM_TASKS:-10000}
THREADS=${STORM_THREADS:-2}
WAIT_STEP=0.2
# A small quarantine, so that freed memory is given back and RSS means
# something under ASan (its default keeps 256 MiB of freed blocks).
export ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=4:thread_local_quarantine_size_kb=64"

KEEP="sk$$"
SHORT="ss$$"
write_config <<CONF
[rule long-lived]
comm = ${KEEP}*
class = jitter

[rule storm]
comm = ${SHORT}*
class = jitter
CONF

start_keepers K "$TMP/keep" "$KEEP" 4 2 || exit 1
record_masks "$TMP/original" "$TMP/keep"
expect_mask "$TMP/packed" 0 "$TMP/keep"
harness_on_cpu0
start_hog 40
check "daemon starts" start_daemon || exit 1
# policy_is N: the daemon's scheduling policy (/proc/PID/stat field 41; 1 is
# SCHED_FIFO). It waits for events at SCHED_FIFO and leaves it only to do
# other work (a tick, a request), so it is found there within moments.
policy_is() { [ "$(awk '{ sub(/^.*\) /, ""); print $39 }' "/proc/$DAEMON_PID/stat")" = "$1" ]; }
check "the daemon waits for process events at SCHED_FIFO" wait_for 10 policy_is 1
check "the log says so" grep -q "handling process events at SCHED_FIFO priority 1" "$TMP/daemon.log"
check "status says so" bash -c "'$CTL' --socket '$TMP/control' status | grep -q '^Event loop: *SCHED_FIFO 1, woken by '"
check "status shows the deep idle measurement or why there is none" \
    bash -c "'$CTL' --socket '$TMP/control' status | grep -q '^Deep idle: '"
check "long-lived tasks packed onto CPU 0" wait_for 30 masks_match "$TMP/packed"

# table_reconciled: the daemon tracks exactly as many threads as /proc shows
# (counted twice around the daemon's reply, so a task born in between on a
# busy machine only delays the match)
table_reconciled() {
    local a b n
    a=$(live_tids | wc -l)
    n=$(status_num tracked)
    b=$(live_tids | wc -l)
    [ "$a" = "$b" ] && [ "$n" = "$a" ]
}
storm() {   # storm N: run N short tasks to the end; "storm: ..." on stdout
    "$STORM" -n "$1" -w 4 -j 4 -t "$THREADS" -c "$SHORT"
}

storm 2000 > "$TMP/warmup.out" || { fail "warm-up storm"; finish; exit; }
check "after the warm-up: table reconciled" wait_for 60 table_reconciled
RSS0=$(daemon_rss_kib)
MEM0=$(status_num memory_bytes)
OVF0=$(status_num overflows)
echo "baseline after a warm-up of 2000 tasks: RSS ${RSS0} KiB, table ${MEM0} bytes"

t0=$(now_us)
storm "$TASKS" > "$TMP/storm.out"
rc=$?
ms=$(( ($(now_us) - t0) / 1000 ))
FAULTS=$((FAULTS + 1))
echo "  $(cat "$TMP/storm.out") (${ms} ms)"
check "storm of $TASKS tasks ran clean" test "$rc" -eq 0
check "daemon alive" kill -0 "$DAEMON_PID"
check "after the storm: table reconciled with /proc" wait_for 60 table_reconciled
TASKS_CHECKED=$((TASKS_CHECKED + TASKS * (THREADS + 1)))
RSS1=$(daemon_rss_kib)
MEM1=$(status_num memory_bytes)
echo "after the storm: RSS ${RSS1} KiB, table ${MEM1} bytes; socket overflows $(( $(status_num overflows) - OVF0 )) (each one rescans /proc)"
# back to the baseline: within 10% + 1 MiB of it (allocator pools, the log's stdio buffer)
check "RSS back to its baseline" test "$RSS1" -le $(( RSS0 + RSS0 / 10 + 1024 ))
# The table keeps high-water marks (slot chunks, index, free stack): if the
# storm's peak of live threads beat the warm-up's, the index or the free
# stack doubles once. A slot kept per finished thread would add about
# 90 bytes x $((TASKS * (THREADS + 1))) threads, far beyond one doubling.
check "table memory bounded by its baseline's high-water marks (${MEM1} <= 2 x ${MEM0})" test "$MEM1" -le $(( 2 * MEM0 ))
check "long-lived tasks still packed" wait_for 30 masks_match "$TMP/packed"

check "still at SCHED_FIFO between events after the storm" wait_for 10 policy_is 1
# Where the kernel filters events per socket (6.6+), execs ring the daemon's
# exec-only socket, which wakes it (several execs queued ring once).
rung=$(ctl metrics | sed -n 's/^turbosched_exec_doorbell_total{what="rung"} //p')
if [ -n "$rung" ]; then
    check "the exec-only socket rang ($rung times)" test "${rung%.*}" -ge 1
else
    echo "(no exec-only socket: this kernel does not filter proc connector events)"
fi
check "daemon stops cleanly" stop_daemon
check "every long-lived task has its original mask" masks_report "$TMP/original"
check "no sanitizer report (leaks checked at exit)" sanitizer_clean "$TMP/daemon.log"
print_counts
finish
