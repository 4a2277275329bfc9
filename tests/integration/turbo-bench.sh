#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# turbo-bench runs its two kinds of threads under the names the example rules
# match, and reports throughput, jitter latency and CPU sets in both formats.
set -euo pipefail

bench="${TS_BUILD_DIR:?}/turbo-bench"
[[ -x "$bench" ]] || { echo "SKIP: $bench not built"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 needed to parse the JSON report"; exit 77; }

tmp=$(mktemp -d)
pid=
cleanup() {
    [[ -n "$pid" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; exit 1; }

# 1. JSON report; while it runs, both thread names must be visible in /proc.
"$bench" -n 1 -m 2 -t 1 --json >"$tmp/report.json" &
pid=$!
seen_i=0 seen_j=0
for _ in $(seq 1 2000); do
    comms=$(cat /proc/"$pid"/task/*/comm 2>/dev/null || true)
    grep -qx tb-intensive <<<"$comms" && seen_i=1
    [[ $(grep -cx tb-jitter <<<"$comms" || true) -ge 2 ]] && seen_j=1
    [[ $seen_i = 1 && $seen_j = 1 ]] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.005
done
[[ $seen_i = 1 ]] || fail "no thread named tb-intensive in /proc/$pid/task/*/comm"
[[ $seen_j = 1 ]] || fail "fewer than 2 threads named tb-jitter in /proc/$pid/task/*/comm"
wait "$pid" || fail "turbo-bench exited with $?"
pid=

python3 - "$tmp/report.json" <<'EOF' || exit 1
import json, re, sys
r = json.load(open(sys.argv[1]))
def fail(m):
    print("FAIL:", m); sys.exit(1)
if r["intensive"] != 1 or r["jitter"] != 2: fail("thread counts not echoed: %r" % r)
if not 0.9 <= r["elapsed_s"] <= 30: fail("elapsed %r for a 1 s run" % r["elapsed_s"])
if r["ended_by"] != "time": fail("ended by %r" % r["ended_by"])
if len(r["ops_per_s_thread"]) != 1 or r["ops_per_s_thread"][0] <= 0: fail("per-thread ops/s %r" % r["ops_per_s_thread"])
if r["ops_per_s_total"] <= 0: fail("total ops/s %r" % r["ops_per_s_total"])
if r["jitter_wakeups"] <= 0: fail("jitter never woke up")
lat = r["latency_us"]
for k in ("p50", "p90", "p99", "max"):
    if k not in lat: fail("latency percentile %s missing" % k)
if not (0 <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"]): fail("percentiles not ordered: %r" % lat)
cpulist = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")
for k in ("cpus_intensive", "cpus_jitter"):
    if not cpulist.match(r[k]): fail("%s is not a CPU list: %r" % (k, r[k]))
print("json report ok:", r["ops_per_s_total"], "ops/s, latency", lat)
EOF

# 2. Text report, ended early by SIGTERM: still a full report, exit 0.
"$bench" -n 1 -m 1 -t 60 >"$tmp/report.txt" &
pid=$!
for _ in $(seq 1 2000); do
    grep -qx tb-jitter /proc/"$pid"/task/*/comm 2>/dev/null && break
    sleep 0.005
done
kill -TERM "$pid"
wait "$pid" || fail "turbo-bench exited with $? after SIGTERM"
pid=
for pat in 'ended by SIGTERM' '^ops/s total: [1-9]' '^jitter latency us: p50 [0-9.]+ p90 [0-9.]+ p99 [0-9.]+ max [0-9.]+$' \
           '^cpus intensive: [0-9]' '^cpus jitter: [0-9]'; do
    grep -Eq "$pat" "$tmp/report.txt" || { cat "$tmp/report.txt"; fail "text report lacks /$pat/"; }
done
echo "text report ok after SIGTERM"

# 3. --uclamp-max0 reports whether the kernel took the clamp: it must where
# uclamp exists (the file below appears only with CONFIG_UCLAMP_TASK).
"$bench" -n 0 -m 1 -t 1 -u >"$tmp/uclamp.txt" || fail "turbo-bench -u exited with $?"
if [[ -e /proc/sys/kernel/sched_util_clamp_max ]]; then
    grep -qx 'jitter uclamp: util_max 0' "$tmp/uclamp.txt" || { cat "$tmp/uclamp.txt"; fail "uclamp not applied on a uclamp kernel"; }
else
    grep -q '^jitter uclamp: failed: ' "$tmp/uclamp.txt" || { cat "$tmp/uclamp.txt"; fail "uclamp failure not reported"; }
fi
echo "uclamp report ok"

# 4. --intensive-duty: the intensive thread sleeps between bursts. Its CPU
# time must stay well under the run time at 40% (a loose bound that noise
# can only help); 0 and 101 are refused.
TIMEFORMAT='%3U %3S %3R'
{ time "$bench" -n 1 -m 0 -d 40 -t 2 >"$tmp/duty.txt"; } 2>"$tmp/duty.time" || fail "turbo-bench -d 40 exited with $?"
read -r u s r <"$tmp/duty.time"
awk -v u="$u" -v s="$s" -v r="$r" 'BEGIN { exit !((u + s) < 0.7 * r) }' || fail "-d 40 used ${u}s+${s}s of CPU in ${r}s"
grep -Eq '^ops/s total: [1-9]' "$tmp/duty.txt" || fail "-d 40 reported no ops"
echo "duty 40%: ${u}s user + ${s}s system in ${r}s"
for d in 0 101; do
    if "$bench" -n 1 -m 0 -d "$d" -t 1 >/dev/null 2>&1; then fail "-d $d accepted"; fi
done
echo "duty ok"
