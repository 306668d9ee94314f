#!/bin/sh
# kernel-install and UKIs read the whole command line from /etc/kernel/cmdline: add
# gpuvm vm-passthrough on amd to it (once), then run kernel-install add or rebuild the UKI.
set -eu
f=${1:-/etc/kernel/cmdline}
[ -s "$f" ] || sed 's/BOOT_IMAGE=[^ ]* *//; s/initrd=[^ ]* *//g' /proc/cmdline >"$f"
for p in iommu=pt gpuvm.mode=vm-passthrough; do
	grep -qw -- "$p" "$f" || sed -i "1s|\$| $p|" "$f"
done
