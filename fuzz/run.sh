#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `make fuzz`: builds the libFuzzer targets (the `fuzz` preset, clang) and
# runs each for FUZZ_SECONDS (default 600) from its seed corpus, one after
# the other. New inputs go to a scratch corpus (build/fuzz/corpus/NAME), not
# the committed one: copy the useful ones into fuzz/corpus/NAME by hand (the
# unit tests replay those). A crash leaves its input in build/fuzz/crashes/.
#
#   fuzz/run.sh [NAME...]        e.g. FUZZ_SECONDS=60 fuzz/run.sh config
#
# Prints one line per fuzzer: name, executions, new inputs, crashes, seconds.
# Exit 0 when no fuzzer crashed, 1 otherwise.
set -euo pipefail
SRC=$(realpath "$(dirname "$0")/..")
SECONDS_EACH=${FUZZ_SECONDS:-600}
cd "$SRC"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j"$(nproc)" >/dev/null
BUILD=$SRC/build/fuzz

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    for f in fuzz/fuzz-*.c; do n=${f#fuzz/fuzz-}; names+=("${n%.c}"); done
fi

status=0
summary=()
for name in "${names[@]}"; do
    bin=$BUILD/fuzz/fuzz-$name
    [ -x "$bin" ] || bin=$BUILD/fuzz-$name
    [ -x "$bin" ] || { echo "fuzz/run.sh: no fuzzer '$name' (fuzz/fuzz-$name.c)" >&2; exit 2; }
    scratch=$BUILD/corpus/$name
    crashes=$BUILD/crashes/$name
    mkdir -p "$scratch" "$crashes"
    log=$BUILD/fuzz-$name.log
    before=$(find "$scratch" -type f | wc -l)
    echo "fuzzing $name for ${SECONDS_EACH} s (log: $log)"
    rc=0
    "$bin" -max_total_time="$SECONDS_EACH" -print_final_stats=1 \
           -artifact_prefix="$crashes/" "$scratch" "fuzz/corpus/$name" >"$log" 2>&1 || rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
    found=$(find "$crashes" -type f | wc -l)
    new=$(( $(find "$scratch" -type f | wc -l) - before ))
    line="$name: ${execs:-?} executions in ${secs:-?} s, $new new inputs, $found crashes"
    if [ "$rc" -ne 0 ] || [ "$found" -gt 0 ]; then
        status=1
        line="$line (exit $rc; see $log)"
    fi
    summary+=("$line")
done
printf '%s\n' "${summary[@]}"
exit $status
