#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Classification with no rules: a labelled set of real programs run together
# under a daemon whose configuration has no rule at all, and what the daemon
# made of each, read from its control socket as it goes. Generic on the
# reading side: it reports whatever class and source the daemon gives, so it
# measures a daemon without behaviour classification (everything stays
# default_class: recall 0) as well as one with it.
#
# The set: jitter-like programs (cyclictest every 5 ms, ping on loopback
# every 200 ms, vmstat 1, a shell's sleep loop), intensive ones (stress-ng
# --cpu 1, xz -9 on a large generated input) and a phase-changer (ts-phase:
# light for a third of the run, then CPU-bound in the same thread).
# cyclictest runs with --laptop: without it, it writes cpu_dma_latency=0,
# which keeps every CPU polling and hides what idle CPUs do. Nothing is
# pinned: a pinned task is no candidate.
#
# Per program: the class it ended with and what decided it, how long after
# its start it first held that class, and for intensive programs whether
# they were ever jitter (the error users will not forgive). Precision and
# recall for jitter over the jitter and intensive programs; for the
# phase-changer, its class in the light phase and how long after turning
# CPU-bound it stopped being jitter.
#
# usage: behaviour.sh BUILD_DIR [SECONDS]
#   SECONDS: length of the run (default 60; at least 30: a 10 s window, then
#   time to see it hold).
# TS_BEHAVIOUR_CONF: extra [classify] lines, e.g.
#   TS_BEHAVIOUR_CONF='behaviour_jitter_min_wakeups = 1' behaviour.sh build/release
. "$(dirname "$0")/lib.bash"
SECS=${2:-60}
[ "$SECS" -ge 30 ] || { echo "behaviour.sh: SECONDS must be at least 30" >&2; exit 2; }
for tool in cyclictest ping stress-ng xz vmstat jq; do
    command -v "$tool" >/dev/null || { echo "behaviour.sh: $tool not installed (scripts/install-deps.sh)" >&2; exit 77; }
done
PHASE=$BUILD/ts-phase
[ -x "$PHASE" ] || { echo "behaviour.sh: $PHASE not built" >&2; exit 1; }

EXTRA=${TS_BEHAVIOUR_CONF:-}
# No rules. behaviour = yes only where the daemon knows the key (it says so
# in --check-config); otherwise the daemon runs with what it has.
bench_config <<CONF
[classify]
behaviour = yes
$EXTRA
CONF
if "$DAEMON" --config "$TMP/turbosched.conf" --check-config >"$TMP/check.out" 2>&1; then
    BEHAVIOUR_KEY="behaviour = yes"
else
    BEHAVIOUR_KEY="(this daemon does not know 'behaviour': $(grep -m1 -o "unknown key[^,]*" "$TMP/check.out" || tail -1 "$TMP/check.out"))"
    bench_config <<CONF
[classify]
$EXTRA
CONF
    "$DAEMON" --config "$TMP/turbosched.conf" --check-config >"$TMP/check.out" 2>&1 ||
        { echo "behaviour.sh: the configuration does not load:" >&2; cat "$TMP/check.out" >&2; exit 1; }
fi
DEFAULT_CLASS=$(sed -n 's/^default_class *= *//p' "$TMP/check.out" | head -1)
DEFAULT_CLASS=${DEFAULT_CLASS:-ignore}

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

# The labelled set: name, label, what to watch (the process itself or its
# one child, for stress-ng's worker), command.
NAMES=() LABELS=() WATCH=() CMDS=()
add() { NAMES+=("$1"); LABELS+=("$2"); WATCH+=("$3"); CMDS+=("$4"); }
seq 1 6000000 > "$TMP/input"     # ~50 MB: xz -9 needs about a minute of CPU for it
# cyclictest pins each measurement thread to one CPU itself (rt-tests does
# whatever -a says; -a only chooses which CPU): a pinned task is never a
# candidate, so it is labelled "pinned", must never be confined, and counts
# apart from recall.
add cyclictest pinned self "cyclictest --laptop -q -i 5000 -t 1"
add ping jitter self "ping -q -i 0.2 127.0.0.1"
add vmstat jitter self "vmstat 1"
add sleep-loop jitter self "bash -c 'while :; do sleep 0.1; done'"
add stress-ng intensive child "stress-ng --cpu 1 -q"
add xz intensive self "xz -9 -T1 -c $TMP/input"
add ts-phase phase self "$PHASE -l $((SECS / 3)) -H 0"

