# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by the integration tests (sourced, not run): preconditions, waiting
# on conditions, a daemon under test with its own config, and cleanup.
# Tests exit 77 (skip) with a one-line reason when a precondition is missing.

set -u
: "${TS_BUILD_DIR:?TS_BUILD_DIR is not set (run through ctest)}"
: "${TS_SOURCE_DIR:?TS_SOURCE_DIR is not set (run through ctest)}"

# One integration test at a time on the machine, across build trees too:
# each runs a daemon that changes other tasks' affinity and measures load on
# CPUs that another test's hog would make busy. ctest runs them serially;
# the lock covers a second checkout running its suite at the same time.
exec 9>>/run/lock/turbosched-integration.lock
flock -w 900 9 || { echo "another turbosched integration test held the lock for 900 s"; exit 1; }

DAEMON="$TS_BUILD_DIR/turboschedd"
CTL="$TS_BUILD_DIR/turbosched-ctl"
LOAD="$TS_BUILD_DIR/ts-load"
TMP=$(mktemp -d /tmp/turbosched-test.XXXXXX)
DAEMON_PID=
CHILDREN=()
FAILS=0
PASSES=0

skip() { echo "SKIP: $*"; exit 77; }
require_root() { [ "$(id -u)" -eq 0 ] || skip "needs root (proc connector, affinity of other tasks)"; }

