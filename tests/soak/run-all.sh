#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `make soak`: the fault tests at the sizes the reliability targets name,
# too long for the test command (about 10 minutes here):
#   - a storm of 100,000 short tasks with threads against the sanitizer build;
#   - reload storms of 600 paced reloads and 2,000 SIGHUPs;
#   - SIGTERM during a fork storm, 10 rounds.
# Run it against the dev build (ASan/UBSan): usage: run-all.sh BUILD_DIR
set -u
BUILD=$(realpath "${1:?usage: run-all.sh BUILD_DIR}")
SRC=$(realpath "$(dirname "$0")/../..")
export TS_BUILD_DIR=$BUILD TS_SOURCE_DIR=$SRC
IT=$SRC/tests/integration

failed=()
run() {   # run NAME VAR=VALUE... : one fault test with larger sizes
    local name=$1 t0 rc
    shift
    echo "=== $name $*"
    t0=$SECONDS
    env "$@" bash "$IT/$name.sh"
    rc=$?
    echo "=== $name: exit $rc after $((SECONDS - t0)) s"
    case $rc in 0) ;; 77) echo "=== $name skipped" ;; *) failed+=("$name") ;; esac
}
run fault-storm STORM_TASKS=100000
run fault-reload-storm PACED=600 BURST=2000
run fault-sigterm-storm ROUNDS=10
if [ ${#failed[@]} -gt 0 ]; then
    echo "soak: FAILED: ${failed[*]}"
    exit 1
fi
echo "soak: all passed"
