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
# (default 3: the start-up scan is over, but the first reads of threads are
# still under way: those of a process not seen running at most 16 a tick,
# SAMPLER_CATCHUP_READS_PER_TICK, so 10,000 sleeping threads for about 2.6
# minutes; docs/hacking.md, "What costs time at steady state").
# TS_STEADY_THREADS: the numbers of extra threads to measure (default
# "0 1000 10000"; the CPU vs baseline column needs 0 among them).
# TS_STEADY_CURVE: seconds; instead of the table, the daemon's CPU in
# windows of TS_STEADY_STEP seconds (default 20) from its start up to
# there, and the reads its tick made per second in each (the counters of
# turbosched_thread_reads_total): where the first minutes after a start
# cost more than the settled state, and how long they take.
. "$(dirname "$0")/lib.bash"
SECS=${2:-20}
SETTLE=${TS_STEADY_SETTLE:-3}
THREADS=${TS_STEADY_THREADS:-0 1000 10000}
CURVE=${TS_STEADY_CURVE:-}
STEP=${TS_STEADY_STEP:-20}

bench_config <<CONF
${TS_STEADY_CONF:-}
[rule bench-jitter]
comm = tsst-jitter
class = jitter
CONF

# threads_start N: N extra sleeping threads (TP: their process, or empty)
threads_start() {
    TP=
    [ "$1" -gt 0 ] || return 0
    "$BUILD/bench-threads" -n "$1" > "$TMP/threads.out" & TP=$!; PIDS+=("$TP")
    wait_until 60 grep -q ready "$TMP/threads.out"
}
threads_stop() { [ -z "$TP" ] || { kill "$TP"; wait "$TP" 2>/dev/null || true; }; }

# measure N: "cpu_pct rss_kib tracked" with N extra threads
measure() {
    local n=$1 tp
    threads_start "$n"; tp=$TP
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
    TP=$tp; threads_stop
    awk -v d=$((t1 - t0)) -v ns=$((s1 - s0)) -v r="$rss" -v t="$tracked" \
        'BEGIN { printf "%.3f %d %d\n", 100 * d / ns, r, t }'
}

# reads: "behaviour jitter process spared", the tick's reads so far
reads() {
    ctl metrics | awk '$1 ~ /^turbosched_thread_reads_total\{read="/ {
        k = $1; sub(/^[^"]*"/, "", k); sub(/".*$/, "", k); v[k] = $2 }
        END { printf "%d %d %d %d\n", v["behaviour"], v["jitter"], v["process"], v["spared"] }'
}

# curve N: one row per STEP-second window from the daemon's start to CURVE s
curve() {
    local n=$1 begin k end c0 c1 b0 j0 p0 x0 b1 j1 p1 x1 now
    threads_start "$n"
    begin=$(date +%s%N)
    daemon_start
    c0=0 b0=0 j0=0 p0=0 x0=0
    for ((k = STEP; k <= CURVE; k += STEP)); do
        end=$((begin + k * 1000000000))
        now=$(date +%s%N)
        [ "$now" -ge "$end" ] || sleep "$(awk -v d=$((end - now)) 'BEGIN { printf "%.3f", d / 1e9 }')"
        c1=$(cpu_ns "$DPID")
        read -r b1 j1 p1 x1 < <(reads)
        awk -v n="$n" -v a=$((k - STEP)) -v z="$k" -v c=$((c1 - c0)) -v s="$STEP" \
            -v b=$((b1 - b0)) -v j=$((j1 - j0)) -v p=$((p1 - p0)) -v x=$((x1 - x0)) 'BEGIN {
            printf "| %d | %d-%d | %.3f | %.1f | %.1f | %.2f | %.0f |\n", n, a, z,
                   100 * c / (s * 1e9), b / s, j / s, p / s, x / s }'
        echo "steady_curve_cpu_pct_${n}_$k=$(awk -v c=$((c1 - c0)) -v s="$STEP" 'BEGIN { printf "%.3f", 100 * c / (s * 1e9) }')" >> "$TMP/curve.kv"
        c0=$c1 b0=$b1 j0=$j1 p0=$p1 x0=$x1
    done
    daemon_stop
    threads_stop
}

if [ -n "$CURVE" ]; then
    echo "| extra threads | window (s from start) | CPU % of one CPU | behaviour reads/s | jitter reads/s | process reads/s | reads spared/s |"
    echo "|---|---|---|---|---|---|---|"
    : > "$TMP/curve.kv"
    for n in $THREADS; do curve "$n"; done
    echo
    cat "$TMP/curve.kv"
    echo
    echo "Default tick (250 ms); CPU time from /proc/PID/task/*/schedstat in ${STEP} s windows from the daemon's start (the first holds its start-up scan); reads from turbosched_thread_reads_total."
    exit 0
fi

echo "| extra threads | tracked | CPU % of one CPU | RSS MiB | CPU vs baseline | RSS vs baseline |"
echo "|---|---|---|---|---|---|"
kv=
c0=0 r0=0
for n in $THREADS; do
    read -r c r k < <(measure "$n")
    [ "$n" -ne 0 ] || { c0=$c r0=$r; }
    awk -v n="$n" -v k="$k" -v c="$c" -v r="$r" -v c0="$c0" -v r0="$r0" 'BEGIN {
        printf "| %d | %d | %.3f | %.1f | %s | %s |\n", n, k, c, r / 1024,
               (c0 > 0 ? sprintf("%.2fx", c / c0) : "n/a"), (r0 > 0 ? sprintf("%.2fx", r / r0) : "n/a") }'
    kv="$kv
steady_cpu_pct_$n=$c
steady_rss_mib_$n=$(awk -v r="$r" 'BEGIN { printf "%.1f", r / 1024 }')"
done
echo "$kv"
echo
echo "Default tick (250 ms); CPU time from /proc/PID/task/*/schedstat over ${SECS} s, from ${SETTLE} s after the start."
