#!/usr/bin/env bash
# Event storm, turboschedd against cgrulesengd (Debian's cgroup-tools) with
# the equivalent rule, one after the other in the same run: a fork+exec
# storm from 2 workers (tools/bench-storm) in which each new task checks,
# 20 ms after its exec, whether it was placed: confined to CPU 0 (turboschedd,
# with CPU 0 kept busy so that its plan packs jitter there; the plan is held
# by a long min_change_interval so the storm's own load cannot undo it), or
# in a cpuset group on CPU 0 (cgrulesengd). Reports % placed and the
# listener's netlink drops. CPU per event: tools/bench/event-cost.sh.
#
# usage: storm.sh BUILD_DIR [CHILDREN]
. "$(dirname "$0")/lib.bash"
N=${2:-20000}
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
# storm [ARGS]: the storm, key=value lines into $TMP/storm.out
storm() { "$BUILD/bench-storm" --probe "$TMP/$NAME" --children "$N" --workers 2 --check-ms 20 --expect 0 "$@" > "$TMP/storm.out"; }
kv() { sed -n "s/^$1=//p" "$TMP/storm.out"; }

cp "$BUILD/bench-storm" "$TMP/$NAME"
"$LOAD" -c 0 -d 60 -p 10 -n tsbhog & PIDS+=($!)

# --- turboschedd
bench_config <<CONF
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
d0=$(netlink_drops "$DPID")
storm
d1=$(netlink_drops "$DPID")
ovf=$(ctl --json status | sed -n 's/^ *"overflows": \([0-9]*\).*/\1/p' | head -1)
ts_placed=$(kv placed); ts_rep=$(kv reported); ts_rate=$(kv execs_per_s)
ts_drops=$((d1 - d0))
daemon_stop

# --- cgrulesengd
cg_line="| cgrulesengd | not installed or no v1 cpuset hierarchy | | | |"
if command -v cgrulesengd >/dev/null && [ -d /sys/fs/cgroup/cpuset ]; then
    [ -e /etc/cgrules.conf ] && { RULES_BACKUP=$TMP/cgrules.conf.orig; cp -p /etc/cgrules.conf "$RULES_BACKUP"; }
    [ -e /etc/cgrules.conf ] || MADE+=(/etc/cgrules.conf)
    mkdir -p "$CG"
    echo 0 > "$CG/cpuset.cpus"
    cat /sys/fs/cgroup/cpuset/cpuset.mems > "$CG/cpuset.mems"
    echo "*:$NAME cpuset tsbench/" > /etc/cgrules.conf
    [ -e /etc/cgconfig.conf ] || { touch /etc/cgconfig.conf; MADE+=(/etc/cgconfig.conf); }
    [ -e /etc/cgconfig.d ] || { mkdir /etc/cgconfig.d; MADE+=(/etc/cgconfig.d); }
    cgrulesengd -n -Q >"$TMP/cgrulesengd.log" 2>&1 &
    CGPID=$!; PIDS+=("$CGPID")
    listening() { [ "$(find "/proc/$CGPID/fd" -lname 'socket:*' 2>/dev/null | wc -l)" -ge 1 ]; }
    wait_until 30 listening || { echo "storm.sh: cgrulesengd did not start" >&2; cat "$TMP/cgrulesengd.log" >&2; exit 1; }
    d0=$(netlink_drops "$CGPID")
    storm --cgroup /tsbench
    d1=$(netlink_drops "$CGPID")
    kill -TERM "$CGPID"; wait "$CGPID" 2>/dev/null || true
    cg_line=$(awk -v p="$(kv placed)" -v r="$(kv reported)" -v d=$((d1 - d0)) -v x="$(kv execs_per_s)" \
        'BEGIN { printf "| cgrulesengd | %d / %d | %.2f%% | %d | %s |", p, r, 100 * p / r, d, x }')
fi

echo "| listener | placed / reported | placed | netlink drops | storm execs/s |"
echo "|---|---|---|---|---|"
awk -v p="$ts_placed" -v r="$ts_rep" -v d="$ts_drops" -v x="$ts_rate" -v o="${ovf:-0}" \
    'BEGIN { printf "| turboschedd | %d / %d | %.2f%% | %d (overflows counted by the daemon: %d) | %s |\n", p, r, 100 * p / r, d, o, x }'
echo "$cg_line"
echo
echo "$N children from 2 workers, each checking 20 ms after its exec; CPU 0 kept 60% busy."
echo "placed_pct_turboschedd=$(awk -v p="$ts_placed" -v r="$ts_rep" 'BEGIN { printf "%.2f", 100 * p / r }')"
