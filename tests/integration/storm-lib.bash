# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by the storm fault tests (sourced after lib.bash, not run): the storm
# generator, long-lived tasks and their masks, the daemon's view of them
# (status, dump, metrics) without a JSON tool, and the counts every fault test
# prints at its end.

STORM="$TS_BUILD_DIR/ts-fault-storm"
CPUSET=/sys/fs/cgroup/cpuset
FAULTS=0          # faults injected: signals, reloads, storms
TASKS_CHECKED=0   # task masks / table entries compared with what they must be
MISMATCHES=0      # of those, the ones that were wrong

require_storm() {
    require_root
    [ -x "$STORM" ] || skip "ts-fault-storm not built"
    [ "$(all_cpus)" = "0-1" ] || skip "written for a 2-CPU machine (online: $(all_cpus))"
}

# An ASan build of the daemon reports leaks at exit; make sure it looks.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}

print_counts() {
    echo "counts: faults injected $FAULTS, tasks checked $TASKS_CHECKED, mismatches $MISMATCHES"
}

# config_jitter COMM: a daemon config with one rule: COMM* is jitter;
# config_none: no rules at all
config_jitter() { write_config <<CONF
[rule long-lived]
comm = ${1}*
class = jitter
CONF
}
config_none() { write_config </dev/null; }

# start_hog [DUTY%]: CPU 0 busy, so that the plan confines jitter to it.
start_hog() { spawn HOG "$LOAD" -c 0 -d "${1:-70}" -p 10 -n "tshog$$"; }


# start_keepers VAR FILE COMM N THREADS [WRAPPER...]: N long-lived processes
# named COMM with THREADS threads each; FILE gets "PID TID..." per process.
start_keepers() {
    local __var=$1 file=$2 comm=$3 n=$4 threads=$5
    shift 5
    spawn "$__var" "$@" "$STORM" -w 0 -k "$n" -T "$threads" -K "$comm" -o "$file"
    wait_for 20 test -s "$file" || { echo "long-lived tasks $comm did not start"; return 1; }
}
tids_in() { local w; for w in $(cat "$@"); do echo "$w"; done; }

# record_masks OUT TIDFILE...: "TID MASK" of every TID, as it is now.
record_masks() {
    local out=$1 t
    shift
    for t in $(tids_in "$@"); do echo "$t $(affinity_of "$t")"; done > "$out"
}

# masks_match FILE: every "TID MASK" line is true now; counts what it saw.
# Quiet: used with wait_for; masks_report prints the differences.
masks_match() {
    local t m
    while read -r t m; do affinity_is "$t" "$m" || return 1; done < "$1"
}
masks_report() {
    local t m now bad=0
    while read -r t m; do
        TASKS_CHECKED=$((TASKS_CHECKED + 1))
        now=$(affinity_of "$t")
        if [ "$now" != "$m" ]; then
            MISMATCHES=$((MISMATCHES + 1)); bad=$((bad + 1))
            echo "  tid $t: mask $now, expected $m"
        fi
    done < "$1"
    [ "$bad" -eq 0 ]
}
# expect_mask OUT MASK TIDFILE...: a "TID MASK" file with one mask for all.
expect_mask() {
    local out=$1 mask=$2 t
    shift 2
    for t in $(tids_in "$@"); do echo "$t $mask"; done > "$out"
}

# --- the daemon's view ---------------------------------------------------------

# status_num KEY: the first number under "KEY": in `ctl --json status`
status_num() { ctl --json status 2>/dev/null | sed -n "s/^ *\"$1\": \([0-9]*\),\?$/\1/p" | head -1; }
# metric NAME [LABEL]: a sample of `ctl metrics`
metric() {
    ctl metrics 2>/dev/null | awk -v n="$1" -v l="${2:-}" '
        { split($1, a, "{") } a[1] == n && (l == "" || index($1, l)) { printf "%d\n", $2; exit }'
}
reloads_done() { echo $(( $(metric turbosched_reloads_total ok) + $(metric turbosched_reloads_total failed) )); }

# dump_tasks: "TID CLASS CURRENT_MASK" for every task in `ctl --json dump`
dump_tasks() {
    ctl --json dump 2>/dev/null | awk '
        /"tasks": \[/ { in_tasks = 1 }
        !in_tasks { next }
        /"tid":/ { gsub(/[^0-9]/, "", $2); tid = $2 }
        /"class":/ { c = $2; gsub(/[",]/, "", c) }
        /"current_mask":/ { m = $2; gsub(/[",]/, "", m) }
        /^    }/ && tid != "" { print tid, c, m; tid = ""; c = ""; m = "" }
        /^  \]/ { exit }'
}
# class_of PID: the class `explain` gives the process's main thread
class_of() { ctl --json explain "$1" 2>/dev/null | sed -n 's/.*"class": *"\([a-z]*\)".*/\1/p' | head -1; }

daemon_rss_kib() { local v; status_field "$DAEMON_PID" VmRSS v && echo "${v%% *}"; }

# sanitizer_clean LOG: no ASan, LSan or UBSan report in the daemon's log
sanitizer_clean() {
    if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: [A-Za-z]*Sanitizer' "$1"; then
        grep -m5 -E 'ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY:' "$1"
        return 1
    fi
}

# stop_timeout_s: what systemd allows the daemon for its stop
stop_timeout_s() {
    local v
    v=$(sed -n 's/^TimeoutStopSec=//p' "$TS_SOURCE_DIR/systemd/turboschedd.service.in" | tail -1)
    case $v in
        "") echo 90 ;;                         # systemd's DefaultTimeoutStopSec
        *min) echo $(( ${v%min} * 60 )) ;;
        *ms) echo $(( (${v%ms} + 999) / 1000 )) ;;
        *s) echo "${v%s}" ;;
        *) echo "$v" ;;
    esac
}

# stop_storm PID: SIGTERM the generator, wait for it; its exit status
stop_storm() {
    kill -TERM "$1" 2>/dev/null
    wait "$1"
}

# family PID...: every TID of each process and of its child processes
family() {
    local p c
    for p in "$@"; do
        for c in /proc/"$p"/task/*; do echo "${c##*/}"; done
        for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do family "$c"; done
    done
}
