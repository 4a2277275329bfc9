#!/usr/bin/env bash
# cgroup mode on a cgroup v1 cpuset hierarchy: jitter processes matched by a
# rule move into a cpuset group the daemon creates, whose CPUs follow the
# plan with one write; on stop they go back and the group is removed.
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

cpuset_of() { cat "/proc/$1/cpuset" 2>/dev/null; }
all_in() { local p; for p in "${jitter_pids[@]}"; do [ "$(cpuset_of "$p")" = "$1" ] || return 1; done; }
all_jitter_on() { local p; for p in "${jitter_pids[@]}"; do affinity_is "$p" "$1" || return 1; done; }
group_cpus_is() { [ "$(cat "$GROUP/cpuset.cpus" 2>/dev/null)" = "$1" ]; }

check "daemon starts" start_daemon
spawn HOG "$LOAD" -c 0 -d 70 -p 10 -n tshog$$
jitter_pids=()
for i in 1 2 3; do spawn p "$LOAD" -d 2 -p 20 -n "${NAME}$i"; jitter_pids+=("$p"); done
check "jitter moved into the daemon's group" wait_for 20 all_in "/turbosched-test-$$"
check "the group's CPUs follow the plan: CPU 0" wait_for 20 group_cpus_is 0
check "jitter runs on CPU 0 only" wait_for 5 all_jitter_on 0
check "explain names the group" bash -c "'$CTL' --socket '$TMP/control' explain ${jitter_pids[0]} | grep -q 'cpuset group'"
kill "$HOG"; wait "$HOG" 2>/dev/null
check "load gone: the group spans every CPU again" wait_for 20 group_cpus_is 0-1
check "SIGTERM" stop_daemon TERM
check "tasks back in their original cpuset" all_in /
check "every mask restored" all_jitter_on 0-1
check "group removed" test ! -d "$GROUP"
[ -d "$GROUP" ] && rmdir "$GROUP"
finish
