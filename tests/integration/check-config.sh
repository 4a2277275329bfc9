#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# turboschedd --check-config as an administrator uses it: a good config
# prints its rules and exits 0; each kind of error is named with its file and
# line and the exit status is 1. Needs no privilege.
. "$(dirname "$0")/lib.bash"

mkdir -p "$TMP/good/rules.d" "$TMP/bad/rules.d"
cat > "$TMP/good/turbosched.conf" <<'CONF'
[daemon]
tick_interval = 500ms
[rule agents]
comm = telegraf collectd*
class = jitter
CONF
cat > "$TMP/good/rules.d/10-more.conf" <<'CONF'
[rule builds]
exe = /usr/bin/make
user = build
class = intensive
CONF

out=$("$DAEMON" --check-config --config "$TMP/good/turbosched.conf" 2>&1); rc=$?
check "good config: exit 0" test "$rc" -eq 0
check "good config: prints its rules in order" \
    bash -c "printf '%s\n' \"\$1\" | grep -n '^\[rule ' | tr '\n' ' ' | grep -q 'agents.*builds'" _ "$out"
check "good config: prints the globs as understood" bash -c "printf '%s\n' \"\$1\" | grep -q '^comm = telegraf collectd\*'" _ "$out"
check "good config: prints the settings" bash -c "printf '%s\n' \"\$1\" | grep -q '^tick_interval = 500ms'" _ "$out"
"$DAEMON" --check-config --config "$TMP/good/turbosched.conf" > /dev/full 2> "$TMP/full.err"; rc=$?
check "good config written to a full disk: exit 1" test "$rc" -eq 1
check "good config written to a full disk: says why" grep -q "writing to standard output" "$TMP/full.err"

long=$(printf 'x%.0s' $(seq 300))
cat > "$TMP/bad/turbosched.conf" <<CONF
[deamon]
[daemon]
tick_interval = soon
prioity = 3
[rule agents]
comm = telegraf
class = jitter
[rule agents]
comm = $long
class = jitter
CONF
out=$("$DAEMON" --check-config --config "$TMP/bad/turbosched.conf" 2>&1); rc=$?
echo "$out" | sed 's/^/  /' | cut -c1-150
check "bad config: exit 1" test "$rc" -eq 1
has() { printf '%s\n' "$out" | grep -q -- "$1"; }
check "unknown section named with file:line" has "bad/turbosched.conf:1: .*deamon"
check "bad value named with file:line" has "bad/turbosched.conf:3: .*tick_interval"
check "unknown key named with file:line" has "bad/turbosched.conf:4: unknown key 'prioity'"
check "duplicate rule named with file:line" has "bad/turbosched.conf:8: .*agents"
check "over-long line named with file:line" has "bad/turbosched.conf:9: .*long"
check "lines start with the file name (no <N> prefix outside the journal)" \
    bash -c "! printf '%s\n' \"\$1\" | grep -v '^$TMP/bad/turbosched.conf'" _ "$out"

# An error in a drop-in names the drop-in.
cp "$TMP/good/turbosched.conf" "$TMP/bad/turbosched.conf"
printf '[rule x]\ncomm = a\nclas = jitter\n' > "$TMP/bad/rules.d/10-agents.conf"
out=$("$DAEMON" --check-config --config "$TMP/bad/turbosched.conf" 2>&1); rc=$?
check "drop-in error: exit 1" test "$rc" -eq 1
check "drop-in error names rules.d/10-agents.conf:3" has "rules.d/10-agents.conf:3: unknown key 'clas'"

out=$("$DAEMON" --config "$TMP/bad/turbosched.conf" 2>&1); rc=$?
check "the daemon refuses to start on it (exit 3)" test "$rc" -eq 3
# (captured first: grep -q in a pipe would close it early, and the daemon's
# next line would die of SIGPIPE)
out=$("$DAEMON" --check-config --config "$TMP/nope.conf" 2>&1); rc=$?
check "missing file: exit 1 and named" bash -c "[ $rc -eq 1 ] && grep -q 'nope.conf' <<< \"\$1\"" _ "$out"
check "unknown option: usage error (exit 2)" bash -c "'$DAEMON' --frobnicate >/dev/null 2>&1; [ \$? -eq 2 ]"
check "--help mentions --check-config" bash -c "'$DAEMON' --help | grep -q -- --check-config"
check "--print-topology on a POWER9 SMT4 fixture shows 1.5x and 1.25x cores" \
    bash -c "'$DAEMON' --print-topology --sysfs-root '$TS_SOURCE_DIR/tests/fixtures/power9-smt4' | grep -q '1.500x' && '$DAEMON' --print-topology --sysfs-root '$TS_SOURCE_DIR/tests/fixtures/power9-smt4' | grep -q '1.250x'"
check "--print-topology on this machine: every online CPU in a core" \
    bash -c "[ \$('$DAEMON' --print-topology | grep -c '^  core') -ge 1 ]"
# the CPU's turbo table where it publishes one (an Intel machine with the msr
# module), else why not
out=$("$DAEMON" --turbo-table 2>&1); rc=$?
if [ "$rc" -eq 0 ]; then
    printf '%s\n' "$out" > "$TMP/turbo.conf"
    check "--turbo-table: a [capacity] table that --check-config accepts" \
        bash -c "grep -q '^active1' '$TMP/turbo.conf' && '$DAEMON' --check-config --config '$TMP/turbo.conf' >/dev/null"
else
    check "--turbo-table: exit 1 and why there is no table ($out)" \
        bash -c "[ $rc -eq 1 ] && grep -q '^turboschedd: no turbo ratio table: ..' <<< \"\$1\"" _ "$out"
fi
finish
