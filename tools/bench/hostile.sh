#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What an unprivileged local user can do to the daemon, and through it to
# another user (issue 35). Each attack runs as uid nobody (a member of the
# daemon's control_group, the worst case) for SECS seconds while another
# user (uid 1) runs a CPU-bound job and a latency probe (a 1 ms timer loop
# measuring its own wake-up delay); the daemon runs the shipped defaults
# (realtime priority 1, nice -10, behaviour classification) with a new
# instance per run. Attacks:
#   forks    a fork storm: children that exit at once, two workers
#   renames  two threads renaming themselves as fast as they can
#   control  two clients asking the control socket for its status in a loop
#   rtbudget the realtime-budget attack: N light threads (jitter by
#            behaviour), an exec loop pinned to CPU 1 (the daemon's seat)
#            and a spinner toggled every 3 s (a plan change each time)
# Per attack: the other user's work and wake-up p99 against the run with no
# attack (both with the daemon), and against the same attack without the
# daemon; the daemon's CPU time at realtime priority in each 1 s window
# (its own count, event_loop.realtime_cpu_ns, polled every second: the
# largest); its CPU time in all; whether any task of the other user was
# left with a narrowed mask at any poll (confined).
#
# With HOSTILE_PERF=1 the realtime column comes from the kernel instead:
# perf's sched_switch records of the daemon's threads, each run on a CPU
# counted as realtime when it ended at a realtime priority (prev_prio < 100),
# so builds without the daemon's own count can be compared; the column then
# also gives the longest single run at realtime priority (MAX/LONGEST ms).
# HOSTILE_ATTACKS picks attacks (default: all four). HOSTILE_PROFILE=DIR
# says where the daemon's time goes: for each run with the daemon, its
# call graphs over the attack (DIR/perf-ATTACK.data, perf record -g of its
# threads alone) and its status halfway through (DIR/status-ATTACK.txt);
# the figures of such a run carry perf's own cost.
#
# The footing is a production machine's: systemd puts each logged-in user
# in a slice of its own (user-UID.slice), and the kernel shares the CPU
# between those slices, not between threads. So the attacker's processes
# and the victim's each run in a CPU cgroup of their own, of equal weight
# (cgroup v1 cpu.shares, or cgroup v2 cpu.weight; skipped where neither
# is there), made for the run and removed at its end; the daemon stays in
# the group the script was started in, as its service stays in
# system.slice. An attack then takes no more than the attacker's half of
# the machine by itself: what the victim loses beyond that is what the
# daemon adds.
#
# The run with no attack is made before the attacks and again after each
# one; the ratios are to the median of those runs, and their spread (each
# run over the median) is printed, so a ratio within it is the machine's
# own noise (the 1 ms probe's p99 moves by several times between runs on
# a shared VM).
#
# usage: hostile.sh BUILD_DIR [SECS] [THREADS]
. "$(dirname "$0")/lib.bash"
SECS=${2:-10}
NTHREADS=${3:-20000}
bench_users bench-hostile
getent group nogroup >/dev/null || { echo "hostile.sh: needs the group nogroup" >&2; exit 77; }
TRUE=$(type -P true) || { echo "hostile.sh: no true(1)" >&2; exit 77; }
bench_cgroups
bench_config <<CONF
[daemon]
control_group = nogroup
CONF
ALL=$(cat /sys/devices/system/cpu/online)
H=$TMP/bench-hostile

# attack NAME: start its processes in the background, PIDs in APIDS
attack() {
    APIDS=()
    case $1 in
    none) ;;
    forks)
        as_attacker "$H" forkstorm "$SECS" > "$TMP/a0" & APIDS+=($!)
        as_attacker "$H" forkstorm "$SECS" > "$TMP/a1" & APIDS+=($!) ;;
    renames)
        as_attacker "$H" renames "$SECS" 2 > "$TMP/a0" & APIDS+=($!) ;;
    control)
        as_attacker "$H" ctlflood "$SECS" "$TMP/control" > "$TMP/a0" & APIDS+=($!)
        as_attacker "$H" ctlflood "$SECS" "$TMP/control" > "$TMP/a1" & APIDS+=($!) ;;
    rtbudget)
        as_attacker "$H" threads "$((SECS + 2))" "$NTHREADS" > "$TMP/a2" 2>/dev/null & APIDS+=($!)
        as_attacker taskset -c 1 "$H" execloop "$SECS" "$TRUE" > "$TMP/a0" & APIDS+=($!)
        as_attacker "$H" spinner "$SECS" 3 > "$TMP/a1" & APIDS+=($!) ;;
    esac
}
# what the attack did, for the table
attack_rate() {
    case $1 in
    none) echo "-" ;;
    forks) echo "$(( ($(cat "$TMP/a0") + $(cat "$TMP/a1")) / SECS )) forks/s" ;;
    renames) echo "$(( $(cat "$TMP/a0") / SECS )) renames/s" ;;
    control) read -r c0 r0 < "$TMP/a0"; read -r c1 r1 < "$TMP/a1"
        echo "$(( (c0 + c1) / SECS )) connects/s, $(( (r0 + r1) / SECS )) replies/s" ;;
    rtbudget) echo "$(cat "$TMP/a2") threads, $(( $(cat "$TMP/a0") / SECS )) execs/s on CPU 1" ;;
    esac
}
rt_ns() { ctl --json status 2>/dev/null > "$TMP/st" && json_num realtime_cpu_ns "$TMP/st"; }
PERF=${HOSTILE_PERF:-0}
PROFILE=${HOSTILE_PROFILE:-}
if [ -n "$PROFILE" ]; then
    command -v perf >/dev/null || { echo "hostile.sh: HOSTILE_PROFILE needs perf" >&2; exit 77; }
    mkdir -p "$PROFILE" && PROFILE=$(realpath "$PROFILE")
