# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by the benchmark scripts (sourced): a scratch directory, a daemon
# under a bench config, CPU time and RSS of a process, cleanup. Benchmarks
# print numbers; they never pass or fail on a timing.
set -euo pipefail
BUILD=$(realpath "${1:?usage: $(basename "$0") BUILD_DIR}")
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# TURBOSCHEDD, TURBOSCHED_CTL: another build's binaries (an old daemon
# against a new one, on the same harness)
DAEMON=${TURBOSCHEDD:-$BUILD/turboschedd}
CTL=${TURBOSCHED_CTL:-$BUILD/turbosched-ctl}
LOAD=$BUILD/ts-load
[ "$(id -u)" -eq 0 ] || { echo "$(basename "$0"): needs root (proc connector, affinity of other tasks)" >&2; exit 77; }
[ -x "$DAEMON" ] || { echo "$(basename "$0"): $DAEMON not built" >&2; exit 1; }

# No integration test beside a benchmark (run-all.sh holds the lock already)
if [ -z "${TS_BENCH_LOCKED:-}" ]; then
    exec 9>>/run/lock/turbosched-integration.lock
    flock -w 1800 9 || { echo "$(basename "$0"): the integration test lock stayed taken" >&2; exit 1; }
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/turbosched-bench.XXXXXX")
PIDS=()
DPID=
bench_cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    [ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null || true
    wait 2>/dev/null || true
    if mountpoint -q "$TMP/run"; then umount "$TMP/run" || true; fi
    rm -rf "$TMP"
}
# The state file on a tmpfs, as the shipped one is (/run under systemd): on
# ext4 each write's rename starts writeback, and the loop waits for it.
STATE_DIR=$TMP
if [ "$(stat -f -c %T "$TMP")" != tmpfs ] && mkdir "$TMP/run" &&
    mount -t tmpfs -o size=16m,mode=0700 turbosched-bench "$TMP/run" 2>/dev/null; then
    STATE_DIR=$TMP/run
fi
trap bench_cleanup EXIT

# bench_config EXTRA: a daemon config confined to $TMP; EXTRA (stdin) appended
bench_config() {
    cat > "$TMP/turbosched.conf" <<CONF
[daemon]
control_socket = $TMP/control
state_file = $STATE_DIR/state
log_level = info
[classify]
unit_optin = no
CONF
    cat >> "$TMP/turbosched.conf"
}
ctl() { "$CTL" --socket "$TMP/control" "$@"; }
# wait_until TIMEOUT_S COMMAND...: poll every 100 ms
# (status 2 from COMMAND: give up at once)
wait_until() {
    local end=$((SECONDS + $1)) rc; shift
    while :; do
        rc=0; "$@" || rc=$?
        [ $rc -eq 0 ] && return 0
        [ $rc -eq 2 ] && return 1
        [ $SECONDS -lt $end ] || return 1
        sleep 0.1
    done
}
daemon_start() {   # daemon_start [WRAPPER...]: start it, wait until it answers
    rm -f "$TMP/control"
    "$@" "$DAEMON" --config "$TMP/turbosched.conf" >>"$TMP/daemon.log" 2>&1 &
    DPID=$!
    answering() { kill -0 "$DPID" 2>/dev/null || return 2; ctl status >/dev/null 2>&1; }
    wait_until 120 answering && return
    echo "daemon did not start:" >&2; tail "$TMP/daemon.log" >&2; DPID=; exit 1
}
daemon_stop() { kill -TERM "$DPID"; wait "$DPID" 2>/dev/null || true; DPID=; }
plan_restricted() { ctl status 2>/dev/null | grep -q '^Plan: *jitter tasks on CPU'; }
cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
# cpu_ns PID: time on CPU of all its threads, in ns (schedstat: finer than
# the clock ticks of /proc/PID/stat, which count 10 ms at a time)
cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f\n", s }'; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
# ratio A B: A/B with 3 decimals ("n/a" when B is 0)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "n/a"; else printf "%.3f\n", a / b }'; }

