#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Wake-up latency of a periodic waker pinned beside a 100% hog on one CPU,
# by the waker's EEVDF slice: the evidence for [packing] jitter_slice and
# max_run_delay. Also the hog's throughput beside it.
#
#   tools/bench/slice.sh BUILD_DIR
#   environment: ROUNDS (5), SECONDS_PER_RUN (10), PERIOD_US (1000),
#                WORK_US (20), WAKERS (1), CPU (0), SLICES ("default 1000 300 100"),
#                NICE (-10: hog and wakers alike, so that other work on a shared
#                machine disturbs the pair less; 0 for a quiet machine)
#   WAKERS=6 PERIOD_US=20000 WORK_US=200 is the jitter of tools/bench/idle.sh,
#   all of it packed beside the hog.
#
# Conditions run interleaved, one round after another, so load from anything
# else on the machine spreads over all of them; each run takes the system
# lock on its own (TS_BENCH_LOCKED=1: the caller holds it already). Prints
# one line per run and a table of medians over the rounds with the range
# (min..max) of each figure across rounds, which shows how noisy it was.
# Numbers, not a test.
set -euo pipefail
BUILD=$(realpath "${1:?usage: $(basename "$0") BUILD_DIR}")
TOOL=$BUILD/bench-slice
[ -x "$TOOL" ] || { echo "$(basename "$0"): $TOOL not built" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "$(basename "$0"): needs root (sched_setattr, pinning beside a hog)" >&2; exit 77; }
ROUNDS=${ROUNDS:-5}
SECS=${SECONDS_PER_RUN:-10}
PERIOD_US=${PERIOD_US:-1000}
WORK_US=${WORK_US:-20}
WAKERS=${WAKERS:-1}
NICE=${NICE:--10}
CPU=${CPU:-0}
SLICES=${SLICES:-default 1000 300 100}
LOCK=/tmp/turbosched-system.lock

TMP=$(mktemp -d "${TMPDIR:-/tmp}/turbosched-bench-slice.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

run() {   # run NAME ARGS...: one measurement into $TMP/NAME.ROUND
    local name=$1 out; shift
    if [ -n "${TS_BENCH_LOCKED:-}" ]; then
        out=$("$TOOL" --cpu "$CPU" --seconds "$SECS" --period-us "$PERIOD_US" --work-us "$WORK_US" --wakers "$WAKERS" --nice "$NICE" "$@")
    else
        out=$(flock "$LOCK" "$TOOL" --cpu "$CPU" --seconds "$SECS" --period-us "$PERIOD_US" --work-us "$WORK_US" --wakers "$WAKERS" --nice "$NICE" "$@")
    fi
    echo "$out" > "$TMP/$name.$round"
    printf '%-14s round %d: %s\n' "$name" "$round" "$(echo "$out" | grep -E '^(lat_p50|lat_p99|lat_max|wait_per|hog_loops_per_s|hog_cpu_share)' | tr '\n' ' ')"
}

conditions=(no-hog hog-only)
for s in $SLICES; do conditions+=("slice-$s"); done

echo "# bench-slice: $WAKERS waker(s) and a hog at nice $NICE on CPU $CPU, period $PERIOD_US µs, work $WORK_US µs per wake-up, $SECS s per run, $ROUNDS rounds"
echo "# kernel $(uname -r), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
for round in $(seq 1 "$ROUNDS"); do
    for c in "${conditions[@]}"; do
        case $c in
        no-hog) run "$c" --no-hog ;;
        hog-only) run "$c" --hog-only ;;
        slice-*) run "$c" --slice-us "${c#slice-}" ;;
        esac
    done
done
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg) at end"

# stat NAME KEY: "median (min..max)" of KEY over the rounds
stat() {
    cat "$TMP/$1".* | awk -F= -v k="$2" '$1 == k { print $2 }' | sort -g |
        awk '{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit }
                                   m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
                                   printf "%.0f (%.0f..%.0f)\n", m, v[1], v[NR] }'
}

echo
echo "Waker latency in µs and run-queue wait per timeslice, median over $ROUNDS runs (min..max across runs);"
echo "hog throughput as a share of the hog alone in the same round (loops/s), median (min..max)."
echo
printf '| %-14s | %-20s | %-20s | %-22s | %-20s | %-18s |\n' condition p50 p99 max "wait/slice" "hog throughput"
printf '|%s|%s|%s|%s|%s|%s|\n' "----------------" "----------------------" "----------------------" "------------------------" "----------------------" "--------------------"
for c in "${conditions[@]}"; do
    [ "$c" = hog-only ] && continue
    tput=-
    if [ "$c" != no-hog ]; then
        # each run against the hog alone in the same round: other load on
        # the machine changes from round to round
        tput=$(for r in $(seq 1 "$ROUNDS"); do
                   paste -d' ' <(awk -F= '$1 == "hog_loops_per_s" { print $2 }' "$TMP/$c.$r") \
                               <(awk -F= '$1 == "hog_loops_per_s" { print $2 }' "$TMP/hog-only.$r")
               done | awk '$2 > 0 { print 100 * $1 / $2 }' | sort -g |
               awk '{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit }
                                          m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
                                          printf "%.1f%% (%.1f..%.1f)\n", m, v[1], v[NR] }')
    fi
    printf '| %-14s | %-20s | %-20s | %-22s | %-20s | %-18s |\n' "$c" "$(stat "$c" lat_p50_us)" "$(stat "$c" lat_p99_us)" \
        "$(stat "$c" lat_max_us)" "$(stat "$c" wait_per_slice_us)" "$tput"
done
