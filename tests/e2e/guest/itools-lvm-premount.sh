#!/bin/sh
# Test-only initramfs-tools init-premount script of the LVM root cell (cells/itools-lvm.sh;
# tests/e2e/itools-lib.sh installs it as scripts/init-premount/e2e). It runs after gpuvm's
# own init-premount script (PREREQ), which found no config disk and left the GPUs held: the
# facts premount.* say so. Then it makes the root Ubuntu Server's way, on LVM: the blank
# disk /dev/vda becomes a physical volume of the volume group e2e, whose logical volume root
# gets the ext4 image /usr/lib/e2e/root.ext4 (the root file system, with gpuvm's config in
# its /etc/gpuvm/gpuvm.conf). initramfs-tools then mounts root=/dev/mapper/e2e-root, and
# gpuvm's init-bottom script is the one that reads the config from it, before switch_root.
# With e2e.lvm=late on the boot line the volume group is deactivated again and activated 3 s
# later, in the background: initramfs-tools waits for the root device, running the local-block
# scripts each second, and gpuvm's local-block script is the one that finds the config.
PREREQ="gpuvm"
prereqs() { echo "$PREREQ"; }
case ${1-} in
prereqs)
	prereqs
	exit 0
	;;
esac
# shellcheck source=tests/e2e/guest/dracut-facts.sh
. /usr/lib/e2e/dracut-facts.sh
dg_at premount
if [ -e /run/gpuvm/pending ]; then dg_fact premount.pending yes; else dg_fact premount.pending no; fi
if [ -e /run/gpuvm/root-pending ]; then dg_fact premount.root_pending yes; else dg_fact premount.root_pending no; fi
lvm pvcreate -q -y /dev/vda &&
	lvm vgcreate -q e2e /dev/vda &&
	lvm lvcreate -q -y -L 16M -n root e2e &&
	dd if=/usr/lib/e2e/root.ext4 of=/dev/mapper/e2e-root bs=1M conv=fsync 2>/dev/null
dg_kmsg "lvm root made, status $?"
if grep -q 'e2e\.lvm=late' /proc/cmdline; then
	lvm vgchange -q -an e2e
	dg_kmsg "lvm root deactivated, status $?: back in 3 s"
	(
		sleep 3
		lvm vgchange -q -ay e2e >/dev/null 2>&1
		dg_kmsg "lvm root activated, status $?"
	) &
fi
