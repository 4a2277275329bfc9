#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The storm's shape, at full speed: turboschedd, cgrulesengd at SCHED_FIFO 1
# (the daemon's footing) and tools/bench-floor (the least a placer spends per
# exec) placing the same unpaced fork+exec storms (tools/bench-storm, 2
# workers), one shape after the other, in one run:
#   - how long each child lives after its exec (LIFETIMES, ms);
#   - how many children each worker keeps outstanding (INFLIGHTS);
#   - the busy load: none, or CPU 0 kept busy (LOADS, % of one CPU).
# storm.sh's setup otherwise: a rule makes the children jitter, the plan
# packs jitter on CPU 0 and is held (min_change_interval); with no load the
# plan is made with the load and held after it stops.
#
# Per shape and listener: tasks placed within 20 ms of their exec, and CPU
# (schedstat run time) per 1,000 tasks and per 1,000 placed. A child that
# lives 20 ms or more checks its own mask 20 ms after its exec; one that
# lives less cannot, and placement is then judged by the placer's own clock:
# turboschedd's turbosched_placement_latency_seconds (kernel timestamp of the
# exec event → the mask set) up to its 20 ms bucket, bench-floor's count of
# the same; cgrulesengd keeps no such count ("-"). The daemon's p99 is from
# that histogram in every shape. A second table gives the daemon's own
# profile per shape: handling time per exec, wake-ups, per-thread reads, and
# its cost per second with no storm, measured for IDLE_S seconds right
# before each storm: at a few dozen execs a second that cost, which comes
# whatever the storm, is a good part of the first table's figure.
#
# Children per shape: CHILDREN, fewer where the lifetime bounds the rate
# (2 workers x INFLIGHT children alive for the lifetime: at most SECS seconds
# of that rate). QUICK=1: 1,500 children, SECS=2, for a look in minutes.
#
# usage: storm-shape.sh BUILD_DIR [CHILDREN]
#        (LIFETIMES="0 20 200" INFLIGHTS="8 64 512" LOADS="0 70" SECS=6 QUICK= IDLE_S=2)
. "$(dirname "$0")/lib.bash"
if [ -n "${QUICK:-}" ]; then N=${2:-1500}; SECS=${SECS:-2}; else N=${2:-8000}; SECS=${SECS:-6}; fi
LIFETIMES=${LIFETIMES:-0 20 200}
INFLIGHTS=${INFLIGHTS:-8 64 512}
LOADS=${LOADS:-0 70}
LISTENERS=${LISTENERS:-ts cgr floor}
IDLE_S=${IDLE_S:-2}
WORKERS=2
NAME=tsbprobe
CG=/sys/fs/cgroup/cpuset/tsbench
RULES_BACKUP=
MADE=()
HOG=
cleanup() {
    bench_cleanup
    if [ -n "$RULES_BACKUP" ]; then mv -f "$RULES_BACKUP" /etc/cgrules.conf; elif [ ${#MADE[@]} -gt 0 ]; then rm -f /etc/cgrules.conf; fi
    for p in "${MADE[@]}"; do rm -rf "$p"; done
    [ -d "$CG" ] && rmdir "$CG" 2>/dev/null || true
}
trap cleanup EXIT

sched() { cat /proc/"$1"/task/*/schedstat | awk '{ r += $1; w += $2 } END { printf "%.0f %.0f\n", r, w }'; }
# vswitches PID: its threads' voluntary context switches (each a sleep, so a wake-up: timers' too)
vswitches() { cat /proc/"$1"/task/*/status | awk '/^voluntary_ctxt_switches/ { v += $2 } END { print v + 0 }'; }
children_of() {   # children_of LIFETIME INFLIGHT
    awk -v n="$N" -v l="$1" -v i="$2" -v w="$WORKERS" -v s="$SECS" 'BEGIN {
        c = n; if (l > 0) { cap = int(w * i * 1000 / l * s); if (cap < c) c = cap }
        if (c < 100) c = 100; print c }'
}
# storm LIFETIME INFLIGHT [ARGS]: key=value lines into $TMP/storm.out
storm() {
    local l=$1 i=$2; shift 2
    "$BUILD/bench-storm" --probe "$TMP/$NAME" --children "$(children_of "$l" "$i")" --workers $WORKERS --rate 0 \
        --check-ms 20 --lifetime-ms "$l" --inflight "$i" --expect 0 "$@" > "$TMP/storm.out"
}
kv() { sed -n "s/^$1=//p" "${2:-$TMP/storm.out}" | head -1; }
buckets() { sed -n "s/^${2:-turbosched_placement_latency_seconds}_bucket{le=\"\([^\"]*\)\"} /\1 /p" "$1"; }
metric() { local n=$2; [ -n "${3:-}" ] && n="$2{$3}"; awk -v n="$n" '$1 == n { v = $2 } END { print v + 0 }' "$1"; }
# metric_sum FILE NAME: the sum over every label set of NAME
metric_sum() { awk -v n="$2" 'index($1, n "{") == 1 || $1 == n { s += $2 } END { print s + 0 }' "$1"; }
delta() { echo $(( $(metric "$TMP/m1" "$@") - $(metric "$TMP/m0" "$@") )); }
quantile() {   # quantile BEFORE AFTER Q: µs, interpolated within a bucket
    paste "$1" "$2" | awk -v q="$3" '{ le[NR] = $1; c[NR] = $4 - $2 } END {
        n = c[NR]; if (n <= 0) { print "-"; exit }
        rank = q * n; prev = 0; lo = 0
        for (i = 1; i <= NR; i++) if (c[i] >= rank) {
            if (le[i] == "+Inf") { printf ">%d\n", lo * 1e6; exit }
            printf "%.0f\n", (lo + (le[i] - lo) * (rank - prev) / (c[i] - prev)) * 1e6; exit
        } else { prev = c[i]; lo = le[i] } }'
}
within_20ms() { paste "$1" "$2" | awk '$1 == "0.02" { print $4 - $2 }'; }
per_k() { awk -v ns="$1" -v n="$2" 'BEGIN { if (n > 0) printf "%.1f", ns / 1e6 * 1000 / n; else print "-" }'; }
pct() { awk -v p="$1" -v r="$2" 'BEGIN { if (r > 0 && p != "") printf "%.2f", 100 * p / r; else print "-" }'; }
# judged: "placed tasks" for a storm of lifetime L, from the probes when they
# checked, else from the placer's own count ($2; empty: unknown)
judged() { if [ "$1" -ge 20 ]; then kv placed; else echo "${2:-}"; fi; }

