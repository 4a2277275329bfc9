#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What packing costs the jitter's wake-up latency, and what the jitter slice
# and the run-delay guard give back: the idle benchmark's turbo-bench (one
# intensive thread on CPU 0, six jitter threads waking every 20 ms for
# 200 µs) under five conditions, interleaved round by round so that the
# machine's own noise spreads over all of them:
#
#   off          no daemon
#   packed       daemon, jitter_slice = off, max_run_delay = off
#   slice        daemon, jitter_slice = 300us, max_run_delay = off
#   slice+guard  daemon with the shipped settings (300us, 1ms)
#   pinned       no daemon, all of turbo-bench pinned to CPU 0 by hand
#
# For each: the jitter's latency p50/p99/max (turbo-bench, µs), wake-ups of
# the idle CPU 1 per second, and the intensive thread's ops/s; medians over
# the rounds. Run at the intensive thread's duty of 70% (room beside it) and
# 100% (none: the packer does not pack, which the table shows).
#
# usage: guard.sh BUILD_DIR [SECONDS] [ROUNDS] [DUTIES]
. "$(dirname "$0")/lib.bash"
SECS=${2:-10}
ROUNDS=${3:-3}
DUTIES=${4:-70 100}
idle_source_init 1
CONDITIONS=(off packed slice slice+guard pinned)

config_for() {   # config_for CONDITION: the daemon's config for it
    local slice=300us guard=1ms
    case $1 in
    packed) slice=off guard=off ;;
    slice) guard=off ;;
    esac
    bench_config <<CONF
[packing]
busy_threshold = 30%
jitter_slice = $slice
max_run_delay = $guard
[rule turbosched-itself]
comm = turboschedd
class = jitter
[rule turbo-bench-jitter]
comm = tb-jitter*
class = jitter
CONF
}

# run_one CONDITION DUTY: "wakeups_per_s ops_per_s p50 p99 max packed"
# (packed: whether the plan still confined jitter a second before the end;
# at 100% duty it may pack while the intensive thread's load is still being
# measured, then gives up: no room)
run_one() {
    local cond=$1 duty=$2 daemon=0 pin=() packed=0
    case $cond in
    off) ;;
    pinned) pin=(taskset -c 0) ;;
    *) daemon=1; config_for "$cond"; daemon_start ;;
    esac
    "${pin[@]}" "$BUILD/turbo-bench" -n 1 -c 0 -d "$duty" -m 6 -p 20 -w 200 -t "$SECS" --json > "$TMP/tb.json" &
    local tb=$! check=
    if [ $daemon = 1 ]; then
        rm -f "$TMP/packed"
        ( sleep "$((SECS - 1))"; plan_restricted && touch "$TMP/packed" ) &
        check=$!
        # at 100% duty there is no room: the plan does not stay restricted,
        # and the wait may end after 5 s
        wait_until 5 plan_restricted || true
    else
        sleep 1
    fi
    local u t e lat
    idle_while "$tb"; u=$IDLE_U t=$IDLE_T e=$IDLE_E
    if [ $daemon = 1 ]; then
        wait "$check" || true
        [ -e "$TMP/packed" ] && packed=1
        daemon_stop
    fi
    lat=$(sed -n 's/.*"latency_us": *{ *"p50": *\([0-9.]*\), *"p90": *[0-9.]*, *"p99": *\([0-9.]*\), *"max": *\([0-9.]*\).*/\1 \2 \3/p' "$TMP/tb.json" | head -1)
    awk -v u="$u" -v e="$e" -v ops="$(json_num ops_per_s_total "$TMP/tb.json")" \
        -v lat="$lat" -v p="$packed" 'BEGIN { printf "%.1f %.0f %s %d\n", u / (e / 1e6), ops, lat, p }'
}

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) { print "-"; exit }
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.0f\n", m }'; }
col() { awk -v c="$2" '{ print $c }' "$TMP/res.$1"; }

echo "# guard.sh: turbo-bench -n 1 -c 0 -m 6 -p 20 -w 200, $SECS s per run, $ROUNDS rounds; wake-ups of CPU 1 from $SOURCE"
echo "# kernel $(uname -r), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
for duty in $DUTIES; do
    for r in $(seq "$ROUNDS"); do
        for c in "${CONDITIONS[@]}"; do
            line=$(run_one "$c" "$duty")
            echo "$line" >> "$TMP/res.$duty.$c"
            echo "# duty $duty% round $r $c: wake-ups/s ops/s p50 p99 max packed = $line" >&2
        done
    done
done
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg) at end"
echo
echo "Medians over $ROUNDS rounds. Latency of the jitter's wake-ups in µs (turbo-bench); ratios against \"off\" of"
echo "the same duty; wake-ups of the idle CPU 1 per second; \"packed\": rounds in which the plan still confined jitter near the end."
echo
echo "| duty | condition | p50 | p99 | max | p99 / off | max / off | CPU 1 wake-ups/s | fewer than off | intensive ops/s | packed |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for duty in $DUTIES; do
    p99_off=$(col "$duty.off" 4 | median); max_off=$(col "$duty.off" 5 | median); w_off=$(col "$duty.off" 1 | median)
    for c in "${CONDITIONS[@]}"; do
        p50=$(col "$duty.$c" 3 | median); p99=$(col "$duty.$c" 4 | median); max=$(col "$duty.$c" 5 | median)
        w=$(col "$duty.$c" 1 | median); ops=$(col "$duty.$c" 2 | median)
        n_packed=$(col "$duty.$c" 6 | awk '{ s += $1 } END { print s + 0 }')
        case $c in off|pinned) n_packed="–" ;; *) n_packed="$n_packed of $ROUNDS" ;; esac
        awk -v d="$duty" -v c="$c" -v p50="$p50" -v p99="$p99" -v max="$max" -v po="$p99_off" -v mo="$max_off" \
            -v w="$w" -v wo="$w_off" -v ops="$ops" -v np="$n_packed" 'BEGIN {
            printf "| %s%% | %s | %s | %s | %s | %.2fx | %.2fx | %s | %.0f%% | %s | %s |\n", d, c, p50, p99, max,
                   (po > 0 ? p99 / po : 0), (mo > 0 ? max / mo : 0), w, (wo > 0 ? 100 * (1 - w / wo) : 0), ops, np }'
        # machine-readable, for run-all.sh
        key=$(echo "$c" | tr '+' '_')
        echo "guard_${duty}_${key}_p99_ratio=$(awk -v a="$p99" -v b="$p99_off" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')" >> "$TMP/kv"
        echo "guard_${duty}_${key}_max_ratio=$(awk -v a="$max" -v b="$max_off" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')" >> "$TMP/kv"
        echo "guard_${duty}_${key}_fewer_pct=$(awk -v a="$w" -v b="$w_off" 'BEGIN { printf "%.0f", (b > 0 ? 100 * (1 - a / b) : 0) }')" >> "$TMP/kv"
    done
done
cat "$TMP/kv"
