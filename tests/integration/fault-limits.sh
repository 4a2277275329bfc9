#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Resource bounds, each hit on purpose:
#   - the task table (max_tasks = 64, far fewer than the machine's threads):
#     one clear log line, the table never grows past the bound, new threads
#     are counted as not tracked, the daemon keeps working, and a task that
#     exits frees its place for a new one;
#   - control clients: 100 idle connections against the bound of 64: the
#     rest are refused with a TooManyClients error and one log line, a new
#     request is served once they leave, and RSS stays bounded.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/storm-lib.bash"
require_root
CLIENTS="$TS_BUILD_DIR/ts-clients"
[ -x "$CLIENTS" ] || skip "ts-clients not built"
WAIT_STEP=0.2
MAX=64

write_config <<CONF
[daemon]
max_tasks = $MAX
CONF
check "daemon starts with max_tasks = $MAX" start_daemon || exit 1
echo "  threads on the machine: $(live_tids | wc -l)"
check "table full: logged" grep -q "task table full (max_tasks = $MAX): new threads are not tracked until some exit" "$TMP/daemon.log"
check "tracked threads = the bound" test "$(status_num tracked)" -eq "$MAX"
# more threads while full: none tracked, all counted
U0=$(metric turbosched_untracked_tasks_total)
spawn S "$STORM" -w 0 -k 4 -T 8 -K "lim$$" -o "$TMP/keep" 2>/dev/null
check "40 more threads started" wait_for 20 test -s "$TMP/keep"
check "table still at the bound" test "$(status_num tracked)" -le "$MAX"
counted() { [ "$(metric turbosched_untracked_tasks_total)" -ge $((U0 + 36)) ]; }
check "the 36 new threads counted as not tracked" wait_for 20 counted
check "the line is logged once" test "$(grep -c 'task table full (max_tasks' "$TMP/daemon.log")" -eq 1
answers() { ctl status >/dev/null 2>&1; }
check "daemon answers while full" answers
check "daemon alive" kill -0 "$DAEMON_PID"
echo "  $(ctl status | grep -i -m1 'tracked')"

echo "--- control clients"
RSS0=$(daemon_rss_kib)
spawn C "$CLIENTS" "$TMP/control" 100 36 > "$TMP/clients.out"
check "100 clients connected" wait_for 90 test -s "$TMP/clients.out"
echo "  $(cat "$TMP/clients.out")"
read -r _ n _ refused _ other < "$TMP/clients.out"
check "36 over the bound refused with TooManyClients" test "${refused:-0}" -eq 36
check "the 64 within it kept open" test "${other:-1}" -eq 0
check "the limit is logged" grep -q "control: 64 clients connected, the configured maximum; refusing new ones until some leave" "$TMP/daemon.log"
out=$(ctl status 2>&1); rc=$?
check "a client over the bound is refused (ctl: exit 1)" test "$rc" -eq 1
echo "  ctl status while full: $out"
RSS1=$(daemon_rss_kib)
echo "  RSS ${RSS0} KiB before, ${RSS1} KiB with 64 clients"
check "RSS with 64 idle clients within 2 MiB of before" test "$RSS1" -le $((RSS0 + 2048))
kill -TERM "$C"; wait "$C" 2>/dev/null
check "served again once they left" wait_for 20 answers

check "daemon stops" stop_daemon
check "no sanitizer report in the daemon's log" sanitizer_clean "$TMP/daemon.log"
finish