daemon_start
declare -A START PID
for i in "${!NAMES[@]}"; do
    n=${NAMES[$i]}
    out=/dev/null
    [ "$n" = ts-phase ] && out=$TMP/phase.out
    START[$n]=$(now_ms)
    bash -c "exec ${CMDS[$i]}" > "$out" 2>"$TMP/$n.err" &
    PIDS+=($!)
    PID[$n]=$!
done
child_of() { pgrep -P "$1" | head -1; }
for i in "${!NAMES[@]}"; do
    n=${NAMES[$i]}
    if [ "${WATCH[$i]}" = child ]; then
        has_child() { [ -n "$(child_of "${PID[$n]}")" ]; }
        wait_until 10 has_child || { echo "behaviour.sh: $n started no worker" >&2; exit 1; }
        PID[$n]=$(child_of "${PID[$n]}")
    fi
done

# The thread a program is judged by: its busiest (cyclictest's measuring
# thread, not its main one). "TID" or nothing when the process is gone.
busiest() {
    local f best='' max=-1 run
    for f in /proc/"$1"/task/*/schedstat; do
        read -r run _ < "$f" 2>/dev/null || continue
        if [ "$run" -gt "$max" ]; then max=$run; best=${f%/schedstat}; best=${best##*/}; fi
    done
    echo "$best"
}

# Poll the daemon's dump (every jitter and intensive task) twice a second;
# a thread absent from it has the default class. Timeline lines:
# "MS NAME CLASS SOURCE" at each change.
declare -A CUR
: > "$TMP/timeline"
END=$(( $(now_ms) + SECS * 1000 ))
while [ "$(now_ms)" -lt "$END" ]; do
    ctl --json dump > "$TMP/dump.json" 2>"$TMP/dump.err" || { echo "behaviour.sh: dump failed: $(cat "$TMP/dump.err")" >&2; exit 1; }
    t=$(now_ms)
    jq -r '.tasks[] | "\(.tid) \(.class) \(.source)"' "$TMP/dump.json" > "$TMP/classes"
    for n in "${NAMES[@]}"; do
        tid=$(busiest "${PID[$n]}")
        if [ -z "$tid" ]; then
            cls="exited -"
        else
            cls=$(awk -v t="$tid" '$1 == t { print $2, $3; f = 1 } END { if (!f) print "" }' "$TMP/classes")
            [ -n "$cls" ] || cls="$DEFAULT_CLASS default"
        fi
        if [ "${CUR[$n]:-}" != "$cls" ]; then
            CUR[$n]=$cls
            echo "$t $n $cls" >> "$TMP/timeline"
        fi
    done
    sleep 0.5
done
# What the daemon says of each, in its words, before anything stops.
declare -A DETAIL
for n in "${NAMES[@]}"; do
    tid=$(busiest "${PID[$n]}")
    DETAIL[$n]=-
    [ -n "$tid" ] || continue
    d=$(ctl --json explain "${PID[$n]}" 2>/dev/null | jq -r --argjson t "$tid" '.threads[] | select(.tid == $t) | .detail + (if .behaviour then "; " + .behaviour else "" end)' 2>/dev/null || true)
    [ -n "$d" ] && DETAIL[$n]=$d
done
HEAVY_MS=$(awk '$1 == "heavy" { print $3 }' "$TMP/phase.out")
for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
daemon_stop