hog_start() { "$LOAD" -c 0 -d "$1" -p 10 -n tsbhog & HOG=$!; PIDS+=("$HOG"); }
hog_stop() {
    if [ -n "$HOG" ]; then kill "$HOG" 2>/dev/null || true; wait "$HOG" 2>/dev/null || true; HOG=; fi
}

cp "$BUILD/bench-storm" "$TMP/$NAME"
bench_config <<CONF
[daemon]
${TS_STORM_CONF:-}
[packing]
busy_threshold = 30%
hold_time = 2s
min_change_interval = 60min
[rule storm]
comm = $NAME
class = jitter
CONF

HAVE_CGR=
if [[ " $LISTENERS " == *" cgr "* ]] && command -v cgrulesengd >/dev/null && [ -d /sys/fs/cgroup/cpuset ]; then
    HAVE_CGR=1
    [ -e /etc/cgrules.conf ] && { RULES_BACKUP=$TMP/cgrules.conf.orig; cp -p /etc/cgrules.conf "$RULES_BACKUP"; }
    [ -e /etc/cgrules.conf ] || MADE+=(/etc/cgrules.conf)
    mkdir -p "$CG"
    echo 0 > "$CG/cpuset.cpus"
    cat /sys/fs/cgroup/cpuset/cpuset.mems > "$CG/cpuset.mems"
    echo "*:$NAME cpuset tsbench/" > /etc/cgrules.conf
    [ -e /etc/cgconfig.conf ] || { touch /etc/cgconfig.conf; MADE+=(/etc/cgconfig.conf); }
    [ -e /etc/cgconfig.d ] || { mkdir /etc/cgconfig.d; MADE+=(/etc/cgconfig.d); }
