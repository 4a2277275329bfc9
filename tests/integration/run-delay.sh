#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The run-delay guard on the real kernel: a hog on CPU 0 and rule-matched
# jitter packed onto it, with no jitter slice, so that each wake-up waits
# behind the hog (about 0.1-0.3 ms measured here). With a limit far above
# that (1s), the plan stays packed and explain, dump and status show each
# thread's measured delay. With a limit far below it (20us), the plan falls
# back within seconds: the log, the plan's reason and the metrics say why,
# and every jitter thread has its own mask back. On this 2-CPU machine CPU 1
# is idle, so there is no busy core to spill to; spilling is covered by
# test-engine and test-packer.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/storm-lib.bash"
require_storm
[ "$(nproc)" -ge 2 ] || skip "needs 2 online CPUs"
ALL=$(all_cpus)
[ "$ALL" = "0-1" ] || skip "written for a 2-CPU machine (online: $ALL)"
[ -r /proc/self/schedstat ] || skip "no /proc/PID/schedstat on this kernel (CONFIG_SCHED_INFO)"

harness_on_cpu0
WAIT_STEP=0.2
NAME="tsrd$$"
config_limit() {
    PACKING_EXTRA="jitter_slice = off
max_run_delay = $1" write_config <<CONF

[rule test-jitter]
comm = ${NAME}*
class = jitter
CONF
}

spawn HOG "$LOAD" -c 0 -d "$HOG_DUTY" -p 10 -n "tshog$$"
# Periods prime to the hog's 10 ms: with 20 and 10 ms the jitter could fall
# into step with the hog's sleeps and wait almost nothing for a minute.
spawn J1 taskset -c 0-1 "$LOAD" -d 2 -p 13 -n "${NAME}a"
spawn J2 taskset -c 0-1 "$LOAD" -d 2 -p 7 -n "${NAME}b"
jitter=("$J1" "$J2")
check "jitter started" wait_for 10 jitter_named || { finish; exit 1; }

config_limit 1s
check "daemon starts" start_daemon || { finish; exit 1; }
check "jitter packed on the busy CPU 0" wait_for 60 jitter_on 0 || { finish; exit 1; }
explained=
explain_measured() {
    explained=$(ctl explain "$J1")
    grep -q "run delay *[0-9.]* ms per wake-up over its last [0-9]* wake-ups (limit 1000.00 ms)" <<<"$explained"
}
check "explain shows the thread's run delay" wait_for 20 explain_measured || echo "$explained"
dump_shows() { ctl --json dump | grep -q '"run_delay_us": *[0-9]'; }
check "dump shows it" wait_for 20 dump_shows
status_shown() { ctl status | grep -q "^Run delay: *p90 [0-9.]* ms per wake-up over [1-9][0-9]* wake-ups, limit 1000.00 ms"; }
check "status shows the guard" wait_for 20 status_shown || ctl status
# (the plan itself may fall back for a moment for its own reasons: CPU 0
# runs the hog, the harness and the sanitizer build of the daemon)
check "a 1 s limit: the guard never acted" bash -c "! grep -q 'run delay: ' '$TMP/daemon.log'"
histogram_filled() { [ "$(metric turbosched_run_delay_seconds_count)" -gt 0 ]; }
check "the delay histogram has samples" histogram_filled

# A limit far below what the jitter waits behind the hog: fall back.
config_limit 20us
kill -HUP "$DAEMON_PID"
fell_back() { grep -q "run delay: fell back: jitter waited [0-9.]* ms per wake-up and no busy core is left" "$TMP/daemon.log"; }
check "a 20 us limit: the plan falls back and the log says why" wait_for 120 fell_back
check "every jitter thread has its own mask back" wait_for 20 jitter_on "$ALL"
plan_says() { ctl status | grep -q "^Plan: *unrestricted: fallback: jitter waited too long to run (fell back: "; }
check "the plan's reason says why" wait_for 10 plan_says || ctl status
fallback_counted() { [ "$(metric turbosched_run_delay_actions_total fallback)" -ge 1 ]; }
check "the fallback is counted" fallback_counted
check "the hog was never confined" affinity_is "$HOG" 0

check "daemon stops" stop_daemon TERM
check "every jitter mask restored" jitter_on "$ALL"
check "no error in the daemon's log" bash -c "! grep -q '^<[0-3]>' '$TMP/daemon.log'"
finish
