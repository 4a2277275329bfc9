#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Build (or reuse) the Debian 12 guest image for the end-to-end test.
#
#   build-image.sh CACHE_DIR MIRROR
#
# Prints the directory holding base.img, vmlinuz and initrd.img. The image is
# cached under CACHE_DIR keyed by a hash of the mirror, the package list and
# this script, so any change here builds a new one; older images are removed.
# Exit 77 when the image cannot be had (debootstrap or the mirror fails): the
# caller turns that into a skip. The image holds the runtime libraries of
# turboschedd but not turbosched itself: the package under test arrives on a
# separate payload disk at every run.
set -euo pipefail

cache_dir=$1
mirror=$2
suite=bookworm

# Runtime libraries of the package come from the image, so that `dpkg -i`
# checks the declared dependencies against real Debian packages.
packages="systemd,systemd-sysv,dbus,udev,kmod,procps,linux-image-cloud-amd64"
packages+=",libcgroup2,libnl-3-200,libinih1,libjson-c5,libcpupower1"

key=$( { echo "$mirror $suite $packages"; cat "$0"; } | sha256sum | cut -c1-16)
img_dir="$cache_dir/img-$key"

mkdir -p "$cache_dir"
exec 9>"$cache_dir/lock"
flock 9     # concurrent runs wait for one build instead of racing it

if [ -e "$img_dir/complete" ]; then
    echo "$img_dir"
    exit 0
fi

work=$(mktemp -d "$cache_dir/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
root="$work/root"
log="$cache_dir/debootstrap.log"

echo "build-image: debootstrap $suite from $mirror (log: $log)" >&2
if ! debootstrap --variant=minbase --include="$packages" "$suite" "$root" "$mirror" >"$log" 2>&1; then
    echo "debootstrap from $mirror failed, see $log" >&2
    exit 77
fi

# The initrd is needed: virtio block and PCI are modules in the cloud kernel.
cp -L "$root"/boot/vmlinuz-* "$work/vmlinuz"
cp -L "$root"/boot/initrd.img-* "$work/initrd.img"

echo "/dev/vda / ext4 rw,errors=remount-ro 0 1" >"$root/etc/fstab"
echo "ts-e2e" >"$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 ts-e2e\n' >"$root/etc/hosts"
# Keep /etc/machine-id as debootstrap filled it: an empty one means first boot.

# Nothing but the test may run on the serial lines or wake up at random.
for unit in serial-getty@ttyS0.service serial-getty@ttyS1.service getty@tty1.service \
            apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer \
            e2scrub_all.timer e2scrub_reap.service fstrim.timer systemd-timesyncd.service; do
    ln -sf /dev/null "$root/etc/systemd/system/$unit"
done

# The runner mounts the payload disk and hands over to the test script on it.
# SuccessAction/FailureAction only work in [Unit]; in [Service] they are ignored.
cat >"$root/etc/systemd/system/ts-e2e-runner.service" <<'EOF'
[Unit]
Description=turbosched end-to-end test runner
After=multi-user.target
SuccessAction=poweroff
FailureAction=poweroff

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/ts-e2e-run
StandardOutput=journal+console
StandardError=journal+console
# The host bounds the run (timeout around qemu); a limit here would only
# cut the verdict off.
TimeoutStartSec=infinity

[Install]
WantedBy=multi-user.target
EOF
ln -sf ../ts-e2e-runner.service "$root/etc/systemd/system/multi-user.target.wants/ts-e2e-runner.service"

mkdir -p "$root/usr/local/sbin" "$root/mnt/payload"
cat >"$root/usr/local/sbin/ts-e2e-run" <<'EOF'
#!/bin/sh
# ttyS1 carries only the verdict: raw, no echo, no kernel messages.
stty -F /dev/ttyS1 raw -echo
if ! mount -o ro LABEL=tspayload /mnt/payload; then
    echo "E2E-RESULT: payload disk not found" >/dev/ttyS1
    exit 1
fi
exec /mnt/payload/guest-test.sh /mnt/payload /dev/ttyS1
EOF
chmod 755 "$root/usr/local/sbin/ts-e2e-run"

# Trim what a test never reads (about 419 MB down to about 250 MB).
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* \
       "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/*
find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name 'locale.alias' -exec rm -rf {} +

truncate -s 1G "$work/base.img"
mkfs.ext4 -q -F -L tsroot -d "$root" "$work/base.img"
rm -rf "$root"

mkdir "$img_dir.new"
mv "$work/base.img" "$work/vmlinuz" "$work/initrd.img" "$img_dir.new/"
touch "$img_dir.new/complete"
rm -rf "$img_dir"
mv "$img_dir.new" "$img_dir"
# One image is enough; older keys only take disk space.
find "$cache_dir" -mindepth 1 -maxdepth 1 -name 'img-*' ! -name "img-$key" -exec rm -rf {} +
echo "build-image: ready in $img_dir" >&2
echo "$img_dir"
