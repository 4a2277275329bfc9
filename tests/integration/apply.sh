#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The applier on the real kernel: affinity of real child processes, a pinned
# task left alone, a change by someone else respected, recovery from the state
# file after the driver is killed with -9, and a real cgroup v1 cpuset group
# created, used and removed. Driven through tests/helpers/ts-apply.c.
set -u

: "${TS_BUILD_DIR:?TS_BUILD_DIR is not set (run through ctest)}"
DRIVER="$TS_BUILD_DIR/ts-apply"
CPUSET_ROOT=/sys/fs/cgroup/cpuset

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (affinity of other tasks, cgroups)"
[ -x "$DRIVER" ] || skip "ts-apply driver not built"
ONLINE=$(cat /sys/devices/system/cpu/online)
[ "$ONLINE" != 0 ] || skip "needs at least two online CPUs"

TMP=$(mktemp -d /tmp/ts-apply-test.XXXXXX)
STATE="$TMP/run/state"
# unique per run, so parallel or leftover runs never collide
GROUP="/ts-apply-test-$$-$RANDOM"
HOME_GROUP="$GROUP-home"
CHILDREN=()
DRV_PID=
FAILS=0
PASSES=0

cleanup() {
    local p g
    [ -n "$DRV_PID" ] && kill -9 "$DRV_PID" 2>/dev/null
    for p in "${CHILDREN[@]}"; do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    # never leave a group of ours behind, even when a step failed
    for g in "$GROUP" "$HOME_GROUP"; do
        if [ -d "$CPUSET_ROOT$g" ]; then
            while read -r p; do echo "$p" > "$CPUSET_ROOT/tasks" 2>/dev/null; done < "$CPUSET_ROOT$g/tasks"
            rmdir "$CPUSET_ROOT$g" 2>/dev/null || echo "WARNING: could not remove $CPUSET_ROOT$g"
        fi
    done
    [ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT

pass() { PASSES=$((PASSES + 1)); echo "PASS $*"; }
fail() { FAILS=$((FAILS + 1)); echo "FAIL $*"; }
check() { local name=$1; shift; if "$@"; then pass "$name"; else fail "$name"; fi; }

# wait_for TIMEOUT_S COMMAND...: poll every 10 ms until COMMAND succeeds.
wait_for() {
    local timeout=$1; shift
    local deadline=$(( $(date +%s%N) + timeout * 1000000000 ))
    while ! "$@"; do
        [ "$(date +%s%N)" -lt "$deadline" ] || return 1
        sleep 0.01
    done
}

affinity_of() { awk '/^Cpus_allowed_list:/ {print $2}' "/proc/$1/status" 2>/dev/null; }
affinity_is() { [ "$(affinity_of "$1")" = "$2" ]; }
cpuset_of() { cat "/proc/$1/cpuset" 2>/dev/null; }
cpuset_is() { [ "$(cpuset_of "$1")" = "$2" ]; }
gone() { ! kill -0 "$1" 2>/dev/null; }
absent() { [ ! -e "$1" ]; }

# spawn VAR COMMAND...: a child that lives until cleanup
spawn() {
    local __var=$1; shift
    "$@" &
    local pid=$!
    CHILDREN+=("$pid")
    printf -v "$__var" '%s' "$pid"
}

# start_driver [--dry-run]
start_driver() {
    coproc DRV { exec "$DRIVER" "$@" "$STATE" 2>>"$TMP/driver.log"; }
    DRV_PID=$DRV_PID
    DRV_IN=${DRV[1]}
    DRV_OUT=${DRV[0]}
}

# drv COMMAND: send one command, print the driver's answer
drv() {
    local reply
    echo "$*" >&"$DRV_IN"
    if ! read -r -t 10 reply <&"$DRV_OUT"; then
        echo "driver did not answer '$*'" >&2
        reply="timeout"
    fi
    echo "$reply"
}

# drv_is COMMAND... EXPECTED: the answer to COMMAND is EXPECTED
drv_is() {
    local want=${*: -1} got
    got=$(drv "${@:1:$#-1}")
    [ "$got" = "$want" ] || { echo "  '${*:1:$#-1}' answered '$got', expected '$want'"; return 1; }
}

stop_driver() {
    echo quit >&"$DRV_IN"
    wait "$DRV_PID" 2>/dev/null
    DRV_PID=
}

kill_driver() {
    kill -9 "$DRV_PID"
    wait "$DRV_PID" 2>/dev/null
    DRV_PID=
}

# --- affinity ----------------------------------------------------------------------
start_driver

spawn A sleep 1000
wait_for 10 test -e "/proc/$A/status" || fail "child did not start"
ORIG=$(affinity_of "$A")
echo "online CPUs $ONLINE, child $A starts on $ORIG"

check "pack sets plan ∩ original" drv_is pack "$A" 0 "ok 1"
check "kernel reports CPU 0" affinity_is "$A" 0
check "original and set recorded" drv_is find "$A" "ok original $ORIG set 0"
check "pack again: nothing to do" drv_is pack "$A" 0 "ok 0"
check "restore" drv_is restore "$A" "ok 1"
check "original back exactly" affinity_is "$A" "$ORIG"

spawn B taskset -c 1 sleep 1000
wait_for 10 affinity_is "$B" 1 || fail "taskset did not pin"
wait_for 10 grep -q '^Name:.*sleep' "/proc/$B/status"
check "pinned task: empty intersection, left alone" drv_is pack "$B" 0 "ok 0"
check "pinned task stays on 1" affinity_is "$B" 1

check "pack again" drv_is pack "$A" 0 "ok 1"
taskset -p -c 1 "$A" >/dev/null
check "someone else changed it: not restored" drv_is restore "$A" "ok 0"
check "their mask stays" affinity_is "$A" 1
check "task is hands off" drv_is hands-off "$A" "err EBUSY"
check "and not packed again" drv_is pack "$A" 0 "ok 0"
check "their mask still stays" affinity_is "$A" 1

spawn C sleep 1000
wait_for 10 test -e "/proc/$C/status"
check "pack C" drv_is pack "$C" 0 "ok 1"
taskset -p -c 1 "$C" >/dev/null
check "verify notices the change" drv_is verify "ok 1"
check "restore-all leaves it" drv_is restore-all "ok 0"
check "C keeps the other mask" affinity_is "$C" 1

# a gone task is forgotten quietly
spawn D sleep 1000
wait_for 10 test -e "/proc/$D/status"
check "pack D" drv_is pack "$D" 0 "ok 1"
kill -9 "$D"; wait "$D" 2>/dev/null
check "restore of an exited task" drv_is restore "$D" "ok 0"
check "nothing recorded" drv_is count "ok 0"

# a child forked after its parent was packed inherits the mask from the kernel
spawn P bash -c "until [ -e '$TMP/go' ]; do sleep 0.01; done; sleep 1000 & wait"
wait_for 10 test -e "/proc/$P/status"
check "pack parent" drv_is pack "$P" 0 "ok 1"
touch "$TMP/go"
child_of() { pgrep -P "$1" -f '^sleep 1000$' | head -1; }   # not the polling loop's sleep 0.01
has_child() { [ -n "$(child_of "$P")" ]; }   # re-evaluated at every poll
wait_for 10 has_child || fail "child of $P did not start"
K=$(child_of "$P")
CHILDREN+=("$K")
check "child inherited the packed mask" affinity_is "$K" 0
check "child adopted" drv_is adopt "$K" "$P" "ok 1"
check "child recorded with the parent's original" drv_is find "$K" "ok original $ORIG set 0"
check "child restored to the parent's original" drv_is restore "$K" "ok 1"
check "child's original back" affinity_is "$K" "$ORIG"
check "parent restored" drv_is restore "$P" "ok 1"

# a clean stop: restore everything, flush, and the state file goes
spawn H sleep 1000
wait_for 10 test -e "/proc/$H/status"
check "pack H" drv_is pack "$H" 0 "ok 1"
check "flush" drv_is flush "ok 0"
check "state file written" test -s "$STATE"
check "restore-all" drv_is restore-all "ok 1"
check "H has its original back" affinity_is "$H" "$ORIG"
check "flush after restore-all" drv_is flush "ok 0"
check "no state file after a clean stop" absent "$STATE"
stop_driver

# dry run: decides and says so, changes nothing
start_driver --dry-run
check "dry run: would pack" drv_is pack "$H" 0 "ok 1"
check "dry run: mask unchanged" affinity_is "$H" "$ORIG"
check "dry run: change logged" grep -q "would set pid $H (sleep) affinity $ORIG -> 0" "$TMP/driver.log"
check "dry run: flush writes nothing" drv_is flush "ok 0"
check "dry run: no state file" absent "$STATE"
stop_driver

# --- recovery after kill -9 ----------------------------------------------------------------
spawn E sleep 1000
spawn F sleep 1000
wait_for 10 test -e "/proc/$F/status"
start_driver
check "pack E" drv_is pack "$E" 0 "ok 1"
check "pack F" drv_is pack "$F" 0 "ok 1"
check "flush" drv_is flush "ok 0"
check "state file written" test -s "$STATE"
kill_driver
check "E still packed after the crash" affinity_is "$E" 0
taskset -p -c 1 "$F" >/dev/null        # changed by someone else while no daemon ran
start_driver
check "recover restores one task" drv_is recover "ok 1"
check "E has its original back" affinity_is "$E" "$ORIG"
check "F keeps the other mask" affinity_is "$F" 1
check "state file removed after recovery" absent "$STATE"
stop_driver

# a corrupted file restores nothing
start_driver
check "pack E again" drv_is pack "$E" 0 "ok 1"
check "flush" drv_is flush "ok 0"
kill_driver
sed -i "s/^task $E \\([0-9]* [0-9]* [0-9,-]*\\) 0 /task $E \\1 1 /" "$STATE"
taskset -p -c 1 "$E" >/dev/null
start_driver
check "corrupted file: nothing recovered" drv_is recover "ok 0"
check "E keeps its mask" affinity_is "$E" 1
check "corrupted file removed" absent "$STATE"
check "the reason was logged" grep -q "state file $STATE: corrupted (checksum mismatch), ignoring it" "$TMP/driver.log"
stop_driver

# --- cgroup v1 cpuset group ----------------------------------------------------------------
if [ ! -f "$CPUSET_ROOT/cpuset.cpus" ]; then
    echo "no cgroup v1 cpuset hierarchy at $CPUSET_ROOT: cpuset part not run"
else
    # a group of our own as the task's "original" cpuset, to see it go back there
    mkdir "$CPUSET_ROOT$HOME_GROUP"
    cat "$CPUSET_ROOT/cpuset.cpus" > "$CPUSET_ROOT$HOME_GROUP/cpuset.cpus"
    cat "$CPUSET_ROOT/cpuset.mems" > "$CPUSET_ROOT$HOME_GROUP/cpuset.mems"
    spawn G sleep 1000
    wait_for 10 test -e "/proc/$G/status"
    echo "$G" > "$CPUSET_ROOT$HOME_GROUP/tasks"
    wait_for 10 cpuset_is "$G" "$HOME_GROUP"

    start_driver
    check "group created" drv_is group-set "$GROUP" 0 "ok 1"
    check "group directory exists" test -d "$CPUSET_ROOT$GROUP"
    check "cpuset.cpus written" test "$(cat "$CPUSET_ROOT$GROUP/cpuset.cpus")" = 0
    check "cpuset.mems copied from the parent" \
        test "$(cat "$CPUSET_ROOT$GROUP/cpuset.mems")" = "$(cat "$CPUSET_ROOT/cpuset.mems")"
    check "attach" drv_is group-attach "$GROUP" "$G" "ok 1"
    check "task listed in the group" grep -qx "$G" "$CPUSET_ROOT$GROUP/tasks"
    check "task confined by the group" wait_for 10 affinity_is "$G" 0
    check "group widened" drv_is group-set "$GROUP" - "ok 1"
    check "cpuset.cpus = parent's" \
        test "$(cat "$CPUSET_ROOT$GROUP/cpuset.cpus")" = "$(cat "$CPUSET_ROOT/cpuset.cpus")"
    check "group narrowed again" drv_is group-set "$GROUP" 0 "ok 1"
    check "group removed" drv_is group-remove "$GROUP" "ok 1"
    check "group directory gone" absent "$CPUSET_ROOT$GROUP"
    check "task back in its original cpuset" cpuset_is "$G" "$HOME_GROUP"
    check "task's affinity follows its cpuset again" affinity_is "$G" "$(cat "$CPUSET_ROOT$HOME_GROUP/cpuset.cpus")"
    check "libcgroup printed nothing to stdout" drv_is count "ok 0"

    # crash with a group in place: the next start moves the task back and removes it
    check "group created again" drv_is group-set "$GROUP" 0 "ok 1"
    check "attach again" drv_is group-attach "$GROUP" "$G" "ok 1"
    check "flush" drv_is flush "ok 0"
    kill_driver
    check "group survives the crash" test -d "$CPUSET_ROOT$GROUP"
    start_driver
    check "recover undoes the group" drv_is recover "ok 1"
    check "group directory gone after recovery" absent "$CPUSET_ROOT$GROUP"
    check "task back home after recovery" cpuset_is "$G" "$HOME_GROUP"
    stop_driver
fi

check "driver ran clean under the sanitizers" bash -c "! grep -qE 'Sanitizer|runtime error' '$TMP/driver.log'"

echo "$PASSES passed, $FAILS failed"
[ "$FAILS" -eq 0 ]