# ---- report ----
RULES=$(grep -c '^\[rule ' "$TMP/check.out" || true)
echo "Daemon configuration: $([ "$RULES" -eq 0 ] && echo "no rules" || echo "**$RULES rules**"), default_class = $DEFAULT_CLASS, $BEHAVIOUR_KEY${EXTRA:+; extra lines: $(echo "$EXTRA" | paste -sd";" -)}."
echo "$SECS s, all programs started together; the daemon's class of each program's busiest thread read every 0.5 s."
echo
echo "| program | label | class at the end | decided by | reached after | ever jitter | the daemon's explanation |"
echo "|---|---|---|---|---|---|---|"
TP=0 FP=0 FN=0 N_JIT=0 INT_AS_JIT=0 N_INT=0 N_PIN=0 PIN_AS_JIT=0
for i in "${!NAMES[@]}"; do
    n=${NAMES[$i]} label=${LABELS[$i]}
    read -r final source < <(awk -v n="$n" '$2 == n { c = $3; s = $4 } END { print c, s }' "$TMP/timeline")
    # first time it held its final class for good
    since=$(awk -v n="$n" -v c="$final" '$2 == n { if ($3 == c) { if (!t) t = $1 } else t = 0 } END { printf "%.0f\n", t }' "$TMP/timeline")
    ever=$(awk -v n="$n" '$2 == n && $3 == "jitter" { f = 1 } END { print f ? "yes" : "no" }' "$TMP/timeline")
    if [ "$label" = phase ]; then
        # its class just before the change, and when it stopped being jitter after it
        light=$(awk -v n="$n" -v h="${HEAVY_MS:-0}" '$2 == n && $1 <= h { c = $3 } END { print c ? c : "-" }' "$TMP/timeline")
        released=$(awk -v n="$n" -v h="${HEAVY_MS:-0}" '$2 == n && $1 > h && $3 != "jitter" { if (!t) t = $1 } END { printf "%.0f\n", t }' "$TMP/timeline")
        if [ -z "$HEAVY_MS" ]; then
            after="did not reach its CPU-bound phase"
        elif [ "$light" = jitter ]; then
            after=$([ "$released" -gt 0 ] && awk -v a="$released" -v b="$HEAVY_MS" 'BEGIN { printf "released %.1f s after turning CPU-bound", (a - b) / 1000 }' || echo "**still jitter at the end**")
        else
            after="never confined"
        fi
        PHASE_LINE="ts-phase: in the light phase $light; $after."
        reached=-
    else
        reached=$([ "$final" != "$DEFAULT_CLASS" ] && [ "$final" != exited ] && [ "$since" -gt 0 ] && awk -v a="$since" -v b="${START[$n]}" 'BEGIN { printf "%.1f s", (a - b) / 1000 }' || echo -)
        if [ "$label" = pinned ]; then
            N_PIN=$((N_PIN + 1))
            [ "$ever" = yes ] && PIN_AS_JIT=$((PIN_AS_JIT + 1))
        elif [ "$label" = jitter ]; then
            N_JIT=$((N_JIT + 1))
            if [ "$final" = jitter ]; then TP=$((TP + 1)); else FN=$((FN + 1)); fi
        else
            N_INT=$((N_INT + 1))
            [ "$final" = jitter ] && FP=$((FP + 1))
            [ "$ever" = yes ] && INT_AS_JIT=$((INT_AS_JIT + 1))
        fi
    fi
    echo "| $n | $label | $final | $source | $reached | $ever | ${DETAIL[$n]//|/\\|} |"
done
echo
echo "${PHASE_LINE:-ts-phase: no figures.}"
[ "$N_PIN" -gt 0 ] && echo "Programs that pin themselves ever confined: $PIN_AS_JIT of $N_PIN (must be 0)."
awk -v tp=$TP -v fp=$FP -v fn=$FN -v nj=$N_JIT -v ni=$N_INT -v bad=$INT_AS_JIT 'BEGIN {
    rec = nj ? 100 * tp / nj : 0
    printf "Jitter found: %d of %d (recall %.0f%%); ", tp, nj, rec
    if (tp + fp) printf "precision %.0f%% (%d of %d called jitter). ", 100 * tp / (tp + fp), tp, tp + fp
    else printf "precision n/a (nothing called jitter). "
    printf "Intensive programs ever classified jitter: %d of %d.\n", bad, ni
    printf "behaviour_jitter_recall_pct=%.0f\n", rec
    if (tp + fp) printf "behaviour_jitter_precision_pct=%.0f\n", 100 * tp / (tp + fp)
    printf "behaviour_intensive_as_jitter=%d\n", bad }'
