#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Pack only when it pays, on the real kernel: with a frequency table in
# [capacity] the plan is weighed by the benefit model. On this 2-CPU machine
# (two cores of one thread each, a hog on CPU 0) packed jitter can only
# time-slice with the hog, so packing is never the choice. One jitter task
# wakes CPU 1 whatever is done: nothing to gain, no restriction ("packing
# would not pay"), the jitter keeps its own mask. A second one would land
# beside the hog whenever the first holds CPU 1: isolating both on CPU 1
# keeps them off the hog, and the plan says so. Reloaded without a table,
# the same load is packed by the thresholds, and the daemon says so, naming
# the sources it looked for to probe with (none on this VM). The
# model's choices on larger chips are test-packer's and test-benefit's.
. "$(dirname "$0")/lib.bash"
require_root
ALL=$(all_cpus)
[ "$ALL" = "0-1" ] || skip "written for a 2-CPU machine (online: $ALL)"

harness_on_cpu0
NAME="tsbn$$"
# behaviour = no: only the test's own tasks are jitter, whatever else runs here
config_table() {
    write_config <<CONF
behaviour = no

[capacity]
$1

[rule test-jitter]
comm = ${NAME}*
class = jitter
CONF
}

spawn HOG "$LOAD" -c 0 -d "$HOG_DUTY" -p 10 -n "tshog$$"
spawn J1 taskset -c 0-1 "$LOAD" -d 2 -p 20 -n "${NAME}a"
jitter=("$J1")
check "jitter started" wait_for 10 jitter_named || { finish; exit 1; }
classified() { local p; for p in "${jitter[@]}"; do ctl --json explain "$p" 2>/dev/null | grep -q '"class": *"jitter"' || return 1; done; }

config_table "active1 = 4GHz
active2 = 3GHz"
check "daemon starts with a frequency table" start_daemon || { finish; exit 1; }
check "it says the plans are weighed" grep -q "benefit: frequency table for up to 2 active cores" "$TMP/daemon.log"
check "jitter classified" wait_for 20 classified
out=
status_says() {
    out=$(ctl status)
    grep -q "^Plan: *$1" <<<"$out" && grep -q "^Benefit: *$2" <<<"$out"
}
check "one jitter task: packing would not pay, and status gives the estimate" \
    wait_for 30 status_says "unrestricted: fallback: packing would not pay: none: " "none: " || echo "$out"
json_says() { ctl --json status | grep -q "\"plan\": *\"$1\""; }
check "status --json names the chosen plan (none)" json_says none
table_probe() { ctl status | grep -q "^Probe: *off: the frequency table decides"; }
check "status says the table decides, not probes" table_probe || ctl status
check "jitter keeps its own mask" jitter_on "$ALL"
check "no plan was applied" bash -c "! grep -qE 'plan: (packed|isolated)' '$TMP/daemon.log'"

spawn J2 taskset -c 0-1 "$LOAD" -d 2 -p 10 -n "${NAME}b"
jitter=("$J1" "$J2")
check "second jitter task classified" wait_for 20 classified
check "two jitter tasks: both isolated on the idle CPU 1" \
    wait_for 30 status_says "jitter tasks on CPUs 1: isolated on idle core 1 (CPU 1): isolate on 1 core: " "isolate on 1 core: " ||
    echo "$out"
check "status --json names the chosen plan (isolate)" json_says isolate
check "jitter confined to CPU 1" wait_for 20 jitter_on 1
check "the hog was never confined" affinity_is "$HOG" 0

config_table ""
kill -HUP "$DAEMON_PID"
# where the CPU publishes its own table (an Intel machine with the msr
# module), no reload is without one
reload_said() { grep -qE "benefit: (no frequency table|frequency table from)" "$TMP/daemon.log"; }
if wait_for 20 reload_said && grep -q "benefit: frequency table from" "$TMP/daemon.log"; then
    check "daemon stops" stop_daemon TERM
    check "every jitter mask restored" jitter_on "$ALL"
    finish || exit 1
    skip "the reload without a table: this CPU publishes its own frequency table"
fi
# Without a table the daemon probes where it can measure the busy cores'
# frequency (APERF/MPERF or cpufreq); this VM has neither, and says so.
if grep -q "benefit: no frequency table (.*): learning which plan pays by probes" "$TMP/daemon.log"; then
    probe_status() { ctl status | grep -q "^Probe: *\(idle\|running\|learned\) "; }
    check "status states the probe" wait_for 20 probe_status || ctl status
    check "daemon stops" stop_daemon TERM
    check "every jitter mask restored" jitter_on "$ALL"
    finish || exit 1
    skip "the reload without a table: this machine's busy-core frequency can be measured, so it probes"
fi
said_thresholds() { grep -q "benefit: no frequency table (\[capacity\] active<N> keys; turbo ratios: .*) and no measurable frequency to probe with (APERF/MPERF: .*/dev/cpu/[0-9]*/msr: .*; cpufreq: .*/cpufreq/scaling_cur_freq: .*), packing by the thresholds alone" "$TMP/daemon.log"; }
check "reloaded without a table: it says what it looked for to probe with, and packs by the thresholds" wait_for 20 said_thresholds
check "jitter packed on the busy CPU 0" wait_for 60 jitter_on 0
thresholds_status() { ctl status | grep -q "^Benefit: *no frequency table: packing by the thresholds alone"; }
check "status says the thresholds decide" thresholds_status || ctl status
probe_off() { ctl status | grep -q "^Probe: *off: no measurable frequency (APERF/MPERF: "; }
check "status says the probe is off, and why" probe_off || ctl status
probe_json() { ctl --json status | grep -q '"state": *"off"'; }
check "status --json states the probe (off)" probe_json
check "the hog was never confined" affinity_is "$HOG" 0

check "daemon stops" stop_daemon TERM
check "every jitter mask restored" jitter_on "$ALL"
check "no error in the daemon's log" bash -c "! grep -q '^<[0-3]>' '$TMP/daemon.log'"
finish
