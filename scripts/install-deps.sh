#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Install what turbosched needs to build and test on Debian 12.
# Idempotent and quiet: prints nothing and touches nothing when all is present.
set -eu

PACKAGES="
    cmake pkg-config gcc make
    libsystemd-dev libcgroup-dev libnl-3-dev libcpupower-dev libinih-dev
    libcmocka-dev libjson-c-dev
    clang libclang-rt-14-dev
    valgrind util-linux procps
"
# tests/format.sh checks every C file against .clang-format with the
# version Debian 12 ships (clang-format 14).
PACKAGES="$PACKAGES clang-format"
# The Debian package (debian/, `dpkg-buildpackage -us -uc -b`) and its
# check: package-lintian builds it and runs lintian on it.
PACKAGES="$PACKAGES debhelper dpkg-dev fakeroot lintian"
# qemu-system-x86, debootstrap and e2fsprogs drive the end-to-end test under
# real systemd; cgroup-tools (cgrulesengd, the peer in the event benchmark)
# and gnuplot-nox (the simulator's plot) serve the benchmarks.
PACKAGES="$PACKAGES qemu-system-x86 debootstrap e2fsprogs systemd cgroup-tools gnuplot-nox"
# The behaviour benchmark (tools/bench/behaviour.sh) runs real programs
# unclassified: cyclictest (rt-tests), ping, stress-ng, xz; jq reads the
# daemon's replies; the housekeeping benchmark runs a python3 timer loop.
# No test needs them.
PACKAGES="$PACKAGES rt-tests iputils-ping stress-ng xz-utils jq python3"

# promtool checks the daemon's metrics exposition in the tests. Debian ships
# it only inside the prometheus package, which would also install and start a
# Prometheus server; only the promtool binary is taken from it.
PROMTOOL=/usr/local/bin/promtool

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && [ -x "$PROMTOOL" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing:$missing$([ -x "$PROMTOOL" ] || echo " $PROMTOOL") (run as root to install)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
if [ -n "$missing" ]; then
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
if [ ! -x "$PROMTOOL" ]; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    (cd "$tmp" && apt-get download -qq prometheus >/dev/null 2>&1)
    dpkg-deb --fsys-tarfile "$tmp"/prometheus_*.deb | tar -xO ./usr/bin/promtool > "$tmp/promtool"
    chmod 0755 "$tmp/promtool"
    "$tmp/promtool" --version >/dev/null 2>&1
    mv "$tmp/promtool" "$PROMTOOL"
fi
