#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Event storm at several rates, turboschedd against cgrulesengd (Debian's
# cgroup-tools) with the equivalent rule, in the same run: a fork+exec storm
# from 2 workers (tools/bench-storm) in which each new task checks, 20 ms
# after its exec, whether it was placed: confined to CPU 0 (turboschedd, with
# CPU 0 kept busy so that its plan packs jitter there; the plan is held by a
# long min_change_interval so the storm's own load cannot undo it), or in a
# cpuset group on CPU 0 (cgrulesengd: as Debian starts it, at nice 0, and
# again at SCHED_FIFO 1 like the daemon's events, where it drops far fewer
# events and so does the same work per task), or by tools/bench-floor, the
# least a placer can spend per exec (a floor for the daemon's CPU per task).
#
# Per rate (paced at RATES execs/s for SECS seconds each, and 0 = unpaced,
# CHILDREN tasks as fast as the workers fork):
#   - the exec rate the storm actually reached;
#   - the share placed within 20 ms, as the probes saw it;
#   - turboschedd's own latency from the kernel's event to the placement
#     (p50/p99 of turbosched_placement_latency_seconds over that storm);
#   - CPU per 1,000 tasks of each listener (schedstat run time), and how long
#     turboschedd waited for a CPU (schedstat run-queue wait) per 1,000 tasks;
#   - the listener's netlink drops (/proc/net/netlink).
# TS_NICE=N runs turboschedd at nice N instead of the shipped default;
# TS_STORM_CONF adds lines to its [daemon] section.
#
# usage: storm.sh BUILD_DIR [CHILDREN]     (RATES="250 500 1000 2000 0" SECS=8)
. "$(dirname "$0")/lib.bash"
N=${2:-20000}
RATES=${RATES:-250 500 1000 2000 0}
SECS=${SECS:-8}
NAME=tsbprobe
CG=/sys/fs/cgroup/cpuset/tsbench
RULES_BACKUP=
MADE=()
cleanup() {
    bench_cleanup
    if [ -n "$RULES_BACKUP" ]; then mv -f "$RULES_BACKUP" /etc/cgrules.conf; elif [ ${#MADE[@]} -gt 0 ]; then rm -f /etc/cgrules.conf; fi
    for p in "${MADE[@]}"; do rm -rf "$p"; done
    [ -d "$CG" ] && rmdir "$CG" 2>/dev/null || true
}
trap cleanup EXIT

# netlink_drops PID: Drops of every netlink socket PID holds (/proc/net/netlink)
netlink_drops() {
    local inodes
    inodes=$(find "/proc/$1/fd" -lname 'socket:*' -printf '%l\n' 2>/dev/null | tr -dc '0-9\n' | sort -u)
    awk -v list="$inodes" 'BEGIN { n = split(list, a, "\n"); for (i = 1; i <= n; i++) want[a[i]] = 1 }
        NR > 1 && ($10 in want) { d += $9 } END { print d + 0 }' /proc/net/netlink
}
# sched PID: "run_ns wait_ns" of all its threads (schedstat)
sched() { cat /proc/"$1"/task/*/schedstat | awk '{ r += $1; w += $2 } END { printf "%.0f %.0f\n", r, w }'; }
children_at() { [ "$1" -eq 0 ] && echo "$N" || echo $(( $1 * SECS )); }
# storm RATE [ARGS]: the storm, key=value lines into $TMP/storm.out
storm() {
    local rate=$1; shift
    "$BUILD/bench-storm" --probe "$TMP/$NAME" --children "$(children_at "$rate")" --workers 2 --rate "$rate" \
        --check-ms 20 --expect 0 "$@" > "$TMP/storm.out"
}
kv() { sed -n "s/^$1=//p" "$TMP/storm.out"; }
# buckets FILE [FAMILY]: "le count" lines of a histogram in a metrics file
buckets() { sed -n "s/^${2:-turbosched_placement_latency_seconds}_bucket{le=\"\([^\"]*\)\"} /\1 /p" "$1"; }
# metric FILE NAME [LABELS]: one sample's value (0 when absent)
metric() { local n=$2; [ -n "${3:-}" ] && n="$2{$3}"; awk -v n="$n" '$1 == n { v = $2 } END { print v + 0 }' "$1"; }
# quantiles BEFORE AFTER: "p50_us p99_us count" of the placements between two
# bucket snapshots, interpolated within a bucket as Prometheus does
quantiles() {
    paste "$1" "$2" | awk '{ le[NR] = $1; c[NR] = $4 - $2 } END {
        n = c[NR]; if (n <= 0) { print "- - 0"; exit }
        split("0.5 0.99", q, " ")
        for (k = 1; k <= 2; k++) {
            rank = q[k] * n; prev = 0; lo = 0
            for (i = 1; i <= NR; i++) {
                if (c[i] >= rank) {
                    if (le[i] == "+Inf") { out[k] = sprintf(">%d", lo * 1e6); break }
                    out[k] = sprintf("%.0f", (lo + (le[i] - lo) * (rank - prev) / (c[i] - prev)) * 1e6); break
                }
                prev = c[i]; lo = le[i]
            }
        }
        print out[1], out[2], n }'
}
per_k() { awk -v ns="$1" -v n="$2" 'BEGIN { if (n > 0) printf "%.1f", ns / 1e6 * 1000 / n; else print "-" }'; }
pct() { awk -v p="$1" -v r="$2" 'BEGIN { if (r > 0) printf "%.2f", 100 * p / r; else print "-" }'; }

cp "$BUILD/bench-storm" "$TMP/$NAME"
"$LOAD" -c 0 -d 60 -p 10 -n tsbhog & PIDS+=($!)

# --- turboschedd, every rate
nice_line=
[ -n "${TS_NICE:-}" ] && nice_line="nice = $TS_NICE"
bench_config <<CONF
[daemon]
$nice_line
${TS_STORM_CONF:-}
[packing]
busy_threshold = 30%
hold_time = 2s
min_change_interval = 60min
[rule storm]
comm = $NAME
class = jitter
CONF
daemon_start
wait_until 30 plan_restricted || { echo "storm.sh: the plan never packed onto CPU 0" >&2; ctl status >&2; exit 1; }
declare -A TS
RUN_RATES=
ceiling=
for rate in $RATES; do
    # A paced rate above one the storm could not reach (90% of it) would
    # only be the unpaced storm again: left out, and said so.
    if [ "$rate" -ne 0 ] && [ -n "$ceiling" ]; then continue; fi
    RUN_RATES+=" $rate"
    ctl metrics > "$TMP/m0"; read -r r0 w0 < <(sched "$DPID"); d0=$(netlink_drops "$DPID")
    read -r v0 nv0 < <(awk '/^voluntary_ctxt/ { v = $2 } /^nonvoluntary_ctxt/ { n = $2 } END { print v, n }' "/proc/$DPID/status")
    storm "$rate"
    read -r r1 w1 < <(sched "$DPID"); d1=$(netlink_drops "$DPID"); ctl metrics > "$TMP/m1"
    read -r v1 nv1 < <(awk '/^voluntary_ctxt/ { v = $2 } /^nonvoluntary_ctxt/ { n = $2 } END { print v, n }' "/proc/$DPID/status")
    buckets "$TMP/m0" > "$TMP/b0"; buckets "$TMP/m1" > "$TMP/b1"
    # the daemon's own profile over the last rate (unpaced when it is run)
    {
        echo "| measure over the $( [ "$rate" -eq 0 ] && echo unpaced || echo "$rate/s") storm | value |"
        echo "|---|---|"
        ev_all=0
        for k in fork exec comm exit; do
            n=$(( $(metric "$TMP/m1" turbosched_events_total "kind=\"$k\"") - $(metric "$TMP/m0" turbosched_events_total "kind=\"$k\"") ))
            ev_all=$((ev_all + n))
            t=$(awk -v a="$(metric "$TMP/m0" turbosched_event_handling_seconds_total "kind=\"$k\"")" \
                    -v b="$(metric "$TMP/m1" turbosched_event_handling_seconds_total "kind=\"$k\"")" -v n="$n" \
                    'BEGIN { if (n > 0) printf "%.1f µs each (%.0f ms in all)", (b - a) * 1e6 / n, (b - a) * 1e3; else print "-" }')
            echo "| $k events | $n, handling $t |"
        done
        wk=$(( $(metric "$TMP/m1" turbosched_event_wakeups_total) - $(metric "$TMP/m0" turbosched_event_wakeups_total) ))
        wt=$(awk -v a="$(metric "$TMP/m0" turbosched_event_wakeups_seconds_total)" -v b="$(metric "$TMP/m1" turbosched_event_wakeups_seconds_total)" 'BEGIN { printf "%.0f", (b - a) * 1e3 }')
        echo "| wake-ups reading the socket | $wk ($(ratio "$ev_all" "$wk") events each), $wt ms in them, reading included |"
        echo "| daemon on CPU / waiting for a CPU | $(( (r1 - r0) / 1000000 )) ms / $(( (w1 - w0) / 1000000 )) ms |"
        echo "| context switches, voluntary / forced | $((v1 - v0)) / $((nv1 - nv0)) |"
        buckets "$TMP/m0" turbosched_event_delay_seconds > "$TMP/q0"
        buckets "$TMP/m1" turbosched_event_delay_seconds > "$TMP/q1"
        read -r q50 q99 qn < <(quantiles "$TMP/q0" "$TMP/q1")
        echo "| event → start of its handling, p50 / p99 | $q50 / $q99 µs ($qn events) |"
    } > "$TMP/profile"
    rep=$(kv reported)
    [ "$rate" -ne 0 ] && awk -v x="$(kv execs_per_s)" -v r="$rate" 'BEGIN { exit !(x < 0.9 * r) }' && ceiling=$(kv execs_per_s)
    TS[$rate]="$(kv execs_per_s) $(pct "$(kv placed)" "$rep") $(quantiles "$TMP/b0" "$TMP/b1") $(per_k $((r1 - r0)) "$rep") $(per_k $((w1 - w0)) "$rep") $((d1 - d0)) $(per_k $((r1 - r0)) "$(kv placed)")"
done
ovf=$(ctl --json status | sed -n 's/^ *"overflows": \([0-9]*\).*/\1/p' | head -1)
dnice=$(awk '{ sub(/^.*\) /, ""); print $17 }' "/proc/$DPID/stat")
daemon_stop

# --- the floor (tools/bench-floor.c): the exec-only socket, a stat read,
# the mask and the slice, nothing else; every rate
declare -A FLOOR
FLOOR_WHY=
# start_floor [WRAPPER...]: bench-floor under WRAPPER as $FPID; fails when
# it does not get ready (its last line says why)
start_floor() {
    "$@" "$BUILD/bench-floor" --comm "$NAME" --cpu 0 > "$TMP/floor.out" 2>&1 &
    FPID=$!; PIDS+=("$FPID")
    floor_ready() { kill -0 "$FPID" 2>/dev/null || return 2; grep -q '^ready=1' "$TMP/floor.out"; }
    wait_until 30 floor_ready
}
if start_floor; then
    for rate in $RUN_RATES; do
        read -r r0 w0 < <(sched "$FPID")
        storm "$rate"
        read -r r1 w1 < <(sched "$FPID")
        FLOOR[$rate]="$(pct "$(kv placed)" "$(kv reported)") $(per_k $((r1 - r0)) "$(kv reported)")"
    done
    kill -TERM "$FPID"; wait "$FPID" 2>/dev/null || true
else
    FLOOR_WHY=$(tail -1 "$TMP/floor.out")
fi

# --- cgrulesengd, every rate: as Debian starts it (nice 0), then on the
# daemon's footing (SCHED_FIFO 1, where it keeps up far better and so does
# the work per task the daemon does)
declare -A CGR CGRF
# start_cgr [WRAPPER...]: cgrulesengd under WRAPPER as $CGPID, listening
start_cgr() {
    "$@" cgrulesengd -n -Q >"$TMP/cgrulesengd.log" 2>&1 &
    CGPID=$!; PIDS+=("$CGPID")
    listening() { [ "$(find "/proc/$CGPID/fd" -lname 'socket:*' 2>/dev/null | wc -l)" -ge 1 ]; }
    wait_until 30 listening || { echo "storm.sh: cgrulesengd did not start" >&2; cat "$TMP/cgrulesengd.log" >&2; exit 1; }
}
# run_cgr ARRAY [WRAPPER...]: cgrulesengd under WRAPPER, every rate, into ARRAY
run_cgr() {
    local -n into=$1; shift
    start_cgr "$@"
    for rate in $RUN_RATES; do
        read -r r0 w0 < <(sched "$CGPID"); d0=$(netlink_drops "$CGPID")
        storm "$rate" --cgroup /tsbench
        read -r r1 w1 < <(sched "$CGPID"); d1=$(netlink_drops "$CGPID")
        into[$rate]="$(kv execs_per_s) $(pct "$(kv placed)" "$(kv reported)") $(per_k $((r1 - r0)) "$(kv reported)") $((d1 - d0)) $(per_k $((r1 - r0)) "$(kv placed)")"
    done
    kill -TERM "$CGPID"; wait "$CGPID" 2>/dev/null || true
}
if command -v cgrulesengd >/dev/null && [ -d /sys/fs/cgroup/cpuset ]; then
    [ -e /etc/cgrules.conf ] && { RULES_BACKUP=$TMP/cgrules.conf.orig; cp -p /etc/cgrules.conf "$RULES_BACKUP"; }
    [ -e /etc/cgrules.conf ] || MADE+=(/etc/cgrules.conf)
    mkdir -p "$CG"
    echo 0 > "$CG/cpuset.cpus"
    cat /sys/fs/cgroup/cpuset/cpuset.mems > "$CG/cpuset.mems"
    echo "*:$NAME cpuset tsbench/" > /etc/cgrules.conf
    [ -e /etc/cgconfig.conf ] || { touch /etc/cgconfig.conf; MADE+=(/etc/cgconfig.conf); }
    [ -e /etc/cgconfig.d ] || { mkdir /etc/cgconfig.d; MADE+=(/etc/cgconfig.d); }
    run_cgr CGR
    run_cgr CGRF chrt -f 1
fi

# --- each placer pinned to one CPU, unpaced. Where a placer sits decides
# much of its cost: on the CPU where the new tasks exec, each exec wakes it
# there, preempting the task, and the task moves without the migration
# thread; from another CPU each move wakes that thread and waits for it.
# Unpinned, which CPU each placer settled on was luck (turboschedd: 45-49 ms
# per 1,000 tasks when on CPU 1, 84-86 ms when on CPU 0).
declare -A PIN
# pin_cost KEY PID [STORM ARGS]: one unpaced storm, "placed% cpu" into PIN[KEY]
pin_cost() {
    local key=$1 pid=$2 r0 w0 r1 w1; shift 2
    read -r r0 w0 < <(sched "$pid")
    storm 0 "$@"
    read -r r1 w1 < <(sched "$pid")
    PIN[$key]="$(pct "$(kv placed)" "$(kv reported)") $(per_k $((r1 - r0)) "$(kv reported)")"
}
if [ -n "${TS[0]:-}" ]; then
    for cpu in ${PIN_CPUS:-0 1}; do
        daemon_start taskset -c "$cpu"
        wait_until 30 plan_restricted && pin_cost "ts$cpu" "$DPID"
        daemon_stop
        if [ -z "$FLOOR_WHY" ]; then
            start_floor taskset -c "$cpu" && pin_cost "floor$cpu" "$FPID"
            kill -TERM "$FPID"; wait "$FPID" 2>/dev/null || true
        fi
        if [ -n "${CGRF[0]:-}" ]; then
            start_cgr taskset -c "$cpu" chrt -f 1
            pin_cost "cgr$cpu" "$CGPID" --cgroup /tsbench
            kill -TERM "$CGPID"; wait "$CGPID" 2>/dev/null || true
        fi
    done
fi

echo "| rate asked | execs/s reached | placed ≤ 20 ms | p50 / p99 from the kernel's event | CPU per 1,000 tasks (per 1,000 placed) | waited for a CPU per 1,000 | drops | cgrulesengd: execs/s, placed, CPU per 1,000 (per 1,000 placed), drops | CPU ratio per task (per task placed) |"
echo "|---|---|---|---|---|---|---|---|---|"
for rate in $RATES; do
    if [ -z "${TS[$rate]:-}" ]; then
        echo "| $rate | not reached: the storm peaked at ${ceiling}/s at a lower rate | | | | | | | |"
        continue
    fi
    read -r x pl p50 p99 cnt cpu wait drops cpupl <<< "${TS[$rate]}"
    cg="not installed or no v1 cpuset hierarchy"; ratio_s="-"
    if [ -n "${CGR[$rate]:-}" ]; then
        read -r cx cpl ccpu cdrops ccpupl <<< "${CGR[$rate]}"
        cg="$cx/s, $cpl%, $ccpu ms ($ccpupl ms), $cdrops"
        ratio_s=$(awk -v a="$cpu" -v b="$ccpu" -v ap="$cpupl" -v bp="$ccpupl" \
            'BEGIN { if (b > 0) printf "%.2fx", a / b; else printf "-"; if (bp > 0) printf " (%.2fx)", ap / bp }')
    fi
    label=$rate; [ "$rate" -eq 0 ] && label="unpaced"
    echo "| $label | $x | $pl% | $p50 / $p99 µs ($cnt timed) | $cpu ms ($cpupl ms) | $wait ms | $drops | $cg | $ratio_s |"
done
echo
echo "The same storms placed by cgrulesengd on the daemon's footing (SCHED_FIFO 1), and by"
echo "bench-floor, the least a placer can do per exec (the exec-only socket, a stat read, the mask"
echo "and the slice; no fork or exit events, no table, no state file, no tick, nothing undone):"
echo
echo "| rate asked | cgrulesengd at SCHED_FIFO 1: execs/s, placed, CPU per 1,000 (per 1,000 placed), drops | turboschedd's CPU per task against it (per task placed) | bench-floor: placed, CPU per 1,000 | turboschedd's CPU per task against it |"
echo "|---|---|---|---|---|"
for rate in $RUN_RATES; do
    read -r x pl p50 p99 cnt cpu wait drops cpupl <<< "${TS[$rate]}"
    cg="-"; cgr="-"; fl="${FLOOR_WHY:-not run}"; flr="-"
    if [ -n "${CGRF[$rate]:-}" ]; then
        read -r cx cpl ccpu cdrops ccpupl <<< "${CGRF[$rate]}"
        cg="$cx/s, $cpl%, $ccpu ms ($ccpupl ms), $cdrops"
        cgr=$(awk -v a="$cpu" -v b="$ccpu" -v ap="$cpupl" -v bp="$ccpupl" \
            'BEGIN { if (b > 0) printf "%.2fx", a / b; else printf "-"; if (bp > 0) printf " (%.2fx)", ap / bp }')
    fi
    if [ -n "${FLOOR[$rate]:-}" ]; then
        read -r fpl fcpu <<< "${FLOOR[$rate]}"
        fl="$fpl%, $fcpu ms"
        flr=$(awk -v a="$cpu" -v b="$fcpu" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else printf "-" }')
    fi
    label=$rate; [ "$rate" -eq 0 ] && label="unpaced"
    echo "| $label | $cg | $cgr | $fl | $flr |"
done
echo
echo "Unpaced, each placer pinned to one CPU in turn (CPU 0 is where the storm is packed):"
echo
echo "| placers on | turboschedd: placed, CPU per 1,000 | cgrulesengd at SCHED_FIFO 1 | bench-floor | turboschedd against cgrulesengd, against the floor |"
echo "|---|---|---|---|---|"
for cpu in ${PIN_CPUS:-0 1}; do
    [ -n "${PIN[ts$cpu]:-}" ] || continue
    read -r tpl tcpu <<< "${PIN[ts$cpu]}"
    cg="-"; ccpu=; fl="-"; fcpu=
    [ -n "${PIN[cgr$cpu]:-}" ] && { read -r cpl ccpu <<< "${PIN[cgr$cpu]}"; cg="$cpl%, $ccpu ms"; }
    [ -n "${PIN[floor$cpu]:-}" ] && { read -r fpl fcpu <<< "${PIN[floor$cpu]}"; fl="$fpl%, $fcpu ms"; }
    echo "| CPU $cpu | $tpl%, $tcpu ms | $cg | $fl | $(awk -v a="$tcpu" -v b="$ccpu" -v f="$fcpu" \
        'BEGIN { if (b > 0) printf "%.2fx", a / b; else printf "-"; printf ", "; if (f > 0) printf "%.2fx", a / f; else printf "-" }') |"
    echo "storm_pinned_cpu${cpu}_ratio_cgrulesengd=$(awk -v a="$tcpu" -v b="$ccpu" 'BEGIN { if (b > 0) printf "%.2f", a / b }')" >> "$TMP/kv"
done
echo
cat "$TMP/profile"
echo
echo "Paced rates for ${SECS} s each (CHILDREN = rate x ${SECS}), unpaced $N children; 2 workers, each task checks 20 ms after its exec;"
echo "CPU 0 kept 60% busy; turboschedd at nice $dnice; overflows counted by the daemon: ${ovf:-0}."
[ -e "$TMP/kv" ] && cat "$TMP/kv"
if [ -n "${TS[0]:-}" ]; then
    read -r x pl p50 p99 cnt cpu wait drops cpupl <<< "${TS[0]}"
    echo "placed_pct_turboschedd=$pl"
    echo "storm_execs_per_s=$x"
    echo "storm_latency_p99_us=$p99"
    echo "storm_cpu_per_1000_ms=$cpu"
    echo "storm_cpu_per_1000_placed_ms=$cpupl"
    if [ -n "${CGR[0]:-}" ]; then
        read -r cx cpl ccpu cdrops ccpupl <<< "${CGR[0]}"
        echo "storm_cgrulesengd_cpu_per_1000_ms=$ccpu"
        echo "storm_cgrulesengd_cpu_per_1000_placed_ms=$ccpupl"
    fi
    if [ -n "${FLOOR[0]:-}" ]; then
        read -r fpl fcpu <<< "${FLOOR[0]}"
        echo "storm_floor_cpu_per_1000_ms=$fcpu"
    fi
    if [ -n "${CGRF[0]:-}" ]; then
        read -r cx cpl ccpu cdrops ccpupl <<< "${CGRF[0]}"
        echo "storm_cgrulesengd_fifo_placed_pct=$cpl"
        echo "storm_cgrulesengd_fifo_cpu_per_1000_ms=$ccpu"
    fi
fi