# idle_source_init CPU: how idle_counts counts CPU's wake-ups. The cpuidle
# "usage" counters where there is a cpuidle driver; without one, CPU's local
# timer and rescheduling interrupts (a task woken on an idle CPU sends it a
# rescheduling IPI; a running CPU takes ticks), with residency from its idle
# time in /proc/stat. Sets SOURCE for the report.
idle_source_init() {
    IDLE_CPU=$1
    CPUIDLE=/sys/devices/system/cpu/cpu$IDLE_CPU/cpuidle
    if [ -d "$CPUIDLE" ] && ls "$CPUIDLE"/state* >/dev/null 2>&1; then
        SOURCE="cpuidle usage"
    else
        grep -q '^ *LOC:' /proc/interrupts || { echo "$(basename "$0"): no cpuidle and no LOC line in /proc/interrupts" >&2; exit 77; }
        SOURCE="LOC+RES interrupts"
    fi
}
idle_counts() {   # "wake-ups idle_time_us" of CPU $IDLE_CPU so far
    local u=0 t=0 s
    if [ "$SOURCE" = "cpuidle usage" ]; then
        for s in "$CPUIDLE"/state*; do
            u=$((u + $(cat "$s/usage"))); t=$((t + $(cat "$s/time")))
        done
    else
        u=$(awk -v c=$((IDLE_CPU + 2)) '$1 == "LOC:" || $1 == "RES:" { n += $c } END { print n + 0 }' /proc/interrupts)
        t=$(awk -v cpu="cpu$IDLE_CPU" -v hz="$(getconf CLK_TCK)" '$1 == cpu { printf "%.0f", ($5 + $6) * 1e6 / hz }' /proc/stat)
    fi
    echo "$u $t"
}
# idle_while PID: wait for PID (a child of this shell: do not call it in a
# subshell); sets IDLE_U IDLE_T IDLE_E to CPU $IDLE_CPU's wake-ups, idle
# time (µs) and the elapsed time (µs) over that wait
idle_while() {
    local u0 t0 u1 t1 s0 s1
    read -r u0 t0 < <(idle_counts); s0=$(date +%s%N)
    wait "$1" || true
    read -r u1 t1 < <(idle_counts); s1=$(date +%s%N)
    IDLE_U=$((u1 - u0)) IDLE_T=$((t1 - t0)) IDLE_E=$(( (s1 - s0) / 1000 ))
}
json_num() { sed -n "s/.*\"$1\": *\([0-9.]*\).*/\1/p" "$2" | head -1; }

# Two local users, for the benchmarks of one user against another: an
# attacker (uid nobody) and a victim (uid 1), each without supplementary
# groups. bench_users TOOL copies BUILD/TOOL to $TMP/TOOL, where both may
# run it (0755 up to there), or skips without the user nobody.
bench_users() {
    local me src=$BUILD/$1
    me=$(basename "$0")
    [ -x "$src" ] || { echo "$me: $src not built" >&2; exit 1; }
    id nobody >/dev/null 2>&1 || { echo "$me: needs the user nobody" >&2; exit 77; }
    cp "$src" "$TMP/$1" && chmod 755 "$TMP" "$TMP/$1"
}
# as_user UID GROUP COMMAND...: exec COMMAND as UID (and gid UID), in the
# CPU cgroup GROUP when bench_cgroups made the groups. It joins the group
# before the exec, so every process and thread COMMAND starts is in it.
# Call it in the background only (COMMAND replaces the shell that runs it).
as_user() {
    local uid=$1 g=$2
    shift 2
    [ "$BASHPID" != "$$" ] || { echo "as_user: call it in the background" >&2; return 1; }
    local d
    for d in $CG_DIR $CS_DIR; do
        echo "$BASHPID" > "$d/$g/cgroup.procs" || { echo "as_user: cannot join $d/$g" >&2; exit 1; }
    done
    exec setpriv --reuid="$uid" --regid="$uid" --clear-groups "$@"
}
as_attacker() { as_user 65534 attacker "$@"; }
as_victim() { as_user 1 victim "$@"; }

