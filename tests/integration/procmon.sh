#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Task discovery against the real kernel: the proc connector, the task table
# and /proc rescans, driven through tests/helpers/ts-procwatch.
#  1. threads, renames (PR_SET_NAME, pthread_setname_np), fork+exec and exec
#     from a non-leader thread are all seen with the right TID, TGID, comm and
#     exe, and the execing thread's old TID is dropped;
#  2. with a tiny receive buffer a fork storm overflows the socket, the
#     overflow is counted, and after the rescan the table equals the live
#     TIDs in /proc.
set -u

if [ "$(id -u)" != 0 ]; then
    echo "SKIP: the proc connector needs root (CAP_NET_ADMIN)"
    exit 77
fi
: "${TS_BUILD_DIR:?TS_BUILD_DIR not set}"
helper() {
    local d
    for d in "$TS_BUILD_DIR/tests" "$TS_BUILD_DIR"; do
        [ -x "$d/$1" ] && { echo "$d/$1"; return 0; }
    done
    echo "FAIL: helper $1 not built" >&2
    exit 1
}
WATCH=$(helper ts-procwatch)
SPAWN=$(helper ts-spawner)

tmp=$(mktemp -d /tmp/ts-procmon.XXXXXX)
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; exit 1; }

# wait_for SECONDS CMD...: poll CMD every 20 ms until it succeeds
wait_for() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        ((SECONDS >= deadline)) && return 1
        sleep 0.02
    done
}

# start_watch DIR ARGS...: start ts-procwatch and wait for its startup scan
start_watch() {
    local dir=$1
    shift
    mkdir -p "$dir"
    "$WATCH" --dir "$dir" "$@" 2>"$dir/log" &
    watch_pid=$!
    pids+=("$watch_pid")
    if ! wait_for 20 test -e "$dir/ready"; then
        if ! kill -0 "$watch_pid" 2>/dev/null; then
            wait "$watch_pid"
            rc=$?
            [ "$rc" = 77 ] && { echo "SKIP: proc connector unavailable: $(cat "$dir/log")"; exit 77; }
        fi
        fail "ts-procwatch did not come up: $(cat "$dir/log")"
    fi
}

# request_dump DIR: ask the running ts-procwatch for its table and stats
request_dump() {
    rm -f "$1/table" "$1/stats"
    kill -USR1 "$watch_pid" || fail "ts-procwatch died: $(tail -5 "$1/log")"
    wait_for 10 test -e "$1/stats" || fail "no dump from ts-procwatch"
}

stat_of() { awk -v k="$2" '$1 == k { print $2 }' "$1/stats"; }

# ---- 1. what the spawner made is tracked exactly ----
W1=$tmp/w1
start_watch "$W1"
"$SPAWN" scenario "$tmp/expect" &
spawner=$!
pids+=("$spawner")
wait_for 20 test -e "$tmp/expect" || fail "spawner did not set up its tasks"

missing=""
check_expected() {
    request_dump "$W1"
    missing=""
    local line tid
    while IFS= read -r line; do
        if [[ $line == absent$'\t'* ]]; then
            tid=${line#absent$'\t'}
            awk -F'\t' -v t="$tid" '$1 == t { found = 1 } END { exit !found }' "$W1/table" &&
                missing+="still tracked: $line"$'\n'
        else
            grep -Fxq -- "$line" "$W1/table" || missing+="not tracked: $line"$'\n'
        fi
    done <"$tmp/expect"
    [ -z "$missing" ]
}
if ! wait_for 10 check_expected; then
    echo "expected:"; cat "$tmp/expect"
    echo "table rows of the spawner's processes:"
    pgrep -d'|' -P "$spawner" >/dev/null
    awk -F'\t' -v p="$spawner" '$2 == p' "$W1/table"
    fail "$missing"
fi
echo "ok: $(grep -vc '^absent' "$tmp/expect") spawned tasks tracked with TID, TGID, comm and exe; exec'd thread's old TID dropped"
echo "stats after phase 1: $(tr '\n' ' ' <"$W1/stats")"
[ "$(stat_of "$W1" malformed)" = 0 ] || fail "malformed messages from the kernel"

kill -TERM "$spawner"
wait "$spawner"
# the spawner's tasks leave the table through exit events
gone_from_table() {
    request_dump "$W1"
    ! awk -F'\t' -v p="$spawner" '$2 == p { f = 1 } END { exit !f }' "$W1/table"
}
wait_for 10 gone_from_table || fail "spawner's tasks still tracked after it exited"
kill -TERM "$watch_pid"
wait "$watch_pid"

# ---- 2. overflow, rescan, and a table equal to /proc ----
W2=$tmp/w2
# the buffer grows back after the first overflow, as a daemon would do
start_watch "$W2" --rcvbuf 4096 --rcvbuf-after-overflow 8M
overflows=0
for round in $(seq 10); do
    "$SPAWN" storm 500 || fail "fork storm failed"
    request_dump "$W2"
    overflows=$(stat_of "$W2" overflows)
    [ "$overflows" -gt 0 ] && break
done
[ "$overflows" -gt 0 ] || fail "no overflow counted after 10 fork storms with a 4 KiB buffer"
rescans=$(stat_of "$W2" rescans)
[ "$rescans" -ge 2 ] || fail "overflow counted but no rescan (rescans=$rescans)"
echo "ok: $overflows overflow(s) counted, $rescans rescans"

live_tids() {
    local f line st t
    for f in /proc/[0-9]*/task/[0-9]*/stat; do
        { read -r line <"$f"; } 2>/dev/null || continue
        st=${line##*) }
        st=${st:0:1}
        # a zombie has sent its exit event already
        [[ $st == Z || $st == X ]] && continue
        t=${f#/proc/*/task/}
        echo "${t%/stat}"
    done | sort -u
}
# The machine is shared: compare only what was live both before and after the
# dump (must be tracked) and what was live at neither time (must not be).
diffs=""
table_matches_proc() {
    live_tids >"$tmp/l1"
    request_dump "$W2"
    live_tids >"$tmp/l2"
    cut -f1 "$W2/table" | sort -u >"$tmp/d"
    comm -12 "$tmp/l1" "$tmp/l2" | comm -23 - "$tmp/d" >"$tmp/missing"
    sort -u "$tmp/l1" "$tmp/l2" | comm -13 - "$tmp/d" >"$tmp/extra"
    diffs="missing: $(tr '\n' ' ' <"$tmp/missing") extra: $(tr '\n' ' ' <"$tmp/extra")"
    [ ! -s "$tmp/missing" ] && [ ! -s "$tmp/extra" ]
}
wait_for 30 table_matches_proc || fail "table differs from /proc after the storm: $diffs"
echo "ok: table equals /proc ($(wc -l <"$tmp/d") threads tracked)"
echo "stats after phase 2: $(tr '\n' ' ' <"$W2/stats")"
exit 0
