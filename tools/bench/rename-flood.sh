#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A rename flood from one local user against another user's CPU-bound work,
# with and without turboschedd, alternating, in one run: two threads of an
# unprivileged process rename themselves as fast as they can for SECS
# seconds (tools/bench-hostile renames) while two CPU-bound processes of
# another uid count their iterations (bench-hostile work). Per round:
#   - the work done without the daemon and with it, and their ratio;
#   - the daemon's CPU over the flood (schedstat run time, all threads);
#   - the renames sent, and the comm events the daemon read.
# The daemon runs the shipped defaults (realtime priority, nice -10) with
# one comm rule, as a user's config would.
#
# usage: rename-flood.sh BUILD_DIR [SECS] [ROUNDS]
. "$(dirname "$0")/lib.bash"
SECS=${2:-8}
ROUNDS=${3:-3}
bench_users bench-hostile
H=$TMP/bench-hostile
bench_config <<CONF
[rule cron]
comm = cron
class = jitter
CONF

# round: flood as nobody beside two workers as daemon (uid 1); prints
# "work renames"
round() {
    as_attacker "$H" renames "$SECS" 2 > "$TMP/sent" &
    local f=$!
    as_victim "$H" work "$SECS" > "$TMP/w0" &
    local a=$!
    as_victim "$H" work "$SECS" > "$TMP/w1" &
    local b=$!
    wait "$f" "$a" "$b"
    echo "$(( $(cat "$TMP/w0") + $(cat "$TMP/w1") )) $(cat "$TMP/sent")"
}
comm_events() { ctl --json status | sed -n 's/^ *"comm": \([0-9]*\),\?$/\1/p' | head -1; }

echo "rename flood: 2 threads of uid nobody for ${SECS} s, beside 2 CPU-bound processes of uid 1 ($(nproc) CPUs)"
echo "| round | work without daemon | work with daemon | ratio | daemon CPU | renames sent | comm events read |"
echo "|---|---|---|---|---|---|---|"
for r in $(seq "$ROUNDS"); do
    read -r base _ < <(round)
    daemon_start
    c0=$(cpu_ns "$DPID"); e0=$(comm_events)
    read -r with sent < <(round)
    c1=$(cpu_ns "$DPID"); e1=$(comm_events)
    daemon_stop
    printf '| %d | %s | %s | %s | %d ms | %s | %s |\n' "$r" "$base" "$with" "$(ratio "$with" "$base")" \
        $(( (c1 - c0) / 1000000 )) "$sent" $((e1 - e0))
    echo "$(ratio "$with" "$base") $(( (c1 - c0) / 1000000 ))" >> "$TMP/rows"
done
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "rename_work_ratio_median=$(cut -d' ' -f1 "$TMP/rows" | median)"
echo "rename_daemon_cpu_ms_median=$(cut -d' ' -f2 "$TMP/rows" | median)"
