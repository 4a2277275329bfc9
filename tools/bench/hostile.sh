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
# system.slice. That does not make an attack harmless by itself: the
# kernel splits a group's weight between CPUs by where its threads run,
# so two attacking threads on two CPUs hold a third of the victim's CPU
# (2026-12-07, 2 vCPUs, no daemon, 8 runs: a rename flood cost the
# victim's work 0.66-0.89x of no attack; 3 runs: a fork storm 0.46-0.62x,
# forks being kernel work this VM pays dearly for). So "x no attack" is
# the attack's harm and the daemon's together; the daemon's own share is
# "x same attack, no daemon" (and "x listener alone", below).
#
# HOSTILE_FOOTING=isolated keeps the users apart as an administrator can:
# besides the equal weights, each user's group has CPUs of its own (a
# cpuset: the victim the first CPU, the attacker the others), as
# AllowedCPUs= on the user slices gives. An attack then reaches the victim
# only through what the machine shares: the kernel and the daemon, which
# stays outside both, on every CPU. That is the footing on which "x no
# attack" is the daemon's doing (and the kernel's), and on which the
# daemon must not carry one user's attack to the other. "Confined" is then
# a mask narrower than the victim's own CPUs.
#
# The run with no attack is made before the attacks and again after each
# round; the ratios are to the median of those runs, and their spread (each
# run over the median) is printed, so a ratio within it is the machine's
# own noise (the 1 ms probe's p99 moves by several times between runs on
# a shared VM).
#
# Each attack runs HOSTILE_ROUNDS times (default 3), without the daemon and
# with it in turn (the order swapped every other round), each round
# followed by a run with no attack; the figures are the rounds' medians,
# and each run's figures are printed below them with their spread. With
# HOSTILE_DAEMON_B=PATH a second daemon binary (another build) runs in
# each round too (daemon "b"): two builds compared in the same run,
# alternating, on the same harness.
#
# The proc connector costs whoever sends its events once anyone listens:
# with a listener, each fork, exit or rename builds a message and offers
# it to every listening socket (the kernel's filter drops it there), in
# the attacker's own thread. So each round also runs the attack beside
# bench-floor alone (daemon "listener": a socket that hears only execs and
# acts on none; HOSTILE_LISTENER=0 leaves it out): the harm an attack does
# beside any listener of the proc connector, which is the kernel's, not
# the daemon's doing. What the daemon adds is its row over that one.
#
# usage: hostile.sh BUILD_DIR [SECS] [THREADS]
. "$(dirname "$0")/lib.bash"
SECS=${2:-10}
NTHREADS=${3:-20000}
ROUNDS=${HOSTILE_ROUNDS:-3}
DAEMON_B=${HOSTILE_DAEMON_B:-}
LISTENER=${HOSTILE_LISTENER:-1}
[ "$LISTENER" != 1 ] || [ -x "$BUILD/bench-floor" ] || { echo "hostile.sh: $BUILD/bench-floor not built (HOSTILE_LISTENER=0 goes without)" >&2; exit 1; }
[ -z "$DAEMON_B" ] || [ -x "$DAEMON_B" ] || { echo "hostile.sh: HOSTILE_DAEMON_B=$DAEMON_B is no executable" >&2; exit 1; }
bench_users bench-hostile
getent group nogroup >/dev/null || { echo "hostile.sh: needs the group nogroup" >&2; exit 77; }
TRUE=$(type -P true) || { echo "hostile.sh: no true(1)" >&2; exit 77; }
FOOTING=${HOSTILE_FOOTING:-shared}
case $FOOTING in
shared) bench_cgroups ;;
isolated) bench_cgroups isolated ;;
*) echo "hostile.sh: HOSTILE_FOOTING is shared or isolated, not $FOOTING" >&2; exit 2 ;;
esac
bench_config <<CONF
[daemon]
control_group = nogroup
CONF
ALL=$(cat /sys/devices/system/cpu/online)
# the victim's own CPUs: a narrower mask is one the daemon set
VICTIM_ALL=${VICTIM_CPUS:-$ALL}
# the keys' prefix: the footings' figures side by side on one page
KP=hostile
[ "$FOOTING" = shared ] || KP=hostile_$FOOTING
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
confined() {   # confined PID...: 1 if a thread of any has a mask narrower than the victim's CPUs
    local p f m
    for p in "$@"; do
        for f in /proc/"$p"/task/*/status; do
            m=$(sed -n 's/^Cpus_allowed_list:\t*//p' "$f" 2>/dev/null) || continue
            [ -z "$m" ] || [ "$m" = "$VICTIM_ALL" ] || { echo 1; return; }
        done
    done
    echo 0
}

