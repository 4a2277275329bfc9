#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# systemd-analyze verify of the shipped units, as configured by the build,
# with the executable and the man pages they name present: it must print
# nothing. (The e2e test verifies them again, installed, under real systemd.)
. "$(dirname "$0")/lib.bash"
command -v systemd-analyze >/dev/null || skip "no systemd-analyze"
UNIT="$TS_BUILD_DIR/turboschedd.service"
[ -f "$UNIT" ] || skip "the build did not configure turboschedd.service"

# ExecStart= names the installed path; point it at this build's daemon.
sed "s|^ExecStart=.*/turboschedd|ExecStart=$DAEMON|" "$UNIT" > "$TMP/turboschedd.service"
cp "$TS_SOURCE_DIR/systemd/turbosched-jitter.slice" "$TMP/"
mkdir -p "$TMP/man/man5" "$TMP/man/man8"
ln -s "$TS_SOURCE_DIR"/man/*.8 "$TMP/man/man8/"
ln -s "$TS_SOURCE_DIR"/man/*.5 "$TMP/man/man5/"

out=$(cd "$TMP" && MANPATH="$TMP/man" systemd-analyze verify turboschedd.service turbosched-jitter.slice 2>&1)
rc=$?
[ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/  /'
check "systemd-analyze verify succeeds" test "$rc" -eq 0
check "and prints nothing (Documentation= man pages found, ExecStart= executable)" test -z "$out"
check "ExecStart= is the daemon" grep -q "^ExecStart=$DAEMON\$" "$TMP/turboschedd.service"
finish