fi
if [ "$PERF" = 1 ]; then command -v perf >/dev/null || { echo "hostile.sh: HOSTILE_PERF=1 needs perf" >&2; exit 77; }; fi
# perf_rt_max FILE PID: "MAX/LONGEST": the largest realtime CPU time (ms) of
# PID's threads in any 1 s window of the recording (a run is put in the
# window it ended in), and the longest single run at realtime priority
perf_rt_max() {
    perf script -i "$1" -F time,event,trace 2>/dev/null | awk -v d="$2" '
        { t = $1; sub(/:$/, "", t); t += 0
          pp = ""; np = ""; pr = 0
          for (i = 1; i <= NF; i++) {
              if ($i ~ /^prev_pid=/) { split($i, a, "="); pp = a[2] }
              if ($i ~ /^prev_prio=/) { split($i, a, "="); pr = a[2] + 0 }
              if ($i ~ /^next_pid=/) { split($i, a, "="); np = a[2] }
          }
          if (pp in tin) {
              if (pr < 100) { w[int(t)] += t - tin[pp]; if (t - tin[pp] > l) l = t - tin[pp] }
              delete tin[pp] }
          if (np == d) tin[np] = t }
        END { m = 0; for (k in w) if (w[k] > m) m = w[k]; printf "%.1f/%.1f\n", m * 1000, l * 1000 }'
}
confined() {   # confined PID...: 1 if a thread of any has a mask narrower than every online CPU
    local p f m
    for p in "$@"; do
        for f in /proc/"$p"/task/*/status; do
            m=$(sed -n 's/^Cpus_allowed_list:\t*//p' "$f" 2>/dev/null) || continue
            [ -z "$m" ] || [ "$m" = "$ALL" ] || { echo 1; return; }
        done
    done
    echo 0
}

# run NAME DAEMON(yes|no): prints "work p99 rtmax_ms daemon_cpu_ms confined rate"
run() {
    local name=$1 with=$2 c0=0 c1=0 conf=0 rtmax=0 prev now t0 t1
    [ "$with" = yes ] && daemon_start
    [ "$with" = yes ] && c0=$(cpu_ns "$DPID")
    local perfpid=
    if [ "$with" = yes ] && [ "$PERF" = 1 ]; then
        # every CPU, the daemon's switches only: a switch to it is recorded
        # in the context of the task it replaces
        perf record -q -a -e sched:sched_switch --filter "prev_pid == $DPID || next_pid == $DPID" \
            -o "$TMP/perf.data" >/dev/null 2>&1 &
        perfpid=$!
        sleep 1
    fi
    attack "$name"
    as_victim "$H" work "$SECS" > "$TMP/w" & local w=$!
    as_victim "$H" probe "$SECS" 1000 > "$TMP/p" & local p=$!
    local profpid= polls=0
    if [ "$with" = yes ] && [ -n "$PROFILE" ]; then
        perf record -q -g -p "$DPID" -o "$PROFILE/perf-$name.data" >/dev/null 2>&1 &
        profpid=$!
    fi
    if [ "$with" = yes ]; then
        prev=$(rt_ns || echo 0); t0=$(date +%s%N)
        while kill -0 "$w" 2>/dev/null; do
            sleep 1
            polls=$((polls + 1))
            if [ -n "$PROFILE" ] && [ "$polls" -eq $((SECS / 2)) ]; then ctl status > "$PROFILE/status-$name.txt" 2>&1 || true; fi
            now=$(rt_ns || echo "$prev"); t1=$(date +%s%N)
            # the window's realtime CPU, scaled to exactly 1 s
            rtmax=$(awk -v a="$prev" -v b="$now" -v d=$((t1 - t0)) -v m="$rtmax" \
                'BEGIN { v = (b - a) / 1e6 * 1e9 / d; printf "%.1f\n", (v > m) ? v : m }')
            prev=$now; t0=$t1
            [ "$(confined "$w" "$p")" = 1 ] && conf=1
        done
    fi
    wait "$w" "$p" "${APIDS[@]}" 2>/dev/null || true
    if [ -n "$profpid" ]; then kill -INT "$profpid"; wait "$profpid" 2>/dev/null || true; fi
    if [ -n "$perfpid" ]; then
        kill -INT "$perfpid"; wait "$perfpid" 2>/dev/null || true
        rtmax=$(perf_rt_max "$TMP/perf.data" "$DPID")
    fi
    if [ "$with" = yes ]; then c1=$(cpu_ns "$DPID"); daemon_stop; fi
    read -r p99 _ < "$TMP/p"
    printf '%s %s %s %d %s %s\n' "$(cat "$TMP/w")" "$p99" "$rtmax" $(( (c1 - c0) / 1000000 )) "$conf" \
        "$(attack_rate "$name")"
}