# run NAME DAEMON(yes|no|b|listener; b: HOSTILE_DAEMON_B; listener: no
# daemon, bench-floor instead): prints "work p99 rtmax_ms daemon_cpu_ms confined rate"
run() {
    local name=$1 with=$2 c0=0 c1=0 conf=0 rtmax=0 prev now t0 t1
    # the other build's daemon, seen by daemon_start through this local
    local DAEMON=$DAEMON tag=$name lpid=
    if [ "$with" = b ]; then DAEMON=$DAEMON_B; with=yes; tag=$name-b; fi
    if [ "$with" = listener ]; then
        # the kernel's part alone: a listener that hears only execs and
        # acts on none of them
        "$BUILD/bench-floor" --comm "-hostile-none-" > /dev/null 2>&1 & lpid=$!
        sleep 0.5
        kill -0 "$lpid" 2>/dev/null || { echo "hostile.sh: bench-floor did not start" >&2; exit 1; }
        with=no
    fi
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
        perf record -q -g -p "$DPID" -o "$PROFILE/perf-$tag.data" >/dev/null 2>&1 &
        profpid=$!
    fi
    if [ "$with" = yes ]; then
        prev=$(rt_ns || echo 0); t0=$(date +%s%N)
        while kill -0 "$w" 2>/dev/null; do
            sleep 1
            polls=$((polls + 1))
            if [ -n "$PROFILE" ] && [ "$polls" -eq $((SECS / 2)) ]; then ctl status > "$PROFILE/status-$tag.txt" 2>&1 || true; fi
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
    if [ -n "$lpid" ]; then kill -TERM "$lpid"; wait "$lpid" 2>/dev/null || true; fi
    read -r p99 _ < "$TMP/p"
    printf '%s %s %s %d %s %s\n' "$(cat "$TMP/w")" "$p99" "$rtmax" $(( (c1 - c0) / 1000000 )) "$conf" \
        "$(attack_rate "$name")"
}

echo "hostile user: each attack by uid nobody for ${SECS} s beside uid 1's CPU-bound job and 1 ms timer probe ($(nproc) CPUs; each user in a CPU cgroup of its own: $CG_KIND); $ROUNDS rounds"
# kinds of run in a round: without the daemon, with it, with build B
KINDS="no yes"
[ -n "$DAEMON_B" ] && KINDS="$KINDS b"
[ "$LISTENER" = 1 ] && KINDS="$KINDS listener"
# base: one run with no attack (with the daemon), its figures appended to $TMP/base
base() { run none yes | cut -d' ' -f1-5 >> "$TMP/base"; }
base
for a in ${HOSTILE_ATTACKS:-forks renames control rtbudget}; do
    for r in $(seq "$ROUNDS"); do
        # every other round in the opposite order, so that no kind of run
        # always follows the same one
        ks=$KINDS
        [ $((r % 2)) -eq 0 ] && ks=$(echo "$KINDS" | tr ' ' '\n' | tac | tr '\n' ' ')
        for k in $ks; do run "$a" "$k" >> "$TMP/r-$a-$k"; done
        base
    done
    echo "$a" >> "$TMP/attacks"
