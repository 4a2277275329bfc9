#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Build the Debian package as an administrator would, from a clean copy of
# this source tree: `dpkg-buildpackage -us -uc -b`, and `dpkg-source -b` for
# the .dsc. Used by the package tests (lintian, the end-to-end test).
#
#   build-deb.sh SOURCE_DIR OUT_DIR
#
# The copy holds the files git would commit (tracked and untracked, not
# ignored: no build/ directory), as they are in the work tree. The result is
# kept in OUT_DIR keyed by a hash of those files, so a second test in the same
# suite run reuses it; a lock serialises concurrent builds. Prints the path
# of the .deb on stdout, the build's log on stderr when it fails.
# Exit 77 (with a one-line reason) when dpkg-buildpackage or dh is missing.
set -euo pipefail

src=$(cd "${1:?usage: build-deb.sh SOURCE_DIR OUT_DIR}" && pwd)
out=${2:?usage: build-deb.sh SOURCE_DIR OUT_DIR}

for tool in dpkg-buildpackage dpkg-source dh fakeroot; do
    command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed (scripts/install-deps.sh installs it)"; exit 77; }
done

mkdir -p "$out"
out=$(cd "$out" && pwd)
exec 9>"$out/.lock"
flock 9

list_files() {
    if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git -C "$src" ls-files -z --cached --others --exclude-standard
    else
        (cd "$src" && find . -path ./build -prune -o -path ./.git -prune -o \( -type f -o -type l \) -print0 | sed -z 's|^\./||')
    fi
}
# present FILES...: those that exist in the work tree (a deleted file is
# still listed until the deletion is committed); symbolic links as such, the
# fixtures' /proc links point nowhere on this machine.
present() { while IFS= read -r -d '' f; do { [ -e "$f" ] || [ -L "$f" ]; } && printf '%s\0' "$f"; done; }
# The key: names, contents and link targets, not times or owners.
key=$(cd "$src" && list_files | sort -z | present |
      tar --null --no-recursion -T - --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - |
      sha256sum | cut -c1-16)

if [ -e "$out/key" ] && [ "$(cat "$out/key")" = "$key" ] && ls "$out"/turbosched_*.deb >/dev/null 2>&1; then
    ls "$out"/turbosched_*_*.deb | grep -v dbgsym | head -1
    exit 0
fi

# copy_tree DIR: the listed files, as they are in the work tree, into DIR.
copy_tree() {
    rm -rf "$1"
    mkdir "$1"
    (cd "$src" && list_files | present | tar --null --no-recursion -T - -cf -) | tar -xf - -C "$1"
}

rm -rf "$out"/turbosched_* "$out"/turbosched-dbgsym_* "$out/key" "$out/build.log"
copy_tree "$out/turbosched"

t0=$SECONDS
# Two jobs: the machine's CPUs are shared (MACHINE.md).
if ! (cd "$out/turbosched" && DEB_BUILD_OPTIONS="parallel=${TS_PKG_JOBS:-2}" dpkg-buildpackage -us -uc -b) \
        >"$out/build.log" 2>&1; then
    echo "dpkg-buildpackage -us -uc -b failed; the last lines of $out/build.log:" >&2
    tail -40 "$out/build.log" >&2
    exit 1
fi
# The source package too, for lintian: cheap (a tarball of the copy), and
# made from the tree before the binary build wrote into it.
copy_tree "$out/turbosched"
if ! (cd "$out" && dpkg-source -b turbosched) >>"$out/build.log" 2>&1; then
    echo "dpkg-source -b failed; the last lines of $out/build.log:" >&2
    tail -20 "$out/build.log" >&2
    exit 1
fi
rm -rf "$out/turbosched"
echo "package built in $((SECONDS - t0)) s" >>"$out/build.log"
echo "$key" >"$out/key"
ls "$out"/turbosched_*_*.deb | grep -v dbgsym | head -1
