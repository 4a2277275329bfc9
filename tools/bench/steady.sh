#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Steady state: turboschedd's CPU time per second and RSS at the default
# tick with 0 (baseline), 1,000 and 10,000 extra tracked threads
# (tools/bench-threads: sleeping threads, one in ten named for a jitter rule
# so that the daemon samples it every tick).
#
# usage: steady.sh BUILD_DIR [SECONDS]
# TS_STEADY_CONF: extra [classify] lines, e.g. 'behaviour = no' to measure
# without classification by behaviour (on by default).
# TS_STEADY_SETTLE: seconds from the daemon's start to the measurement
# (default 3: the start-up scan is over, but the behaviour reads are still
# in their first rounds; a thread that sleeps through them is read half as
# often each time, down to once a minute after about two minutes).
. "$(dirname "$0")/lib.bash"
SECS=${2:-20}
SETTLE=${TS_STEADY_SETTLE:-3}

bench_config <<CONF
${TS_STEADY_CONF:-}
[rule bench-jitter]
comm = tsst-jitter
class = jitter
CONF

# measure N: "cpu_pct rss_kib tracked" with N extra threads
measure() {
    local n=$1 tp=
    if [ "$n" -gt 0 ]; then
        "$BUILD/bench-threads" -n "$n" > "$TMP/threads.out" & tp=$!; PIDS+=("$tp")
        wait_until 60 grep -q ready "$TMP/threads.out"
    fi
    daemon_start
    sleep "$SETTLE"     # let the start-up scan and the first plans pass
    local t0 t1 s0 s1
    t0=$(cpu_ns "$DPID"); s0=$(date +%s%N)
    sleep "$SECS"
    t1=$(cpu_ns "$DPID"); s1=$(date +%s%N)
    local rss tracked
    rss=$(rss_kib "$DPID")
    tracked=$(ctl --json status | sed -n 's/^ *"tracked": \([0-9]*\).*/\1/p' | head -1)
    daemon_stop
    [ -n "$tp" ] && { kill "$tp"; wait "$tp" 2>/dev/null || true; }
    awk -v d=$((t1 - t0)) -v ns=$((s1 - s0)) -v r="$rss" -v t="$tracked" \
        'BEGIN { printf "%.3f %d %d\n", 100 * d / ns, r, t }'
}

echo "| extra threads | tracked | CPU % of one CPU | RSS MiB | CPU vs baseline | RSS vs baseline |"
echo "|---|---|---|---|---|---|"
kv=
read -r c0 r0 k0 < <(measure 0)
for n in 0 1000 10000; do
    if [ "$n" -eq 0 ]; then c=$c0 r=$r0 k=$k0; else read -r c r k < <(measure "$n"); fi
    awk -v n="$n" -v k="$k" -v c="$c" -v r="$r" -v c0="$c0" -v r0="$r0" 'BEGIN {
        printf "| %d | %d | %.3f | %.1f | %s | %.2fx |\n", n, k, c, r / 1024,
               (c0 > 0 ? sprintf("%.2fx", c / c0) : "n/a"), r / r0 }'
    kv="$kv
steady_cpu_pct_$n=$c
steady_rss_mib_$n=$(awk -v r="$r" 'BEGIN { printf "%.1f", r / 1024 }')"
done
echo "$kv"
echo
echo "Default tick (250 ms); CPU time from /proc/PID/task/*/schedstat over ${SECS} s, from ${SETTLE} s after the start."