cleanup() {
    local p
    for p in "${CHILDREN[@]}"; do kill -9 "$p" 2>/dev/null; done
    if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
        kill -TERM "$DAEMON_PID" 2>/dev/null
        wait "$DAEMON_PID" 2>/dev/null
    fi
    wait 2>/dev/null
    [ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT

pass() { PASSES=$((PASSES + 1)); echo "PASS $*"; }
fail() { FAILS=$((FAILS + 1)); echo "FAIL $*"; daemon_view; }
# On a failed check, what the daemon under test saw and decided: CI keeps
# only the test's output, and a plan follows load that a log line explains.
daemon_view() {
    [ -s "$TMP/daemon.log" ] || return 0
    echo "  the daemon's last plans:"
    grep "plan: " "$TMP/daemon.log" | tail -n 4 | sed 's/^/    /'
    if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
        echo "  its view of the cores now:"
        "$CTL" --socket "$TMP/control" topology 2>&1 | sed 's/^/    /'
    fi
    echo "  its last log lines:"
    tail -n 12 "$TMP/daemon.log" | cut -c1-200 | sed 's/^/    /'
    echo "  /proc/stat: $(grep '^cpu[0-9]' /proc/stat | cut -d' ' -f1-9 | tr '\n' ';')"
    echo "  busiest tasks (lifetime %CPU):"; ps -eo pid,psr,pcpu,comm --sort=-pcpu | head -n 6 | sed "s/^/    /"
}
check() { local name=$1; shift; if "$@"; then pass "$name"; else fail "$name"; fi; }
finish() {
    echo "$PASSES passed, $FAILS failed"
    [ "$FAILS" -eq 0 ]
}

# wait_for TIMEOUT_S COMMAND...: poll every WAIT_STEP s (default 0.05) until
# COMMAND succeeds.
# Polling costs CPU on the machine under test (whose idle CPU the daemon
# protects), so checks use shell builtins where they can.
wait_for() {
    local timeout=$1; shift
    local deadline=$(( $(now_us) + timeout * 1000000 ))
    while ! "$@"; do
        [ "$(now_us)" -lt "$deadline" ] || return 1
        nap "${WAIT_STEP:-0.05}"
    done
}
# nap SECONDS: sleep without forking (sleep(1) is a process, and an exec
# event, twenty times a second): a read that times out on a FIFO no one
# writes to.
mkfifo "$TMP/.nap" && exec 8<>"$TMP/.nap"
nap() { local _; read -r -t "$1" -u 8 _ || true; }
now_us() { local t=${EPOCHREALTIME/./}; echo "$t"; }

# status_field PID KEY VAR: set VAR to KEY's value in /proc/PID/status, with
# no subshell. The file is read in one go: a line-by-line `while read` seeks
# back after each line and the kernel regenerates the text on each seek, so
# a task switching between sleeping and running shifts the lines under the
# reader (about 2% of reads of a busy task came back without the field).
status_field() {
    local __s=
    read -r -d '' __s 2>/dev/null < "/proc/$1/status"
    [[ $__s == *$'\n'"$2:"* ]] || return 1
    __s=${__s#*$'\n'"$2:"}
    __s=${__s%%$'\n'*}
    __s=${__s#"${__s%%[![:space:]]*}"}
    printf -v "$3" '%s' "$__s"
}
affinity_of() { local v; status_field "$1" Cpus_allowed_list v && echo "$v"; }
# affinity_is PID LIST: without a subshell, so that polling it forks nothing
# (each fork is an event the daemon under test handles, on the idle CPU)
affinity_is() { local v; status_field "$1" Cpus_allowed_list v && [ "$v" = "$2" ]; }
# Over a test's jitter tasks (the PIDs in its array `jitter`): each one's
# comm starts with $NAME (it has exec'd under its test name), and each one's
# affinity is exactly $1.
jitter_named() { local p; for p in "${jitter[@]}"; do grep -q "^${NAME}" "/proc/$p/comm" 2>/dev/null || return 1; done; }
jitter_on() { local p; for p in "${jitter[@]}"; do affinity_is "$p" "$1" || return 1; done; }
# harness_on_cpu0: this script, what it starts from now on (the daemon under
# test too) and its polls run on the busy CPU 0, so that the sanitizer
# build's work (turbosched-ctl polled, a reload reclassifying every task)
# does not make CPU 1 look busy and the plan fall back. Tasks started before
# keep their masks; start others with `taskset -c 0-1` to give them all CPUs.
harness_on_cpu0() { taskset -p -c 0 $$ >/dev/null; }
# HOG_DUTY: the busy-loop share of the CPU hog that makes CPU 0 busy. Far
# above busy_threshold (12.5%), and low enough that the sanitizer harness
# sharing CPU 0 (ctl polls, the daemon, a comparison client: 20-30% on a
# slow machine) still leaves the spare that a plan needs (jitter + 10%).
HOG_DUTY=45
all_cpus() { cat /sys/devices/system/cpu/online; }

# live_tids: every TID in /proc that has not exited (a zombie has sent its
# exit event already), sorted.
live_tids() {
    local f line st t
    for f in /proc/[0-9]*/task/[0-9]*/stat; do
        { read -r line <"$f"; } 2>/dev/null || continue
        st=${line##*) }
        st=${st:0:1}
        [[ $st == Z || $st == X ]] && continue
        t=${f#/proc/*/task/}
        echo "${t%/stat}"
    done | sort -u
}


# spawn VAR COMMAND...: start a background child, remember it for cleanup.
spawn() {
    local __var=$1; shift
    "$@" &
    local pid=$!
    CHILDREN+=("$pid")
    printf -v "$__var" '%s' "$pid"
}

# write_config < EXTRA: a config for a daemon confined to $TMP, with fast
# ticks and short hysteresis so tests wait seconds, not minutes; EXTRA (stdin)
# is appended, and $PACKING_EXTRA (lines) goes into its [packing] section.
write_config() {
    mkdir -p "$TMP/rules.d"
    cat > "$TMP/turbosched.conf" <<CONF
[daemon]
tick_interval = 100ms
log_level = debug
control_socket = $TMP/control
state_file = $TMP/state
cgroup_name = turbosched-test-$$

[packing]
# The idle CPU also runs this harness, the sanitizer build of the daemon and
# whatever else the machine does; 30% keeps it "idle" with a margin. The
# 12.5% default itself is covered by the packer's unit tests.
busy_threshold = 30%
hold_time = 200ms
min_change_interval = 200ms
half_life = 200ms
# Jitter packed beside a test's hog waits for it; on a loaded machine the
# shipped 1 ms limit can give the plan up in the middle of a test about
# something else. integration-run-delay sets it (later lines win).
max_run_delay = off
${PACKING_EXTRA:-}

[classify]
unit_optin = no
CONF
    cat >> "$TMP/turbosched.conf"
}

# ready: logged by this start, not an earlier one (the log is appended to)
daemon_ready() { [ -S "$TMP/control" ] && tail -c +$((LOG_START + 1)) "$TMP/daemon.log" | grep -q "ready:"; }

# The daemon's log carries "<N>" priority prefixes, as under journald, so that
# checks can tell errors from the rest: JOURNAL_STREAM names the log file.
start_daemon() {
    touch "$TMP/daemon.log"
    LOG_START=$(stat -c %s "$TMP/daemon.log")
    JOURNAL_STREAM=$(stat -c %d:%i "$TMP/daemon.log") "$DAEMON" --config "$TMP/turbosched.conf" "$@" >>"$TMP/daemon.log" 2>&1 &
    DAEMON_PID=$!
    if ! wait_for 30 daemon_ready; then
        echo "daemon did not become ready; its log:"; cat "$TMP/daemon.log"
        return 1
    fi
}

stop_daemon() {
    local sig=${1:-TERM}
    kill "-$sig" "$DAEMON_PID"
    wait "$DAEMON_PID" 2>/dev/null
    local rc=$?
    DAEMON_PID=
    return $rc
}

ctl() { "$CTL" --socket "$TMP/control" "$@"; }