fi

declare -A TS TSP CGR FLOOR X
for load in $LOADS; do
    # --- turboschedd: the plan made beside a busy CPU 0, then held
    if [[ " $LISTENERS " == *" ts "* ]]; then
        hog_start "$([ "$load" -eq 0 ] && echo 70 || echo "$load")"
        daemon_start
        wait_until 30 plan_restricted || { echo "storm-shape.sh: the plan never packed onto CPU 0" >&2; ctl status >&2; exit 1; }
        [ "$load" -eq 0 ] && hog_stop
        for l in $LIFETIMES; do for i in $INFLIGHTS; do
            k="$l $i $load"
            # the daemon's cost with no storm, just before it: what a storm of
            # few execs a second carries per task whatever the daemon does for it
            read -r q0 _ < <(sched "$DPID"); sleep "$IDLE_S"; read -r q1 _ < <(sched "$DPID")
            ctl metrics > "$TMP/m0"; read -r r0 _ < <(sched "$DPID"); v0=$(vswitches "$DPID"); s0=$(date +%s%N)
            storm "$l" "$i"
            s1=$(date +%s%N); read -r r1 _ < <(sched "$DPID"); v1=$(vswitches "$DPID"); ctl metrics > "$TMP/m1"
            buckets "$TMP/m0" > "$TMP/b0"; buckets "$TMP/m1" > "$TMP/b1"
            n=$(kv children); in20=$(within_20ms "$TMP/b0" "$TMP/b1"); pl=$(judged "$l" "$in20")
            X[$k]=$(kv execs_per_s)
            TS[$k]="$(pct "$pl" "$n") $(quantile "$TMP/b0" "$TMP/b1" 0.99) $(per_k $((r1 - r0)) "$n") $(per_k $((r1 - r0)) "$pl") $(pct "$in20" "$n")"
            ex=$(delta turbosched_events_total 'kind="exec"')
            hs=$(awk -v a="$(metric_sum "$TMP/m0" turbosched_event_handling_seconds_total)" \
                     -v b="$(metric_sum "$TMP/m1" turbosched_event_handling_seconds_total)" -v n="$n" \
                     'BEGIN { printf "%.1f", (b - a) * 1e6 / n }')
            he=$(awk -v a="$(metric "$TMP/m0" turbosched_event_handling_seconds_total 'kind="exec"')" \
                     -v b="$(metric "$TMP/m1" turbosched_event_handling_seconds_total 'kind="exec"')" -v n="$ex" \
                     'BEGIN { if (n > 0) printf "%.1f", (b - a) * 1e6 / n; else print "-" }')
            wk=$(delta turbosched_event_wakeups_total)
            rd=$(( $(metric_sum "$TMP/m1" turbosched_thread_reads_total) - $(metric_sum "$TMP/m0" turbosched_thread_reads_total) ))
            tk=$(delta turbosched_ticks_total)
            ov=$(delta turbosched_netlink_overflows_total)
            idle=$(awk -v q=$((q1 - q0)) -v s="$IDLE_S" 'BEGIN { printf "%.0f", q / 1000 / s }')   # µs/s
            less=$(awk -v r=$((r1 - r0)) -v i="$idle" -v d=$((s1 - s0)) -v n="$n" \
                       'BEGIN { v = r - i * 1000 * d / 1e9; printf "%.1f", (v < 0 ? 0 : v) / 1e6 * 1000 / n }')
            TSP[$k]="$he $hs $(awk -v a="$wk" -v n="$n" 'BEGIN { printf "%.2f", a / n }') $(awk -v a="$rd" -v n="$n" 'BEGIN { printf "%.2f", a / n }') $tk $ov $(awk -v a=$((v1 - v0)) -v n="$n" 'BEGIN { printf "%.2f", a / n }') $idle $less"
        done; done
        daemon_stop
        hog_stop
    fi
    [ "$load" -gt 0 ] && hog_start "$load"
    # --- bench-floor, started for each storm for its own counts
    if [[ " $LISTENERS " == *" floor "* ]]; then
        for l in $LIFETIMES; do for i in $INFLIGHTS; do
            k="$l $i $load"
            "$BUILD/bench-floor" --comm "$NAME" --cpu 0 > "$TMP/floor.out" 2>&1 & FPID=$!; PIDS+=("$FPID")
            floor_ready() { kill -0 "$FPID" 2>/dev/null || return 2; grep -q '^ready=1' "$TMP/floor.out"; }
            if ! wait_until 30 floor_ready; then FLOOR[$k]="why $(tail -1 "$TMP/floor.out")"; continue; fi
            read -r r0 _ < <(sched "$FPID")
            storm "$l" "$i"
            read -r r1 _ < <(sched "$FPID")
            kill -TERM "$FPID"; wait "$FPID" 2>/dev/null || true
            n=$(kv children); pl=$(judged "$l" "$(kv placed_20ms "$TMP/floor.out")")
            FLOOR[$k]="$(pct "$pl" "$n") $(per_k $((r1 - r0)) "$n") $(per_k $((r1 - r0)) "$pl")"
        done; done
    fi
    # --- cgrulesengd at SCHED_FIFO 1
    if [ -n "$HAVE_CGR" ]; then
        chrt -f 1 cgrulesengd -n -Q >"$TMP/cgrulesengd.log" 2>&1 & CGPID=$!; PIDS+=("$CGPID")
        listening() { [ "$(find "/proc/$CGPID/fd" -lname 'socket:*' 2>/dev/null | wc -l)" -ge 1 ]; }
        wait_until 30 listening || { echo "storm-shape.sh: cgrulesengd did not start" >&2; cat "$TMP/cgrulesengd.log" >&2; exit 1; }
        for l in $LIFETIMES; do for i in $INFLIGHTS; do
            k="$l $i $load"
            read -r r0 _ < <(sched "$CGPID")
            storm "$l" "$i" --cgroup /tsbench
            read -r r1 _ < <(sched "$CGPID")
            n=$(kv children); pl=$(judged "$l")
            CGR[$k]="$(pct "$pl" "$n") $(per_k $((r1 - r0)) "$n") $(per_k $((r1 - r0)) "$pl")"
        done; done
        kill -TERM "$CGPID"; wait "$CGPID" 2>/dev/null || true
    fi
    hog_stop
