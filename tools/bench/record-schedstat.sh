#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Record /proc/PID/task/TID/schedstat of running programs, as the daemon's
# sampler will read it: the sample sequences behind tests/unit/policy/test-behaviour.c's
# recorded cases (tests/fixtures/behaviour/*.txt) were made with this.
#
# usage: record-schedstat.sh SECONDS INTERVAL_MS PID...
# Prints one line per thread and sample: "MS TID RUN_NS WAIT_NS SLICES",
# MS from bash's EPOCHREALTIME (µs resolution, no fork; the wall clock,
# which does not jump during a recording of seconds).
set -euo pipefail
secs=${1:?usage: record-schedstat.sh SECONDS INTERVAL_MS PID...}
interval_ms=${2:?usage: record-schedstat.sh SECONDS INTERVAL_MS PID...}
shift 2
[ $# -gt 0 ] || { echo "record-schedstat.sh: no PID" >&2; exit 2; }
interval=$(awk -v ms="$interval_ms" 'BEGIN { printf "%.3f", ms / 1000 }')
end=$((SECONDS + secs))
while [ $SECONDS -lt $end ]; do
    # One read of the clock per round: the threads' samples are close enough
    # together for figures over hundreds of milliseconds.
    t=${EPOCHREALTIME/./}
    ms=$((t / 1000))
    for pid in "$@"; do
        for f in /proc/"$pid"/task/*/schedstat; do
            [ -e "$f" ] || continue
            tid=${f%/schedstat}; tid=${tid##*/}
            read -r run wait slices < "$f" 2>/dev/null || continue
            echo "$ms $tid $run $wait $slices"
        done
    done
    sleep "$interval"
done
