#!/bin/sh
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
# qemu-system-x86, debootstrap and e2fsprogs drive the end-to-end test under
# real systemd; cgroup-tools (cgrulesengd, the peer in the event benchmark)
# and gnuplot-nox (the simulator's plot) serve the benchmarks.
PACKAGES="$PACKAGES qemu-system-x86 debootstrap e2fsprogs systemd cgroup-tools gnuplot-nox"

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages:$missing (run as root to install them)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
