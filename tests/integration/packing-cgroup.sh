#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# cgroup mode on a cgroup v1 cpuset hierarchy: jitter processes matched by a
# rule move into a cpuset group the daemon creates, whose CPUs follow the
# plan with one write; a task the user pinned stays out of it; on stop, and
# after kill -9 and a restart, they go back and the group is removed.
. "$(dirname "$0")/lib.bash"
require_root
CPUSET=/sys/fs/cgroup/cpuset
[ -f "$CPUSET/cpuset.cpus" ] || skip "no cgroup v1 cpuset hierarchy at $CPUSET"
[ "$(all_cpus)" = "0-1" ] || skip "written for a 2-CPU machine (online: $(all_cpus))"

NAME="tg$$"
GROUP="$CPUSET/turbosched-test-$$"
write_config <<CONF
[rule test-jitter]
comm = ${NAME}*
class = jitter
cgroup_mode = yes
CONF
# The shipped hold time: a plan must hold 1 s before it is applied, so that
# a burst of the checks' own work on the idle CPU (turbosched-ctl built with
# sanitizers) does not unpack the jitter between two checks.
sed -i 's/^hold_time = .*/hold_time = 1s/' "$TMP/turbosched.conf"

# Checks read files with the shell alone: each fork of a poll is an event
# the daemon under test handles, on the CPU that must look idle.
cpuset_is() { local v; read -r v < "/proc/$1/cpuset" 2>/dev/null && [ "$v" = "$2" ]; }
all_in() { local p; for p in "${jitter_pids[@]}"; do cpuset_is "$p" "$1" || return 1; done; }
all_jitter_on() { local p; for p in "${jitter_pids[@]}"; do affinity_is "$p" "$1" || return 1; done; }
group_cpus_is() { local v; read -r v < "$GROUP/cpuset.cpus" 2>/dev/null && [ "$v" = "$1" ]; }

cleanup_group() {   # on any exit: tasks back to the root cpuset, group gone
    [ -d "$GROUP" ] || return 0
    local t
    for t in $(cat "$GROUP/tasks" 2>/dev/null); do echo "$t" > "$CPUSET/tasks" 2>/dev/null; done
    rmdir "$GROUP" 2>/dev/null || true
}
trap 'cleanup; cleanup_group' EXIT
explain_class() { ctl --json explain "$1" 2>/dev/null | grep -q "\"class\": *\"$2\""; }

# The harness, the daemon under test and turbosched-ctl (sanitizer builds)
# run on CPU 0 with the hog: on CPU 1 their work measured 13-43% a second,
# enough to make the CPU that must look idle busy on a slower machine.
# Tasks under test are started with every CPU.
harness_on_cpu0
check "daemon starts" start_daemon
spawn HOG "$LOAD" -c 0 -d "$HOG_DUTY" -p 10 -n tshog$$
# A jitter task the user pinned to CPU 1 before the daemon saw it.
spawn PINNED taskset -c 1 "$LOAD" -d 2 -p 20 -n "${NAME}p"
jitter_pids=()
for i in 1 2 3; do spawn p taskset -c 0-1 "$LOAD" -d 2 -p 20 -n "${NAME}$i"; jitter_pids+=("$p"); done
check "jitter moved into the daemon's group" wait_for 20 all_in "/turbosched-test-$$"
check "the group's CPUs follow the plan: CPU 0" wait_for 20 group_cpus_is 0
check "jitter runs on CPU 0 only" wait_for 5 all_jitter_on 0
check "explain names the group" bash -c "'$CTL' --socket '$TMP/control' explain ${jitter_pids[0]} | grep -q 'cpuset group'"
check "pinned task classified jitter" wait_for 10 explain_class "$PINNED" jitter
pinned_outside() { affinity_is "$PINNED" 1 && cpuset_is "$PINNED" /; }
check "pinned task left on CPU 1, outside the group" pinned_outside
kill "$HOG"; wait "$HOG" 2>/dev/null
check "load gone: the group spans every CPU again" wait_for 20 group_cpus_is 0-1
spawn HOG "$LOAD" -c 0 -d "$HOG_DUTY" -p 10 -n tshog$$
check "load back: the group on CPU 0 again" wait_for 20 group_cpus_is 0
check "SIGTERM" stop_daemon TERM
check "tasks back in their original cpuset" all_in /
check "every mask restored" all_jitter_on 0-1
check "group removed" test ! -d "$GROUP"
check "pinned task still on CPU 1" affinity_is "$PINNED" 1

check "restart" start_daemon
in_group_on_0() { all_in "/turbosched-test-$$" && group_cpus_is 0; }
check "restart: in the group on CPU 0 again" wait_for 20 in_group_on_0
stop_daemon KILL
check "kill -9 leaves the group in place (the state file remembers it)" all_in "/turbosched-test-$$"
kill "$HOG"; wait "$HOG" 2>/dev/null
check "restart after kill -9" start_daemon
nothing_confined() { all_jitter_on 0-1 && { all_in / || group_cpus_is 0-1; }; }
check "restart after kill -9: nothing left confined" wait_for 20 nothing_confined
check "final SIGTERM" stop_daemon TERM
check "tasks back in their original cpuset" all_in /
check "group removed" test ! -d "$GROUP"
check "pinned task still on CPU 1 after all" affinity_is "$PINNED" 1
check "no error in the daemon's log" bash -c "! grep -q '^<[0-3]>' '$TMP/daemon.log'"
finish
