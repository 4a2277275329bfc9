#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Privilege, outside systemd: after start-up the daemon keeps only the
# capabilities it documents (effective, permitted and bounding sets: sys_nice,
# net_admin; sys_ptrace and dac_read_search too while behaviour classification
# looks for request paths (the default); sys_ptrace when a rule uses exe=, and
# a reload that adds one later says that it needs a restart; dac_override too when cgroup mode is
# configured and a v1 cpuset hierarchy is mounted). Over the control socket, a member of
# control_group may read (status) but not reload; a user outside the group
# cannot connect at all; root reloads. A refused reload changes nothing.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/storm-lib.bash"
require_root
command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
NOBODY=65534
getent group "$NOBODY" >/dev/null || skip "no group $NOBODY (nogroup) to use as control_group"
GROUP_NAME=$(getent group "$NOBODY" | cut -d: -f1)

# cap_bits PID FIELD: the capability set FIELD (CapEff, CapPrm, CapBnd) as a number
cap_bits() { local v; v=$(sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status"); echo $((16#$v)); }
names() {   # names BITS: the capability numbers in BITS
    local b=$1 i out=
    for i in $(seq 0 63); do (( (b >> i) & 1 )) && out+="$i "; done
    echo "${out% }"
}
SYS_NICE=23 NET_ADMIN=12 SYS_PTRACE=19 DAC_OVERRIDE=1 DAC_READ_SEARCH=2
WANT=$(( (1 << SYS_NICE) | (1 << NET_ADMIN) ))
caps_are() {   # caps_are BITS: effective, permitted and bounding sets are BITS
    local f got ok=0
    for f in CapEff CapPrm CapBnd; do
        got=$(cap_bits "$DAEMON_PID" "$f")
        [ "$got" -eq "$1" ] || { echo "  $f: capabilities $(names "$got"), expected $(names "$1")"; ok=1; }
    done
    return $ok
}

# The default: behaviour looks for request paths, and reads other users'
# fd links and syscall files for it.
write_config </dev/null
check "request paths: daemon starts" start_daemon || exit 1
check "request paths: sys_nice, net_admin, sys_ptrace and dac_read_search" \
    caps_are $((WANT | (1 << SYS_PTRACE) | (1 << DAC_READ_SEARCH)))
check "request paths: the log lists them" \
    grep -q "capabilities reduced to sys_nice, net_admin, sys_ptrace, dac_read_search$" "$TMP/daemon.log"
check "request paths: daemon stops" stop_daemon

# Below, request_paths = no: the working set alone.
# The socket's directory must be reachable by the other users.
chmod 0755 "$TMP"
write_config <<CONF
[daemon]
control_group = $GROUP_NAME
[classify]
request_paths = no
CONF
check "daemon starts" start_daemon || exit 1
check "capabilities: exactly sys_nice, net_admin (no exe= rule, no request paths)" caps_are "$WANT"
check "the log lists them" grep -q "capabilities reduced to sys_nice, net_admin$" "$TMP/daemon.log"
check "socket is mode 0660, group $GROUP_NAME" test "$(stat -c '%a %G' "$TMP/control")" = "660 $GROUP_NAME"

as_member() { setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups "$CTL" --socket "$TMP/control" "$@"; }
as_outsider() { setpriv --reuid="$NOBODY" --regid=1 --clear-groups "$CTL" --socket "$TMP/control" "$@"; }
reloads() { grep -c "configuration reloaded" "$TMP/daemon.log"; }

out=$(as_member status 2>&1); rc=$?
check "group member: status answered" test "$rc" -eq 0
R0=$(reloads)
out=$(as_member reload 2>&1); rc=$?
echo "  member's reload: exit $rc: $out"
check "group member: reload refused (exit 4, permission denied)" test "$rc" -eq 4
check "the refusal is logged with the peer's uid" grep -q "uid $NOBODY: .* refused, only root may change the daemon's state" "$TMP/daemon.log"
check "a refused reload did not reload" test "$(reloads)" -eq "$R0"
out=$(as_outsider status 2>&1); rc=$?
echo "  outsider's status: exit $rc: $out"
check "outside the group: cannot connect (exit 4)" test "$rc" -eq 4
ctl reload >/dev/null; rc=$?
check "root: reload works" test "$rc" -eq 0
check "root's reload counted" test "$(reloads)" -eq $((R0 + 1))
# sys_ptrace left the bounding set too: a reload cannot take it back, and says so.
cat > "$TMP/rules.d/50-exe.conf" <<CONF
[rule by-exe]
exe = /nothing/is/named/this-$$
class = jitter
CONF
ctl reload >/dev/null; rc=$?
check "root: reload that adds an exe= rule works" test "$rc" -eq 0
check "and says that exe= rules need a restart" grep -q "exe= rules are now configured, but CAP_SYS_PTRACE was given up at start" "$TMP/daemon.log"
check "capabilities unchanged by the reload" caps_are "$WANT"
check "daemon stops" stop_daemon

# exe= rule at start: sys_ptrace kept (the rule file from above stays)
check "exe= rule: daemon starts" start_daemon || exit 1
check "exe= rule: sys_nice, net_admin and sys_ptrace" caps_are $((WANT | (1 << SYS_PTRACE)))
check "exe= rule: the log lists them" grep -q "capabilities reduced to sys_nice, net_admin, sys_ptrace$" "$TMP/daemon.log"
check "exe= rule: daemon stops" stop_daemon
rm -f "$TMP/rules.d/50-exe.conf"

# cgroup mode configured at start, with a v1 cpuset hierarchy: dac_override too
if [ -f /sys/fs/cgroup/cpuset/cpuset.cpus ]; then
    write_config <<CONF
[classify]
request_paths = no
[rule grouped]
comm = nothing-is-named-this-$$
class = jitter
cgroup_mode = yes
CONF
    check "cgroup mode: daemon starts" start_daemon || exit 1
    check "cgroup mode: sys_nice, net_admin, sys_ptrace and dac_override" caps_are $((WANT | (1 << DAC_OVERRIDE)))
    check "cgroup mode: daemon stops" stop_daemon
else
    echo "no cgroup v1 cpuset hierarchy: the cgroup-mode capability set is not checked"
fi
check "no sanitizer report in the daemon's log" sanitizer_clean "$TMP/daemon.log"
finish
