#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Request paths on the real kernel, with no rule: a socket ping-pong (a
# client sending a request every 10 ms and a server answering it, over a
# unix socketpair and over TCP on loopback) is as light and frequent as a
# timer loop, and is never packed by behaviour; the timer loop beside it is.
# explain says why for each. With request_paths = no the same pair is packed
# (the test would notice a check that found nothing).
. "$(dirname "$0")/lib.bash"
require_root
[ "$(nproc)" -ge 2 ] || skip "needs 2 online CPUs"
ALL=$(all_cpus)
[ "$ALL" = "0-1" ] || skip "written for a 2-CPU machine (online: $ALL)"
PINGPONG="$TS_BUILD_DIR/ts-pingpong"
[ -x "$PINGPONG" ] || skip "ts-pingpong not built"

run_round() {   # run_round EXTRA_CLASSIFY_LINES
    # tail_guard off: the packed timer loop must stay packed while the pairs
    # are watched (the guard is test-reqpath's)
    write_config <<CONF
behaviour_window = 2s
tail_guard = no
$1
CONF
    grep -q '^\[rule' "$TMP/turbosched.conf" && { echo "the test config must hold no rule"; exit 1; }
    harness_on_cpu0
    check "daemon starts" start_daemon || return 1
    spawn HOG "$LOAD" -c 0 -d "$HOG_DUTY" -p 10 -n rphog$$
    NAME="rp$$"
    spawn TIMER taskset -c 0-1 "$LOAD" -d 1 -p 10 -n "${NAME}tm"
    spawn PAIR taskset -c 0-1 "$PINGPONG" -p 10 -n "${NAME}u"
    spawn TPAIR taskset -c 0-1 "$PINGPONG" -p 10 -n "${NAME}t" -t
    # The servers are the pairs' children, forked after taskset ran.
    child_of() { pgrep -P "$1" | head -1; }
    have_children() { SRV=$(child_of "$PAIR"); TSRV=$(child_of "$TPAIR"); [ -n "$SRV" ] && [ -n "$TSRV" ]; }
    check "both pairs forked their servers" wait_for 30 have_children || return 1
    PAIRS=("$PAIR" "$SRV" "$TPAIR" "$TSRV")
    pairs_on_all() { local p; for p in "${PAIRS[@]}"; do affinity_is "$p" "$ALL" || return 1; done; }
    check "pairs start on both CPUs" wait_for 30 pairs_on_all
}

# --- request_paths = yes (the default) ---------------------------------------
run_round "" || finish
check "timer loop confined to CPU 0 (jitter by behaviour)" wait_for 30 affinity_is "$TIMER" 0
# Watch the pairs for three windows after the timer loop was packed: the
# plan is in force, so a pair judged jitter would be confined at once.
never_confined() {
    local deadline=$(( $(now_us) + $1 * 1000000 )) p
    while [ "$(now_us)" -lt "$deadline" ]; do
        for p in "${PAIRS[@]}"; do
            affinity_is "$p" 0 && { echo "  pid $p ($(cat /proc/$p/comm 2>/dev/null)) confined to CPU 0"; return 1; }
        done
        nap 0.05
    done
}
check "socket pairs never confined (three windows)" never_confined 6
explain_has() { ctl explain "$1" 2>/dev/null | tee -a "$TMP/explain.log" | grep -q "$2"; }
check "unix client: explain says it serves (connected unix stream)" explain_has "$PAIR" "request path.*serves: holds a connected unix stream socket"
check "unix server: the same" explain_has "$SRV" "request path.*serves: holds a connected unix stream socket"
check "tcp client: explain says it holds a local tcp connection" explain_has "$TPAIR" "request path.*serves: holds a tcp connection to a local peer"
check "tcp server: explain says it serves" explain_has "$TSRV" "request path.*serves: .*tcp"
check "timer loop: explain shows its timer" explain_has "$TIMER" "request path.*serves no one; a thread was last found in clock_nanosleep"
check "status counts the holds" bash -c "'$CTL' --socket '$TMP/control' status | grep -q 'Request paths: jitter held back [1-9]'"
kill "$TIMER" "$PAIR" "$TPAIR" "$HOG" 2>/dev/null; wait "$TIMER" "$PAIR" "$TPAIR" "$HOG" 2>/dev/null
check "daemon stops" stop_daemon TERM

# --- request_paths = no: the same pairs are packed, so the check above can fail
run_round "request_paths = no" || finish
pairs_on0() { local p; for p in "${PAIRS[@]}"; do affinity_is "$p" 0 || return 1; done; }
check "request_paths = no: the pairs are confined like any light program" wait_for 30 pairs_on0
kill "$TIMER" "$PAIR" "$TPAIR" "$HOG" 2>/dev/null; wait "$TIMER" "$PAIR" "$TPAIR" "$HOG" 2>/dev/null
check "daemon stops" stop_daemon TERM
finish
