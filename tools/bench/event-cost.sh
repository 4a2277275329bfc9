#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# CPU cost per proc connector event of turboschedd (this build and,
# optionally, an older binary) and of cgrulesengd, side by side in one run,
# under the same fork+exec storm (tools/fork-storm: fork, exec and exit
# events, 3 per child). Two measures per subject:
#   - utime+stime of the listener from /proc/PID/stat, ms per 1000 events
#     (native run; ROUNDS rounds, interleaved);
#   - instructions per event under valgrind --tool=callgrind (user space
#     only: the kernel's work for the listener's syscalls is not counted).
# Events of other processes on the machine count against the listener but
# not in the denominator: run on a quiet machine, compare within one run.
# cgrulesengd gets a rule moving the storm's children into a v1 cpuset
# group; /etc/cgrules.conf is backed up and restored, the group removed.
#
# usage: event-cost.sh BUILD_DIR [CHILDREN] [ROUNDS] [OLD_TURBOSCHEDD]
set -euo pipefail
BUILD=$(realpath "${1:?usage: event-cost.sh BUILD_DIR [CHILDREN] [ROUNDS] [OLD_TURBOSCHEDD]}")
N=${2:-3000}
ROUNDS=${3:-2}
OLD=${4:-}
NAME=tsstormchild
CG=/sys/fs/cgroup/cpuset/tsbench

[ "$(id -u)" -eq 0 ] || { echo "event-cost.sh: needs root" >&2; exit 77; }
TMP=$(mktemp -d /tmp/ts-event-cost.XXXXXX)
PIDS=()
RULES_BACKUP=
MADE=()     # cgconfig files cgrulesengd insists on, created here when absent
cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    if [ -n "$RULES_BACKUP" ]; then mv -f "$RULES_BACKUP" /etc/cgrules.conf; else rm -f /etc/cgrules.conf; fi
    rm -f /var/run/cgred.socket
    for p in "${MADE[@]}"; do rm -rf "$p"; done
    [ -d "$CG" ] && rmdir "$CG" 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT

ln -s "$BUILD/fork-storm" "$TMP/$NAME"
cat > "$TMP/turbosched.conf" <<CONF
[daemon]
control_socket = $TMP/control
state_file = $TMP/state
netlink_rcvbuf = 64M
[classify]
unit_optin = no
[rule storm]
comm = $NAME
class = jitter
CONF

HAVE_CGRULES=0
if command -v cgrulesengd >/dev/null && [ -d /sys/fs/cgroup/cpuset ]; then
    HAVE_CGRULES=1
    [ -e /etc/cgrules.conf ] && { RULES_BACKUP=$TMP/cgrules.conf.orig; cp -p /etc/cgrules.conf "$RULES_BACKUP"; }
    mkdir -p "$CG"
    cat /sys/fs/cgroup/cpuset/cpuset.cpus > "$CG/cpuset.cpus"
    cat /sys/fs/cgroup/cpuset/cpuset.mems > "$CG/cpuset.mems"
    echo "*:$NAME cpuset tsbench/" > /etc/cgrules.conf
    [ -e /etc/cgconfig.conf ] || { touch /etc/cgconfig.conf; MADE+=(/etc/cgconfig.conf); }
    [ -e /etc/cgconfig.d ] || { mkdir /etc/cgconfig.d; MADE+=(/etc/cgconfig.d); }
fi

cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }

