#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian package as an administrator gets it: built from a clean copy of
# the tree with `dpkg-buildpackage -us -uc -b` (build-deb.sh), then lintian
# on the .deb, the -dbgsym .deb and the .dsc must print no E: or W: line.
# Overrides live in debian/*lintian-overrides, each with a comment saying why.
#
# Env: TS_SOURCE_DIR, TS_BUILD_DIR (set by ctest).
set -euo pipefail

src=${TS_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${TS_BUILD_DIR:-$src/build}

command -v lintian >/dev/null || { echo "SKIP: lintian not installed (scripts/install-deps.sh installs it)"; exit 77; }

set +e
deb=$(bash "$src/tests/package/build-deb.sh" "$src" "$build/deb")
rc=$?
set -e
[ "$rc" -eq 77 ] && { echo "$deb"; exit 77; }
[ "$rc" -eq 0 ] || { echo "FAIL: the package did not build"; exit 1; }

out_dir=$(dirname "$deb")
files=("$deb" "$out_dir"/turbosched-dbgsym_*.deb "$out_dir"/turbosched_*.dsc)
for f in "${files[@]}"; do
    [ -e "$f" ] || { echo "FAIL: $f was not built"; ls -l "$out_dir"; exit 1; }
done
echo "lintian $(lintian --print-version) on: ${files[*]##*/}"
# --info: the explanation of each tag comes with a failure. Lintian's own
# notes (it does not like running as root) are not tags: only tag lines count.
rc=0
report=$(lintian --info --fail-on error,warning "${files[@]}" 2>&1) || rc=$?
echo "$report"
if [ "$rc" -ne 0 ] || echo "$report" | grep -qE '^[EW]: '; then
    echo "FAIL: lintian exit $rc; errors or warnings are the E: and W: lines above"
    exit 1
fi
echo "PASS: no E: or W: line"
