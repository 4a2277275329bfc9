#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A rename flood against the real daemon: a process renaming itself in a
# loop (any local user can) sends the daemon a comm event per rename. Over
# COMM_FLOOD_PER_S the daemon leaves them out through the kernel's event
# filter for a while (daemon/engine/engine.h), then finds what was renamed
# meanwhile by a rescan. Checked:
#   - the flood is noticed, said once, and counted in status;
#   - the daemon reads far fewer comm events than the flood sent;
#   - a task that renames itself to a jitter name while renames are unheard
#     is classified jitter all the same (the rescan);
#   - once the flood is over, a rename is heard again as it happens.
. "$(dirname "$0")/lib.bash"
require_root

NAME="rf$$"
write_config <<CONF
[rule renamed]
comm = ${NAME}j*
class = jitter
CONF
check "daemon starts" start_daemon || { finish; exit; }
class_of() { ctl --json explain "$1" 2>/dev/null | sed -n 's/.*"class": *"\([a-z]*\)".*/\1/p' | head -1; }
class_is() { [ "$(class_of "$1")" = "$2" ]; }
status_has() { ctl --json status 2>/dev/null | grep -q "$1"; }
status_num() { ctl --json status 2>/dev/null | sed -n "s/^ *\"$1\": \([0-9]*\),\?$/\1/p" | head -1; }
logged() { tail -c +$((LOG_START + 1)) "$TMP/daemon.log" | grep -q "$1"; }

# Renamers: wait for their go file, rename themselves to NAME + $1 once,
# then block (no exec: it would set the comm again).
mkfifo "$TMP/hold"
renamer() {
    bash -c 'while [ ! -e "$1" ]; do read -r -t 0.05 _ <> "$2" || true; done
             printf %s "$3" > /proc/$BASHPID/comm; exec 3<> "$2"; read -r -u 3 _' renamer \
        "$TMP/go-$1" "$TMP/hold" "${NAME}$1" &
    CHILDREN+=("$!")
    eval "$2=$!"
}
renamer j1 LATE
renamer j2 AFTER
wait_for 10 test -e "/proc/$LATE" && wait_for 10 test -e "/proc/$AFTER"
COMM0=$(ctl --json status | sed -n 's/^ *"comm": \([0-9]*\),\?$/\1/p' | head -1)

# The flood: 8 s of renames as fast as a shell writes them.
spawn FLOOD bash -c 'i=0; end=$((SECONDS + 8)); while ((SECONDS < end)); do
                         printf %s "f$((i++))" > /proc/$BASHPID/comm; done; echo "$i" > "$1"' flood "$TMP/renames"
noticed() { status_has '"renames_unheard": true' || logged "this kernel cannot leave them out"; }
check "the flood is noticed" wait_for 30 noticed
if logged "this kernel cannot leave them out"; then
    skip "the kernel has no proc connector event filter (6.6+): every rename is read"
fi
check "it is said in the log" logged "renames: .* over 5000 a second"
touch "$TMP/go-j1"      # renamed while renames are not heard
wait "$FLOOD"
SENT=$(cat "$TMP/renames")
check "the flood is over and renames are heard again" wait_for 60 status_has '"renames_unheard": false'
COMM=$(ctl --json status | sed -n 's/^ *"comm": \([0-9]*\),\?$/\1/p' | head -1)
READ=$((COMM - COMM0))
echo "  the flood sent $SENT renames, the daemon read $READ comm events"
check "the daemon read under half of them" test $((2 * READ)) -lt "$SENT"
check "counted in status ($(status_num rename_floods) floods)" test "$(status_num rename_floods)" -ge 1
check "the notice was said once, at notice level" test "$(grep -c "^<5>renames: .* over 5000 a second" "$TMP/daemon.log")" -eq 1
check "a task renamed while unheard is jitter (found by a rescan)" wait_for 60 class_is "$LATE" jitter
touch "$TMP/go-j2"
check "a rename after the flood is heard and classified" wait_for 30 class_is "$AFTER" jitter
check "daemon alive" kill -0 "$DAEMON_PID"
check "daemon stops cleanly" stop_daemon
finish