# start SUBJECT WRAP...: starts it, sets $spid; waits until it listens
start() {
    local subj=$1; shift
    rm -f "$TMP/control"
    case $subj in
    cgrulesengd) "$@" cgrulesengd -n -Q >"$TMP/$subj.log" 2>&1 & ;;
    *) "$@" "$subj" --config "$TMP/turbosched.conf" --log-level info >"$TMP/$(basename "$subj").log" 2>&1 & ;;
    esac
    spid=$!; PIDS+=("$spid")
    if [ "$subj" = cgrulesengd ]; then
        sleep $(( $# ? 8 : 1 ))
        kill -0 "$spid" 2>/dev/null || { echo "cgrulesengd did not start" >&2; cat "$TMP/$subj.log" >&2; exit 1; }
        return
    fi
    for _ in $(seq 3000); do [ -S "$TMP/control" ] && break; sleep 0.02; done
    [ -S "$TMP/control" ] || { echo "$subj did not start" >&2; cat "$TMP/$(basename "$subj").log" >&2; exit 1; }
    sleep 1
}
stop() { kill -TERM "$spid"; wait "$spid" 2>/dev/null || true; }

# Wait until the listener has caught up: its CPU time stops growing.
settle() {
    local a b
    a=$(cpu_ticks "$1")
    while sleep "${2:-0.3}"; b=$(cpu_ticks "$1"); [ "$a" != "$b" ]; do a=$b; done
}

cpu_run() {   # prints ms per 1000 events
    local subj=$1 t0 t1 hz
    hz=$(getconf CLK_TCK)
    start "$subj"
    settle "$spid"
    t0=$(cpu_ticks "$spid")
    "$TMP/$NAME" "$N" "$TMP/$NAME" >/dev/null
    settle "$spid"
    t1=$(cpu_ticks "$spid")
    if grep -q "overflowed" "$TMP/$(basename "$subj").log" 2>/dev/null; then echo "note: $subj overflowed" >&2; fi
    stop
    awk -v d=$((t1 - t0)) -v hz="$hz" -v ev=$((3 * N)) 'BEGIN { printf "%.2f\n", d * 1000 / hz / (ev / 1000) }'
}

cg_run() {   # prints instructions per event
    local subj=$1 out=$TMP/callgrind.out
    rm -f "$out"*
    start "$subj" valgrind --tool=callgrind --callgrind-out-file="$out" --collect-atstart=yes
    settle "$spid" 0.5
    callgrind_control -z "$spid" >/dev/null
    "$TMP/$NAME" "$N" "$TMP/$NAME" >/dev/null
    settle "$spid" 1
    callgrind_control -d "$spid" >/dev/null
    if grep -q "overflowed" "$TMP/$(basename "$subj").log" 2>/dev/null; then echo "note: $subj overflowed under valgrind" >&2; fi
    local ir f
    f=$(ls -t "$out".* 2>/dev/null | head -1)
    ir=$(grep -h '^summary:\|^totals:' "$f" | head -1 | awk '{print $2}')
    stop
    awk -v ir="${ir:-0}" -v ev=$((3 * N)) 'BEGIN { printf "%.0f\n", ir / ev }'
}

SUBJECTS=("$BUILD/turboschedd")
[ -n "$OLD" ] && SUBJECTS=("$OLD" "${SUBJECTS[@]}")
[ $HAVE_CGRULES = 1 ] && SUBJECTS+=(cgrulesengd)

declare -A CPU IR
for s in "${SUBJECTS[@]}"; do CPU[$s]=""; done
for r in $(seq "$ROUNDS"); do
    for s in "${SUBJECTS[@]}"; do CPU[$s]+="$(cpu_run "$s") "; done
done
for s in "${SUBJECTS[@]}"; do IR[$s]=$(cg_run "$s"); done

echo "| listener | CPU ms / 1000 events (rounds) | instructions / event |"
echo "|---|---|---|"
for s in "${SUBJECTS[@]}"; do
    # Paths relative to the repository: the report is committed.
    rel() { realpath --relative-to="$(dirname "$0")/../.." "$1"; }
    label=$s; [ "$s" = "$OLD" ] && label="turboschedd (old: $(rel "$s"))"; [ "$s" = "$BUILD/turboschedd" ] && label="turboschedd ($(rel "$BUILD"))"
    echo "| $label | ${CPU[$s]}| ${IR[$s]} |"
done
echo
echo "$N children, $((3 * N)) events per run; $(nproc) CPUs; kernel $(uname -r)"