echo "hostile user: each attack by uid nobody for ${SECS} s beside uid 1's CPU-bound job and 1 ms timer probe ($(nproc) CPUs; each user in a CPU cgroup of its own: $CG_KIND)"
: > "$TMP/rows"
# base: one run with no attack (with the daemon), its figures appended to $TMP/base
base() { run none yes | cut -d' ' -f1-5 >> "$TMP/base"; }
base
for a in ${HOSTILE_ATTACKS:-forks renames control rtbudget}; do
    read -r w0 p0 _ _ _ _ < <(run "$a" no)
    read -r w p rt cpu conf rate < <(run "$a" yes)
    echo "$a|$rate|$w|$w0|$p|$p0|$rt|$cpu|$conf" >> "$TMP/rows"
    base
done
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { cut -d' ' -f"$1" "$TMP/base"; }
# spread COLUMN MEDIAN: "LOW-HIGHx", each run's value over the median
spread() { col "$1" | awk -v m="$2" 'NR == 1 || $1 < lo { lo = $1 } NR == 1 || $1 > hi { hi = $1 }
    END { if (m == 0) print "n/a"; else printf "%.2f-%.2fx\n", lo / m, hi / m }'; }
nb=$(wc -l < "$TMP/base")
base_w=$(col 1 | median); base_p99=$(col 2 | median)
base_rt=$(col 3 | sort -g | tail -1); base_cpu=$(col 4 | median)
base_conf=$(col 5 | sort -n | tail -1)
w_spread=$(spread 1 "$base_w"); p_spread=$(spread 2 "$base_p99")
echo "no attack, with the daemon, $nb runs (one first, one after each attack): work median $base_w (each run $(col 1 | tr '\n' ' ' | sed 's/ $//'); $w_spread of the median), wake-up p99 median ${base_p99} us (each run $(col 2 | tr '\n' ' ' | sed 's/ $//') us; $p_spread of the median), realtime CPU max ${base_rt} ms/s, daemon CPU ${base_cpu} ms (median), other user confined: $([ "$base_conf" = 1 ] && echo yes || echo no)"
echo "A ratio to no attack inside the spread of the runs with no attack ($w_spread for work, $p_spread for p99) is within the machine's own noise."
echo
echo "| attack | what it did | other user's work (x no attack) | (x same attack, no daemon) | wake-up p99 us (x no attack) | (no daemon) | daemon realtime CPU, max per 1 s | daemon CPU | other user confined |"
echo "|---|---|---|---|---|---|---|---|---|"
while IFS='|' read -r a rate w w0 p p0 rt cpu conf; do
    printf '| %s | %s | %s (%s) | %s | %s (%s) | %s | %s ms | %s ms | %s |\n' "$a" "$rate" "$w" "$(ratio "$w" "$base_w")" \
        "$(ratio "$w" "$w0")" "$p" "$(ratio "$p" "$base_p99")" "$p0" "$rt" "$cpu" "$([ "$conf" = 1 ] && echo yes || echo no)"
    echo "hostile_${a}_work_ratio=$(ratio "$w" "$base_w")" >> "$TMP/kv"
    echo "hostile_${a}_work_ratio_vs_no_daemon=$(ratio "$w" "$w0")" >> "$TMP/kv"
    echo "hostile_${a}_p99_ratio=$(ratio "$p" "$base_p99")" >> "$TMP/kv"
    echo "hostile_${a}_rt_max_ms_per_s=$rt" >> "$TMP/kv"
    echo "hostile_${a}_confined=$conf" >> "$TMP/kv"
done < "$TMP/rows"
echo "hostile_baseline_runs=$nb" >> "$TMP/kv"
echo "hostile_baseline_work_spread=$w_spread" >> "$TMP/kv"
echo "hostile_baseline_p99_spread=$p_spread" >> "$TMP/kv"
cat "$TMP/kv"
