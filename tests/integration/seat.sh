#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The daemon moves to the CPU where the execs it places run (seat.c): started
# on CPU 1, with a storm of jitter execs it packs onto CPU 0 (the busy one) it
# moves there, counts the move, and keeps its own mask (both CPUs); an exec
# loop pinned to CPU 1 by its user (taskset), which the daemon leaves alone,
# does not draw it there (at realtime priority, beside other users' tasks on
# the CPU the loop chose); a mask set on it later is kept too.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/storm-lib.bash"
require_storm
TRUE=$(type -P true) || skip "no true(1) to exec"
BASH_BIN=$(type -P bash) || skip "no bash"
# the storm's shell and what it runs, under names a rule makes jitter
cp "$BASH_BIN" "$TMP/tsseatsh" && cp "$TRUE" "$TMP/tsseattrue" || skip "cannot copy bash and true to $TMP"
config_jitter tsseat
start_hog 70
check "daemon starts" start_daemon || exit 1
# packing on: a jitter process of the rule is confined to CPU 0, the hog's
spawn KEEPER "$TMP/tsseatsh" -c 'while :; do read -rt 0.05 <> <(:) || :; done'
check "a jitter task is packed onto CPU 0" wait_for 30 affinity_is "$KEEPER" 0 || { finish; exit; }
# processor: field 39 of /proc/PID/stat
on_cpu() { [ "$(awk '{ sub(/^.*\) /, ""); print $37 }' "/proc/$DAEMON_PID/stat")" = "$1" ]; }
moves() { metric turbosched_daemon_moves_total; }
# The counts before, read first: the daemon answers a control request at
# normal priority, where the scheduler may move it to another CPU (one CI
# run found it on CPU 1 before the storm, with no move of its own).
M0=$(moves)
RUNG0=$(metric turbosched_exec_doorbell_total rung)
WOKE0=$(metric turbosched_event_wakeups_total)
# Put it on CPU 1 the way it moves itself: its mask set there and straight
# back; nothing talks to it from here to the storm.
to_cpu1() { taskset -p -c 1 "$DAEMON_PID" >/dev/null && taskset -p -c 0-1 "$DAEMON_PID" >/dev/null && on_cpu 1; }
check "the daemon sits on CPU 1" wait_for 10 to_cpu1
# A shell's fork and exec of true(1), about 1,500 a second here: far above
# SEAT_MIN_EXECS_PER_S (200), for many ticks. The shell is jitter: packed
# onto CPU 0 (the hog's) at its exec, its children fork and exec there.
placed_storm() { "$TMP/tsseatsh" -c "for ((i = 0; i < 6000; i++)); do '$TMP/tsseattrue'; done"; }
t0=$(now_us)
placed_storm
storm_ms=$(( ($(now_us) - t0) / 1000 ))
echo "  6,000 placed execs in $storm_ms ms"
# The daemon moves at SEAT_MIN_EXECS_PER_S (200) or more, counted per tick:
# a machine that forks and execs more slowly than half again that cannot
# show the move (seen: 149 a second on a slow VM, against 1,500 usually)
[ $(( 6000 * 1000 / (storm_ms > 0 ? storm_ms : 1) )) -ge 300 ] ||
    skip "this machine ran the exec loop at $(( 6000 * 1000 / storm_ms )) a second, too slow to show the daemon's move (it needs 300)"
check "it moved ($(moves) moves, $M0 before)" test "$(moves)" -gt "$M0"
# Where it sits after the storm is the kernel's choice again: CPU 0 holds
# the hog, and a wake-up at normal priority (a tick, this test's requests)
# goes to the idle CPU. The move is the evidence.
check "its own mask is both CPUs still" affinity_is "$DAEMON_PID" 0-1
# Each ring of the exec-only socket reads the main socket too: while the
# rings go on, the storm's forks and exits wake the daemon no more (with
# mutes of 5 ms alone they did, about once per five execs).
if [ -n "$RUNG0" ]; then
    rings=$(( $(metric turbosched_exec_doorbell_total rung) - RUNG0 ))
    other=$(( $(metric turbosched_event_wakeups_total) - WOKE0 - rings ))
    check "the storm's forks and exits woke the daemon $other times beside $rings rings (at most 1 in 20)" \
        test "$other" -le $(( rings / 20 ))
else
    echo "(no exec-only socket: this kernel does not filter proc connector events)"
fi
# An exec loop its user pinned to CPU 1: left alone by the daemon, so its
# execs do not say where the daemon sits.
# (the count read first: a request may move it, as above)
M2=$(moves)
to_cpu0() { taskset -p -c 0 "$DAEMON_PID" >/dev/null && taskset -p -c 0-1 "$DAEMON_PID" >/dev/null && on_cpu 0; }
check "the daemon sits on CPU 0" wait_for 10 to_cpu0
taskset -c 1 "$BASH_BIN" -c "for ((i = 0; i < 6000; i++)); do '$TRUE'; done"
check "a pinned exec loop on CPU 1 does not draw it there ($(moves) moves, $M2 before)" test "$(moves)" -eq "$M2"
# A mask set on the daemon after its start is its own from then on: a storm
# outside it neither draws the daemon out nor undoes the mask.
taskset -p -c 1 "$DAEMON_PID" >/dev/null
M1=$(moves)
placed_storm
check "a mask set later stays (CPU 1 alone)" affinity_is "$DAEMON_PID" 1
check "no move out of it ($(moves) moves, $M1 before)" test "$(moves)" -eq "$M1"
check "daemon stops cleanly" stop_daemon
check "no sanitizer report (leaks checked at exit)" sanitizer_clean "$TMP/daemon.log"
finish
