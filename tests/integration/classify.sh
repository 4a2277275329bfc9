#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Classification on the real kernel: a process whose comm matches a jitter
# rule is jitter soon after its exec or its rename; a reload that removes the
# rule reclassifies it; a bad config at reload keeps the old one; control
# socket replies (dump, explain, metrics) show what the daemon decided.
. "$(dirname "$0")/lib.bash"
require_root

NAME="tc$$"
rules() {   # the drop-in holding the jitter rule, written atomically
    cat > "$TMP/rules.d/.new" && mv "$TMP/rules.d/.new" "$TMP/rules.d/50-test.conf"
}
write_config </dev/null
# No tick in this test's time (after the first at start): a class that shows
# must come from the exec, rename or reload itself, so "within one tick"
# holds for any tick interval, without timing anything.
sed -i 's/^tick_interval = .*/tick_interval = 1min/' "$TMP/turbosched.conf"
rules <<CONF
[rule test-jitter]
comm = ${NAME}*
class = jitter
CONF

class_of() { ctl --json explain "$1" 2>/dev/null | sed -n 's/.*"class": *"\([a-z]*\)".*/\1/p' | head -1; }
class_is() { [ "$(class_of "$1")" = "$2" ]; }

check "daemon starts with a rule in a drop-in" start_daemon
nice_of() { local s; s=$(< "/proc/$1/stat"); s=${s##*) }; set -- $s; echo "${17}"; }
check "daemon runs at the default nice -10 (now $(nice_of "$DAEMON_PID"))" test "$(nice_of "$DAEMON_PID")" = -10

spawn EXECED "$LOAD" -d 1 -p 50 -n "${NAME}e"
check "exec'd process matching the rule is jitter" wait_for 10 class_is "$EXECED" jitter
check "explain names the rule and its file:line" \
    bash -c "'$CTL' --socket '$TMP/control' explain $EXECED | grep -q \"rule 'test-jitter' (.*50-test.conf:1)\""

spawn RENAMED "$LOAD" -d 1 -p 50 -n other$$ -r "${NAME}r" -f "$TMP/go"
check "before its rename it is not jitter" wait_for 10 class_is "$RENAMED" ignore
touch "$TMP/go"
check "renamed process is jitter" wait_for 10 class_is "$RENAMED" jitter

check "dump lists the jitter task with its masks" \
    bash -c "'$CTL' --socket '$TMP/control' --json dump | grep -q '\"comm\": *\"${NAME}e\"'"
check "dump shows every CPU's core" \
    bash -c "[ \$('$CTL' --socket '$TMP/control' --json dump | grep -c '\"core_id\"') -eq \$(nproc) ]"
ctl metrics > "$TMP/metrics"
families_documented() {
    # a histogram's series are its name with _bucket, _sum or _count
    awk '/^# HELP/ {h[$3] = 1} /^# TYPE/ {t[$3] = $4}
         /^turbosched_/ {split($1, a, "{"); f = a[1]
             if (!(f in t)) { g = f; sub(/_(bucket|sum|count)$/, "", g); if (t[g] == "histogram") f = g }
             s[f] = 1}
         END {n = 0; for (f in s) {n++; if (!(f in h) || !(f in t)) exit 1}; exit n > 0 ? 0 : 1}' "$TMP/metrics"
}
check "metrics: HELP and TYPE for every family" families_documented
check "metrics: jitter count present" grep -q '^turbosched_tasks{class="jitter"} [1-9]' "$TMP/metrics"
PROMTOOL=${PROMTOOL:-$(command -v promtool || echo /usr/local/bin/promtool)}
if [ -x "$PROMTOOL" ]; then
    check "metrics: promtool check metrics accepts the daemon's output" "$PROMTOOL" check metrics < "$TMP/metrics"
else
    echo "SKIP metrics: promtool check (no promtool; scripts/install-deps.sh installs it)"
fi

# A bad drop-in: reload fails, the old rules stay in force.
rules <<CONF
[rule test-jitter]
comm = ${NAME}*
clas = jitter
CONF
out=$(ctl reload 2>&1); rc=$?
check "reload of a bad config fails (exit 1)" test "$rc" -eq 1
check "its message names the file and line" bash -c "echo '$out' | grep -q '50-test.conf:3'"
check "old rule still in force" class_is "$EXECED" jitter

# Removing the rule by SIGHUP reclassifies both.
rules </dev/null
kill -HUP "$DAEMON_PID"
check "SIGHUP without the rule: no longer jitter" wait_for 10 class_is "$EXECED" ignore
check "renamed one too" wait_for 10 class_is "$RENAMED" ignore
check "status says the reload succeeded" bash -c "'$CTL' --socket '$TMP/control' --json status | grep -A1 last_reload | grep -q '\"ok\": *true'"

# And back through the control socket, with a nice value of its own.
rules <<CONF
[daemon]
nice = 3
[rule test-jitter]
comm = ${NAME}*
class = jitter
CONF
check "ctl reload with the rule back" ctl reload
check "jitter again" wait_for 10 class_is "$EXECED" jitter
check "the reload set the daemon's nice to 3 (now $(nice_of "$DAEMON_PID"))" test "$(nice_of "$DAEMON_PID")" = 3
check "SIGTERM" stop_daemon TERM
check "no error in the daemon's log but the bad reload" \
    bash -c "[ \$(grep '^<[0-3]>' '$TMP/daemon.log' | grep -vc '50-test.conf\|reload failed\|invalid') -eq 0 ]"
finish