done

rat() { awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0) printf "%.2fx", a / b; else printf "-" }'; }
echo "| lifetime | outstanding per worker | busy load | tasks | execs/s | turboschedd: placed ≤ 20 ms, p99 from the kernel's event, CPU per 1,000 (per 1,000 placed) | cgrulesengd at SCHED_FIFO 1: placed, CPU per 1,000 (per 1,000 placed) | bench-floor: placed, CPU per 1,000 (per 1,000 placed) | turboschedd per task placed against cgrulesengd, against the floor |"
echo "|---|---|---|---|---|---|---|---|---|"
worst_pl=; worst_p99=; worst_cg=; worst_fl=
for load in $LOADS; do for l in $LIFETIMES; do for i in $INFLIGHTS; do
    k="$l $i $load"
    ts="-"; cg="-"; fl="-"; tcpl=; ccpl=; fcpl=
    if [ -n "${TS[$k]:-}" ]; then
        read -r tpl tp99 tc tcpl _ <<< "${TS[$k]}"
        ts="$tpl%, $tp99 µs, $tc ms ($tcpl ms)"
        worst_pl=$(awk -v a="$tpl" -v w="$worst_pl" 'BEGIN { print (w == "" || a + 0 < w + 0) ? a : w }')
        worst_p99=$(awk -v a="${tp99#>}" -v w="$worst_p99" 'BEGIN { print (w == "" || a + 0 > w + 0) ? a : w }')
    fi
    [ -n "${CGR[$k]:-}" ] && { read -r cpl cc ccpl <<< "${CGR[$k]}"; cg="$cpl$([ "$cpl" = - ] || echo %), $cc ms ($ccpl ms)"; }
    if [ -n "${FLOOR[$k]:-}" ]; then
        if [[ ${FLOOR[$k]} == why* ]]; then fl=${FLOOR[$k]#why }; else read -r fpl fc fcpl <<< "${FLOOR[$k]}"; fl="$fpl%, $fc ms ($fcpl ms)"; fi
    fi
    rc=$(rat "$tcpl" "$ccpl"); rf=$(rat "$tcpl" "$fcpl")
    worst_cg=$(awk -v a="${rc%x}" -v w="$worst_cg" 'BEGIN { print (a == "-") ? w : (w == "" || a + 0 > w + 0) ? a : w }')
    worst_fl=$(awk -v a="${rf%x}" -v w="$worst_fl" 'BEGIN { print (a == "-") ? w : (w == "" || a + 0 > w + 0) ? a : w }')
    echo "| $l ms | $i | $([ "$load" -eq 0 ] && echo none || echo "$load%") | $(children_of "$l" "$i") | ${X[$k]:--} | $ts | $cg | $fl | $rc, $rf |"
done; done; done
echo
echo "The daemon's own profile per shape (its metrics over each storm): time handling an exec event,"
echo "time handling all events per task, wake-ups reading the proc connector per task, per-thread"
echo "reads (turbosched_thread_reads_total, every kind) per task, ticks and overflows over the storm, and"
echo "the daemon's voluntary context switches per task (every wake-up: its timers' as well as the proc connector's),"
echo "its CPU per second over ${IDLE_S} s with no storm just before the storm (its ticks, and whatever else runs on the machine),"
echo "and its CPU per 1,000 tasks less that idle cost over the storm's length (a figure beside the first table's, not instead):"
echo
echo "| lifetime | outstanding per worker | busy load | exec handling µs | all events, µs per task | wake-ups per task | thread reads per task | ticks | overflows | switches per task | idle CPU µs/s | CPU per 1,000 less idle |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for load in $LOADS; do for l in $LIFETIMES; do for i in $INFLIGHTS; do
    k="$l $i $load"
    [ -n "${TSP[$k]:-}" ] || continue
    read -r he hs wk rd tk ov vs idle less <<< "${TSP[$k]}"
    echo "| $l ms | $i | $([ "$load" -eq 0 ] && echo none || echo "$load%") | $he | $hs | $wk | $rd | $tk | $ov | $vs | $idle | $less ms |"
done; done; done
echo
echo "Unpaced, $WORKERS workers, up to $N children a shape (fewer where the lifetime bounds the rate: $SECS s of it);"
echo "a child living 20 ms or more checks its mask 20 ms after its exec; below that, placement is the placer's own"
echo "count from the exec event's kernel timestamp (cgrulesengd keeps none: \"-\"). A shared, noisy 2-vCPU VM: compare within a row."
echo "shape_worst_placed_pct=${worst_pl}"
echo "shape_worst_p99_us=${worst_p99}"
echo "shape_worst_ratio_cgrulesengd_fifo=${worst_cg}"
echo "shape_worst_ratio_floor=${worst_fl}"
