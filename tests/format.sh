#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every C file of the tree (daemon, ctl, tests, tools, fuzz) as the
# repository's .clang-format would write it: clang-format --dry-run --Werror,
# with the clang-format scripts/install-deps.sh installs (Debian 12: 14).
# Another version may break lines differently; CLANG_FORMAT names the one
# to run. Skips (77) when there is none.
#
# usage: format.sh [SOURCE_DIR]
set -euo pipefail

src=${1:-${TS_SOURCE_DIR:-$(dirname "$0")/..}}
cd "$src"
cf=${CLANG_FORMAT:-clang-format}

if ! command -v "$cf" >/dev/null; then
    echo "format: no $cf (scripts/install-deps.sh installs it)"
    exit 77
fi
if [ ! -f .clang-format ]; then
    echo "format: no .clang-format in $src" >&2
    exit 1
fi

# The tree's own files only: not a build directory inside it.
mapfile -d '' files < <(find daemon ctl tests tools fuzz -path tests/fixtures -prune -o \
    -type f \( -name '*.c' -o -name '*.h' \) -print0 | LC_ALL=C sort -z)

# --style=file: the .clang-format above each file, which is the tree's.
if ! printf '%s\0' "${files[@]}" | xargs -0 -n 32 "$cf" --style=file --dry-run --Werror; then
    echo "format: files above differ from $("$cf" --version | head -n 1)'s output; 'clang-format -i FILE' rewrites one" >&2
    exit 1
fi
echo "format: ${#files[@]} files as .clang-format writes them"
