#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The jitter slice on the real kernel: a hog on CPU 0 and rule-matched
# jitter packed onto it. Each packed thread reads back the configured slice
# with sched_getattr, keeping its own policy and nice; a real-time one keeps
# its attributes. After SIGTERM every thread has its own attributes back
# (a custom slice and a nice value included); after kill -9 the next daemon
# puts them back from the state file, to the thread and the child process a
# packed program created while no daemon ran as well (fork copies the slice).
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/storm-lib.bash"
require_storm
[ "$(nproc)" -ge 2 ] || skip "needs 2 online CPUs"
ALL=$(all_cpus)
[ "$ALL" = "0-1" ] || skip "written for a 2-CPU machine (online: $ALL)"
ATTR="$TS_BUILD_DIR/ts-schedattr"
why=$("$ATTR" probe) || skip "no custom slices on this kernel: $why"
command -v chrt >/dev/null || skip "chrt (util-linux) not installed"

harness_on_cpu0
# Polls run on CPU 0 beside the hog: not too often, or the plan falls back.
WAIT_STEP=0.2
NAME="tsl$$"
SLICE=500000    # not the default, so that what is read back is the configured one
rule_config() {
    PACKING_EXTRA="jitter_slice = $((SLICE / 1000))us" write_config <<CONF

[rule test-jitter]
comm = ${NAME}*
class = jitter
CONF
}
no_rule_config() { write_config </dev/null; }

spawn HOG "$LOAD" -c 0 -d "$HOG_DUTY" -p 10 -n tshog$$
# Jitter with every CPU: one with the default slice, one with a custom
# slice and nice of its own, one real-time.
spawn J1 taskset -c 0-1 "$LOAD" -d 2 -p 20 -n "${NAME}a"
spawn J2 taskset -c 0-1 nice -n 3 "$LOAD" -d 2 -p 20 -n "${NAME}b"
spawn J3 taskset -c 0-1 chrt -f 1 "$LOAD" -d 2 -p 20 -n "${NAME}c"
# and a program of two threads that makes more on a signal
start_keepers STORM_PID "$TMP/keep" "${NAME}k" 1 2 taskset -c 0-1 || exit 1
KP=$(cut -d' ' -f1 "$TMP/keep")
fair=("$J1" "$J2" "$KP")
jitter=("$J1" "$J2" "$J3" "$KP")
tids() { local p t; for p in "$@"; do for t in /proc/"$p"/task/*; do echo "${t##*/}"; done; done; }
# the threads exist once the programs have exec'd under their names
check "jitter started" wait_for 10 jitter_named || { finish; exit 1; }
for t in $(tids "$J2"); do "$ATTR" set "$t" 2000000 || fail "setting a custom slice on $t"; done
ORIG_TIDS=$(tids "${jitter[@]}")
"$ATTR" get $ORIG_TIDS >"$TMP/orig"
echo "  original attributes:"; sed 's/^/    /' "$TMP/orig"

# every fair thread reads back the configured slice, its policy and nice unchanged
"$ATTR" get $(tids "${fair[@]}") | sed "s/runtime=[0-9]*/runtime=$SLICE/" >"$TMP/want"
sliced() { "$ATTR" get $(tids "${fair[@]}") | cmp -s - "$TMP/want"; }
as_before() { "$ATTR" get $ORIG_TIDS | cmp -s - "$TMP/orig"; }
rt_untouched() { [ "$("$ATTR" get $(tids "$J3"))" = "$(grep "^$(tids "$J3") " "$TMP/orig")" ]; }
show() { echo "  now:"; "$ATTR" get $(tids "${jitter[@]}") $(family "$KP") | sort -u | sed 's/^/    /'; }
# attrs_of_family RUNTIME: every thread and process of the keeper has its
# main thread's original attributes with this slice
KP_ORIG=$(grep "^$KP " "$TMP/orig" | cut -d' ' -f2- | sed 's/ runtime=.*//')
family_is() { [ "$("$ATTR" get $(family "$KP") | cut -d' ' -f2- | sort -u)" = "$KP_ORIG runtime=$1" ]; }
KP_DEFAULT=$(grep "^$KP " "$TMP/orig" | sed 's/.*runtime=//')

rule_config
check "daemon starts" start_daemon || { finish; exit 1; }
check "jitter packed on the busy CPU 0" wait_for 60 jitter_on 0 || { show; finish; exit 1; }
check "packed threads read back the configured slice" wait_for 5 sliced || show
check "the real-time thread's attributes are untouched" rt_untouched || show
check "... and the daemon said why" grep -q "pid $J3 (${NAME}c): real-time, deadline or idle policy" "$TMP/daemon.log"
check "support logged at start" grep -q "jitter slice: supported" "$TMP/daemon.log"
# A plan may fall back for a moment (CPU 0 runs the hog, the harness and a
# sanitizer build of the daemon): ask again until it is packed when asked.
explain_sliced() { explained=$(ctl explain "$J1"); grep -q "with a $((SLICE / 1000)) us slice" <<<"$explained"; }
check "explain shows the slice" wait_for 20 explain_sliced || echo "$explained"

dump_sliced() { ctl --json dump | grep -q "\"slice_us\": *$((SLICE / 1000))\b"; }
check "dump shows the slice" wait_for 20 dump_sliced
# pause gives every change back before it replies, attributes included
ctl pause >/dev/null
check "pause: every thread has its own attributes back" as_before || show
ctl resume >/dev/null
check "resume: the slice again" wait_for 20 sliced || show

check "SIGTERM: daemon exits cleanly" stop_daemon TERM
check "SIGTERM: every thread has its own attributes back" as_before || show
check "SIGTERM: every mask restored" jitter_on "$ALL"

check "restart: daemon starts" start_daemon || { finish; exit 1; }
check "restart: packed again" wait_for 20 jitter_on 0
check "restart: slice again" wait_for 5 sliced || show
check "the state file carries the slice" wait_for 5 grep -q " slice=p=0,n=3,f=0x0,r=2000000,d=0,s=$SLICE ${NAME}b" "$TMP/state"
# Killed while packed, or the rest means nothing: stopped first, so that no
# fallback comes between the check and the kill.
frozen_packed() {
    kill -STOP "$DAEMON_PID"
    jitter_on 0 && sliced && return 0
    kill -CONT "$DAEMON_PID"
    nap 0.3
    return 1
}
check "packed with the slice when killed" wait_for 30 frozen_packed
stop_daemon KILL
check "after kill -9 the slice stays" sliced || show
before=$(family "$KP" | wc -l)
kill -USR1 "$KP"; kill -USR2 "$KP"
grown() { [ "$(family "$KP" | wc -l)" -ge $((before + 2)) ]; }
check "a thread and a child created while down" wait_for 20 grown
check "... they inherited the slice" family_is "$SLICE" || show
# The next daemon has no rule for them: it only undoes what the last one did.
no_rule_config
check "after kill -9: daemon starts" start_daemon || { finish; exit 1; }
check "after kill -9: every thread has its own attributes back" wait_for 5 as_before || show
check "after kill -9: so do the thread and child created while down" family_is "$KP_DEFAULT" || show
check "after kill -9: the real-time thread still untouched" rt_untouched
check "after kill -9: every mask restored" jitter_on "$ALL"
check "daemon stops" stop_daemon TERM
check "no error in the daemon's log" bash -c "! grep -q '^<[0-3]>' '$TMP/daemon.log'"
finish
