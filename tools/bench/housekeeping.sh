#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Housekeeping found with no rule: real programs that are jitter (two pings
# on loopback every 200 ms, vmstat 1, a status-bar loop that reads
# /proc/loadavg every 100 ms, a python3 timer loop every 20 ms) beside a
# busy job on CPU 0 (ts-load at 70% of each 10 ms), in alternating rounds:
# no daemon (CFS), everything pinned to CPU 0 by hand (the floor), and the
# daemon as shipped (conf/turbosched.conf, no rule of ours). Counts CPU 1's
# wake-ups and idle time once the daemon has packed them, and the busy
# job's CPU time. The gap closed: (CFS - daemon) / (CFS - pinned).
#
# usage: housekeeping.sh BUILD_DIR [SECONDS] [ROUNDS]
. "$(dirname "$0")/lib.bash"
SECS=${2:-20}
ROUNDS=${3:-3}
IDLE_CPU=1
idle_source_init "$IDLE_CPU"
for tool in ping vmstat python3; do
    command -v "$tool" >/dev/null || { echo "housekeeping.sh: $tool not installed (scripts/install-deps.sh)" >&2; exit 77; }
done

# The shipped configuration, with the socket and state moved to $TMP and
# busy_threshold as in the other benchmarks (the idle CPU runs this harness
# and the VM's background, around the shipped 12.5% here).
shipped_config() {
    grep -v '^ *\(control_socket\|state_file\) *=' "$SRC/conf/turbosched.conf" > "$TMP/turbosched.conf"
    cat >> "$TMP/turbosched.conf" <<CONF
[daemon]
control_socket = $TMP/control
state_file = $STATE_DIR/state
[packing]
busy_threshold = 30%
[classify]
unit_optin = no
CONF
}

PROGS=()
start_programs() {   # start_programs [WRAPPER...]
    local w=("$@")
    "${w[@]}" ping -q -i 0.2 127.0.0.1 >/dev/null & PROGS+=($!)
    "${w[@]}" ping -q -i 0.2 ::1 >/dev/null 2>&1 & PROGS+=($!)
    "${w[@]}" vmstat 1 >/dev/null & PROGS+=($!)
    "${w[@]}" sh -c 'while :; do read -r l < /proc/loadavg; sleep 0.1; done' & PROGS+=($!)
    "${w[@]}" python3 -c 'import time
while True: time.sleep(0.02)' & PROGS+=($!)
}
stop_programs() { kill "${PROGS[@]}" 2>/dev/null || true; wait "${PROGS[@]}" 2>/dev/null || true; PROGS=(); }

# jitter_packed N: N of the programs are jitter and packed
programs_packed() {
    local p n=0
    for p in "${PROGS[@]}"; do
        ctl --json explain "$p" 2>/dev/null | tr -d ' \n' | grep -q '"class":"jitter"' &&
            [ "$(sed -n 's/^Cpus_allowed_list:\s*//p' "/proc/$p/status" 2>/dev/null)" = 0 ] && n=$((n + 1))
    done
    [ "$n" -ge "$1" ]
}

# run_phase off|pinned|daemon: "wakeups_per_s idle_pct hog_cpu_pct packed"
run_phase() {
    local pin=() daemon=0 packed=-
    "$LOAD" -c 0 -d 70 -p 10 -n hk-busy & local hog=$!
    case $1 in
    pinned) pin=(taskset -c 0) ;;
    daemon) shipped_config; daemon_start; daemon=1 ;;
    esac
    start_programs "${pin[@]}"
    if [ $daemon = 1 ]; then
        # the window (10 s) and the plan's hold: generous, then count
        wait_until 60 programs_packed "${#PROGS[@]}" ||
            echo "housekeeping.sh: not all programs were packed within 60 s: $(ctl status 2>&1 | grep -E '^(Plan|Tasks)')" >&2
        packed=0
        local p
        for p in "${PROGS[@]}"; do
            if [ "$(sed -n 's/^Cpus_allowed_list:\s*//p' "/proc/$p/status" 2>/dev/null)" = 0 ]; then
                packed=$((packed + 1))
            else
                # why not, in the daemon's words, for the notes under the table
                { echo "- $(cat "/proc/$p/comm" 2>/dev/null) (round $ROUND):"
                  ctl explain "$p" 2>&1 | grep -E '^ +(why|placement|behaviour|request path|run delay) ' | sed 's/^ */  - /'
                } >> "$TMP/unpacked"
            fi
        done
    else
        sleep 2
    fi
    local h0 h1 u t e
    h0=$(cpu_ns "$hog")
    sleep "$SECS" & local waiter=$!
    idle_while "$waiter"; u=$IDLE_U t=$IDLE_T e=$IDLE_E
    h1=$(cpu_ns "$hog")
    stop_programs
    kill "$hog"; wait "$hog" 2>/dev/null || true
    [ $daemon = 1 ] && daemon_stop
    awk -v u="$u" -v t="$t" -v e="$e" -v h=$((h1 - h0)) -v p="$packed" \
        'BEGIN { printf "%.1f %.1f %.1f %s\n", u / (e / 1e6), 100 * t / e, 100 * h / 1e3 / e, p }'
}

echo "Wake-ups counted from $SOURCE, over ${SECS} s per round once the programs run (with the daemon: once it packed them)."
echo
echo "| round | mode | CPU $IDLE_CPU wake-ups/s | CPU $IDLE_CPU idle | busy job CPU % | programs packed |"
echo "|---|---|---|---|---|---|"
W=() I=() H=()
for r in $(seq "$ROUNDS"); do
    for mode in off daemon pinned; do
        ROUND=$r
        read -r w i h p < <(run_phase "$mode")
        echo "| $r | $mode | $w | $i% | $h | $p |"
        W+=("$mode $w") H+=("$mode $h")
    done
done
# median MODE ROWS...: the median of the values of MODE among "mode value" rows
median() {
    local m=$1; shift
    printf '%s\n' "$@" | awk -v m="$m" '$1 == m { print $2 }' | sort -n |
        awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
if [ -s "$TMP/unpacked" ]; then
    echo
    echo "Programs not packed when the daemon's rounds were counted (60 s after their start), as turbosched-ctl explain gave them:"
    echo
    cat "$TMP/unpacked"
fi
off=$(median off "${W[@]}"); on=$(median daemon "${W[@]}"); pin=$(median pinned "${W[@]}")
hoff=$(median off "${H[@]}"); hon=$(median daemon "${H[@]}")
echo
awk -v off="$off" -v on="$on" -v pin="$pin" -v hoff="$hoff" -v hon="$hon" 'BEGIN {
    printf "Medians: CPU 1 wake-ups/s %s without the daemon, %s with it, %s pinned by hand; the busy job ran %s%% and %s%% of a CPU.\n", off, on, pin, hoff, hon
    if (off > pin) printf "The daemon closed %.1f%% of the gap between CFS and pinning by hand.\n", 100 * (off - on) / (off - pin)
    if (off > pin) printf "housekeeping_gap_closed_pct=%.1f\n", 100 * (off - on) / (off - pin)
    if (hoff > 0) printf "housekeeping_busy_ratio=%.3f\n", hon / hoff }'