done
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# col FILE N: column N of FILE's runs; each FILE N: them on one line
col() { cut -d' ' -f"$2" "$1"; }
each() { col "$1" "$2" | tr '\n' ' ' | sed 's/ $//'; }
# spread FILE COLUMN MEDIAN: "LOW-HIGHx", each run's value over the median
spread() { col "$1" "$2" | awk -v m="$3" 'NR == 1 || $1 < lo { lo = $1 } NR == 1 || $1 > hi { hi = $1 }
    END { if (m == 0) print "n/a"; else printf "%.2f-%.2fx\n", lo / m, hi / m }'; }
B=$TMP/base
nb=$(wc -l < "$B")
base_w=$(col "$B" 1 | median); base_p99=$(col "$B" 2 | median)
base_rt=$(col "$B" 3 | sort -g | tail -1); base_cpu=$(col "$B" 4 | median)
base_conf=$(col "$B" 5 | sort -n | tail -1)
w_spread=$(spread "$B" 1 "$base_w"); p_spread=$(spread "$B" 2 "$base_p99")
echo "no attack, with the daemon, $nb runs (one first, one after each round): work median $base_w (each run $(each "$B" 1); $w_spread of the median), wake-up p99 median ${base_p99} us (each run $(each "$B" 2) us; $p_spread of the median), realtime CPU max ${base_rt} ms/s, daemon CPU ${base_cpu} ms (median), other user confined: $([ "$base_conf" = 1 ] && echo yes || echo no)"
echo "A ratio inside the spread of the runs it is made of is within the machine's own noise: $w_spread for work and $p_spread for p99 with no attack; each attack's spreads are in the second table."
# a binary's name without the machine's paths: below the tree, or its folder and name
short() { case $1 in "$SRC"/*) echo "${1#"$SRC"/}" ;; *) echo "$(basename "$(dirname "$1")")/$(basename "$1")" ;; esac; }
[ -n "$DAEMON_B" ] && echo "Build B (daemon b): $(short "$DAEMON_B"); the default (daemon yes): $(short "$DAEMON")."
echo
echo "Medians of $ROUNDS rounds; the realtime CPU is the largest 1 s window of any round, confined: in any round."
echo
echo "| attack | daemon | what it did | other user's work (x no attack) | (x same attack, no daemon) | (x listener alone) | wake-up p99 us (x no attack) | (x same attack, no daemon) | (x listener alone) | daemon realtime CPU, max per 1 s | daemon CPU | other user confined |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
while read -r a; do
    N=$TMP/r-$a-no
    w0=$(col "$N" 1 | median); p0=$(col "$N" 2 | median)
    wl=; pl=
    if [ -s "$TMP/r-$a-listener" ]; then wl=$(col "$TMP/r-$a-listener" 1 | median); pl=$(col "$TMP/r-$a-listener" 2 | median); fi
    for k in $KINDS; do
        [ "$k" = no ] && continue
        F=$TMP/r-$a-$k
        w=$(col "$F" 1 | median); p=$(col "$F" 2 | median)
        rt=$(col "$F" 3 | sort -g | tail -1); cpu=$(col "$F" 4 | median); conf=$(col "$F" 5 | sort -n | tail -1)
        rate=$(tail -1 "$F" | cut -d' ' -f6-)
        wxl=-; pxl=-
        if [ -n "$wl" ] && [ "$k" != listener ]; then wxl=$(ratio "$w" "$wl"); pxl=$(ratio "$p" "$pl"); fi
        printf '| %s | %s | %s | %s (%s) | %s | %s | %s (%s) | %s (%s us) | %s | %s ms | %s ms | %s |\n' "$a" "$k" "$rate" \
            "$w" "$(ratio "$w" "$base_w")" "$(ratio "$w" "$w0")" "$wxl" "$p" "$(ratio "$p" "$base_p99")" \
            "$(ratio "$p" "$p0")" "$p0" "$pxl" "$rt" "$cpu" "$([ "$conf" = 1 ] && echo yes || echo no)"
        kp=${KP}_${a}
        [ "$k" = yes ] || kp=${KP}_${a}_$k
        [ "$wxl" = - ] || echo "${kp}_work_ratio_vs_listener=$wxl" >> "$TMP/kv"
        [ "$pxl" = - ] || echo "${kp}_p99_ratio_vs_listener=$pxl" >> "$TMP/kv"
        {
            echo "${kp}_work_ratio=$(ratio "$w" "$base_w")"
            echo "${kp}_work_ratio_vs_no_daemon=$(ratio "$w" "$w0")"
            echo "${kp}_p99_ratio=$(ratio "$p" "$base_p99")"
            echo "${kp}_p99_ratio_vs_no_daemon=$(ratio "$p" "$p0")"
            echo "${kp}_rt_max_ms_per_s=$rt"
            echo "${kp}_confined=$conf"
        } >> "$TMP/kv"
    done
done < "$TMP/attacks"
echo
echo "Each run, in the order made (work; wake-up p99 us), and each kind's spread around its median:"
echo
echo "| attack | daemon | work, each run | spread | p99, each run | spread |"
echo "|---|---|---|---|---|---|"
while read -r a; do
    for k in $KINDS; do
        F=$TMP/r-$a-$k
        printf '| %s | %s | %s | %s | %s | %s |\n' "$a" "$k" "$(each "$F" 1)" "$(spread "$F" 1 "$(col "$F" 1 | median)")" \
            "$(each "$F" 2)" "$(spread "$F" 2 "$(col "$F" 2 | median)")"
    done
done < "$TMP/attacks"
echo "${KP}_rounds=$ROUNDS" >> "$TMP/kv"
echo "${KP}_baseline_runs=$nb" >> "$TMP/kv"
echo "${KP}_baseline_work_spread=$w_spread" >> "$TMP/kv"
echo "${KP}_baseline_p99_spread=$p_spread" >> "$TMP/kv"
cat "$TMP/kv"