# bench_cgroups: a CPU cgroup for the attacker and one for the victim, of
# equal weight, as systemd gives each logged-in user a slice of its own
# (user-UID.slice) and the kernel then shares the CPU between users rather
# than threads. Both under a group named after $TMP, in the cgroup v1 cpu
# hierarchy or else in cgroup v2 with the cpu controller; removed on exit,
# with any process left in them killed (this run's) and moved out first.
# Skips with 77 where neither is there. Whatever as_user does not start
# (this script, the daemon) stays where the script was started.
# bench_cgroups isolated: besides, each user gets CPUs of its own, as an
# administrator who keeps users apart gives each slice AllowedCPUs=: a
# cpuset group each (cgroup v1 cpuset, or cpuset in the same cgroup v2
# groups), the victim the first online CPU (VICTIM_CPUS) and the attacker
# the others (ATTACKER_CPUS). An attack then reaches the victim only
# through what the machine shares, the kernel and the daemon.
CG_DIR=
CG_ROOT=
CG_ENABLED_ROOT_CPU=
CG_KIND=
CS_DIR=
CS_ROOT=
VICTIM_CPUS=
ATTACKER_CPUS=
bench_cgroups() {
    local me m g
    me=$(basename "$0")
    if [ "${1:-}" = isolated ]; then
        local all
        all=$(cat /sys/devices/system/cpu/online)
        VICTIM_CPUS=${all%%[-,]*}
        ATTACKER_CPUS=$(awk -v v="$VICTIM_CPUS" -v all="$all" 'BEGIN { n = split(all, r, ","); out = ""
            for (i = 1; i <= n; i++) { k = split(r[i], b, "-"); lo = b[1]; hi = (k > 1) ? b[2] : b[1]
                for (c = lo; c <= hi; c++) if (c != v) out = out (out == "" ? "" : ",") c }
            print out }')
        [ -n "$ATTACKER_CPUS" ] || { echo "$me: isolated users need 2 CPUs or more" >&2; exit 77; }
    fi
    m=$(awk '$3 == "cgroup" && $4 ~ /(^|,)cpu(,|$)/ { print $2; exit }' /proc/mounts)
    if [ -n "$m" ] && [ -f "$m/cpu.shares" ]; then
        CG_ROOT=$m
        mkdir "$CG_ROOT/$(basename "$TMP")" || { echo "$me: cannot make a group in $CG_ROOT" >&2; exit 77; }
        CG_DIR=$CG_ROOT/$(basename "$TMP")
        trap 'bench_cgroups_remove; bench_cleanup' EXIT
        for g in attacker victim; do
            mkdir "$CG_DIR/$g"
            echo 1024 > "$CG_DIR/$g/cpu.shares"
        done
        CG_KIND="cgroup v1 cpu, cpu.shares 1024 each"
        [ -z "$VICTIM_CPUS" ] || bench_cpusets_v1
        return
    fi
    for m in $(awk '$3 == "cgroup2" { print $2 }' /proc/mounts); do
        grep -qw cpu "$m/cgroup.controllers" 2>/dev/null || continue
        CG_ROOT=$m
        if ! grep -qw cpu "$CG_ROOT/cgroup.subtree_control"; then
            echo +cpu > "$CG_ROOT/cgroup.subtree_control" || { echo "$me: cannot enable cpu in $CG_ROOT" >&2; exit 77; }
            CG_ENABLED_ROOT_CPU=1
        fi
        mkdir "$CG_ROOT/$(basename "$TMP")" || { echo "$me: cannot make a group in $CG_ROOT" >&2; exit 77; }
        CG_DIR=$CG_ROOT/$(basename "$TMP")
        trap 'bench_cgroups_remove; bench_cleanup' EXIT
        echo +cpu > "$CG_DIR/cgroup.subtree_control"
        for g in attacker victim; do
            mkdir "$CG_DIR/$g"
            echo 100 > "$CG_DIR/$g/cpu.weight"
        done
        CG_KIND="cgroup v2, cpu.weight 100 each"
        if [ -n "$VICTIM_CPUS" ]; then
            grep -qw cpuset "$CG_ROOT/cgroup.subtree_control" && echo +cpuset > "$CG_DIR/cgroup.subtree_control" ||
                { echo "$me: no cpuset controller in $CG_ROOT for isolated users" >&2; exit 77; }
            echo "$VICTIM_CPUS" > "$CG_DIR/victim/cpuset.cpus" && echo "$ATTACKER_CPUS" > "$CG_DIR/attacker/cpuset.cpus" ||
                { echo "$me: cannot give the users CPUs of their own" >&2; exit 1; }
            CG_KIND="$CG_KIND; CPUs of their own: victim $VICTIM_CPUS, attacker $ATTACKER_CPUS"
        fi
        return
    done
    echo "$me: no CPU cgroup controller (neither a cgroup v1 cpu hierarchy nor cpu in a cgroup2 mount's controllers)" >&2
    exit 77
}
# the v1 cpuset hierarchy's groups, beside the cpu ones (a new group there
# takes no CPU and no memory node until told)
bench_cpusets_v1() {
    local me g
    me=$(basename "$0")
    CS_ROOT=$(awk '$3 == "cgroup" && $4 ~ /(^|,)cpuset(,|$)/ { print $2; exit }' /proc/mounts)
    [ -n "$CS_ROOT" ] && [ -f "$CS_ROOT/cpuset.cpus" ] || { echo "$me: no cgroup v1 cpuset hierarchy for isolated users" >&2; exit 77; }
    mkdir "$CS_ROOT/$(basename "$TMP")" || { echo "$me: cannot make a group in $CS_ROOT" >&2; exit 77; }
    CS_DIR=$CS_ROOT/$(basename "$TMP")
    cat "$CS_ROOT/cpuset.cpus" > "$CS_DIR/cpuset.cpus" && cat "$CS_ROOT/cpuset.mems" > "$CS_DIR/cpuset.mems" ||
        { echo "$me: cannot set up $CS_DIR" >&2; exit 1; }
    for g in attacker victim; do
        mkdir "$CS_DIR/$g" && cat "$CS_DIR/cpuset.mems" > "$CS_DIR/$g/cpuset.mems" ||
            { echo "$me: cannot set up $CS_DIR/$g" >&2; exit 1; }
    done
    echo "$VICTIM_CPUS" > "$CS_DIR/victim/cpuset.cpus" && echo "$ATTACKER_CPUS" > "$CS_DIR/attacker/cpuset.cpus" ||
        { echo "$me: cannot give the users CPUs of their own" >&2; exit 1; }
    CG_KIND="$CG_KIND; CPUs of their own (cgroup v1 cpuset): victim $VICTIM_CPUS, attacker $ATTACKER_CPUS"
}
# bench_group_remove DIR ROOT: DIR's groups and DIR, each process left in
# them killed and moved to ROOT first
bench_group_remove() {
    local dir=$1 root=$2 g p i pids
    for g in "$dir"/*/; do
        [ -d "$g" ] || continue
        for i in $(seq 50); do
            mapfile -t pids < "$g/cgroup.procs" 2>/dev/null || pids=()
            for p in "${pids[@]}"; do
                kill -KILL "$p" 2>/dev/null || true
                echo "$p" > "$root/cgroup.procs" 2>/dev/null || true
            done
            rmdir "$g" 2>/dev/null && break
            sleep 0.1
        done
    done
    rmdir "$dir" 2>/dev/null || echo "$(basename "$0"): could not remove $dir" >&2
}
bench_cgroups_remove() {
    if [ -n "$CS_DIR" ] && [ -d "$CS_DIR" ]; then bench_group_remove "$CS_DIR" "$CS_ROOT"; fi
    CS_DIR=
    [ -n "$CG_DIR" ] && [ -d "$CG_DIR" ] || return 0
    bench_group_remove "$CG_DIR" "$CG_ROOT"
    if [ -n "$CG_ENABLED_ROOT_CPU" ]; then echo -cpu > "$CG_ROOT/cgroup.subtree_control" 2>/dev/null || true; fi
    CG_DIR=
}
