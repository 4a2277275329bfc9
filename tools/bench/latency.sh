#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# exec -> placement latency on an otherwise idle machine: one new jitter
# task at a time (tools/bench-latency) polls its own affinity from its first
# instruction until turboschedd has confined it to CPU 0 (kept busy so that
# the plan packs there). Reports p50/p99/max of the time from just before
# exec to the first call that saw the confined mask, beside the time to its
# first call at all (what exec itself costs: the baseline).
#
# usage: latency.sh BUILD_DIR [SAMPLES]
. "$(dirname "$0")/lib.bash"
SAMPLES=${2:-500}
NAME=tsblatprobe

cp "$BUILD/bench-latency" "$TMP/$NAME"
"$LOAD" -c 0 -d 60 -p 10 -n tsbhog & PIDS+=($!)
bench_config <<CONF
[packing]
busy_threshold = 30%
hold_time = 2s
min_change_interval = 60min
[rule probe]
comm = $NAME
class = jitter
CONF
daemon_start
wait_until 30 plan_restricted || { echo "latency.sh: the plan never packed onto CPU 0" >&2; exit 1; }
"$BUILD/bench-latency" --probe "$TMP/$NAME" --samples "$SAMPLES" --interval-ms 20 --expect 0 > "$TMP/lat.out"
daemon_stop
kv() { sed -n "s/^$1=//p" "$TMP/lat.out"; }

echo "| measure | p50 µs | p99 µs | max µs |"
echo "|---|---|---|---|"
echo "| exec → first affinity read (baseline) | $(kv first_p50_us) | $(kv first_p99_us) | $(kv first_max_us) |"
echo "| exec → confined by turboschedd (upper bound) | $(kv placed_p50_us) | $(kv placed_p99_us) | $(kv placed_max_us) |"
echo "| first read → confined (lower bound) | $(kv after_first_p50_us) | $(kv after_first_p99_us) | $(kv after_first_max_us) |"
echo
echo "exec completes, and the daemon hears of it, between the probe's clock reading"
echo "before execve() and its first affinity read; the daemon's own latency lies"
echo "between the two bounds. Confined already at the first read: $(kv placed_at_first) of $(kv placed)."
echo "$(kv samples) execs, one every 20 ms; placed $(kv placed), never placed within the timeout $(kv lost)."
echo "latency_p99_us=$(kv placed_p99_us)"
echo "latency_after_first_p99_us=$(kv after_first_p99_us)"
