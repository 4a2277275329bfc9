#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every file of the code, the tests, the scripts and the units says its
# licence (an SPDX line near its top), and no committed file names a path of
# the machine it was written on (anything under /home, /root or a work
# directory).
# Fixture trees (copies of real machines' sysfs and /proc) and fuzz corpora
# (inputs, byte for byte) are data, not code: they are left out.
set -euo pipefail

src=${TS_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$src"
SPDX='SPDX-License-Identifier: GPL-2.0-or-later'
TOP_LINES=5     # a shebang, a comment leader or a man page's first line may come before it
DIRS=(daemon ctl tools tests fuzz scripts systemd)

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    # Tracked and new (not ignored) files, as they are in the work tree.
    list() { git ls-files --cached --others --exclude-standard -- "$@"; }
    search() { git grep --untracked -nIE "$1"; }
else
    list() { find "$@" -type f; }
    search() { grep -rnIE --exclude-dir=build --exclude-dir=.git "$1" .; }
fi

fail=0
checked=0
while IFS= read -r f; do
    case $f in tests/fixtures/*|fuzz/corpus/*) continue ;; esac
    [ -e "$f" ] || continue     # deleted in the work tree, not yet committed
    checked=$((checked + 1))
    if ! head -n "$TOP_LINES" "$f" | grep -qF "$SPDX"; then
        echo "FAIL: $f: no '$SPDX' in its first $TOP_LINES lines"
        fail=1
    fi
done < <(list "${DIRS[@]}")
[ "$checked" -gt 100 ] || { echo "FAIL: only $checked files found under ${DIRS[*]}: wrong source directory?"; exit 1; }
echo "$checked files under ${DIRS[*]} checked for their SPDX line"

# An absolute path under a home or work directory: preceded by nothing that
# makes it part of a longer path (/tmp/root/proc is a test's own tree).
paths=$(search '(^|[^[:alnum:]_.~/-])/(work|home|root|Users)(/|$)') || true
if [ -n "$paths" ]; then
    echo "FAIL: paths of a development machine in the source tree (write them relative to the repository):"
    echo "$paths"
    fail=1
fi
exit "$fail"
