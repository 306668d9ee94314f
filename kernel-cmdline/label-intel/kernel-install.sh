#!/bin/sh
# kernel-install and UKIs read the whole command line from /etc/kernel/cmdline: add
# the IOMMU on intel, the mode left to gpuvm.conf (the label) to it (once), then run kernel-install add or rebuild the UKI.
set -eu
f=${1:-/etc/kernel/cmdline}
params='intel_iommu=on iommu=pt'
[ -s "$f" ] || sed 's/BOOT_IMAGE=[^ ]* *//; s/initrd=[^ ]* *//g' /proc/cmdline >"$f"
# shellcheck disable=SC2086 # one word per parameter
for p in $params; do
	grep -qw -- "$p" "$f" || sed -i "1s|\$| $p|" "$f"
done
