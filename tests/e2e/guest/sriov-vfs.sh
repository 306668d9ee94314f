#!/bin/sh
# In the guest, before the dump (an /init.d hook: --add
# "$E2E_GUEST/sriov-vfs.sh:/init.d/44-sriov-vfs.sh"): every function with SR-IOV capacity
# whose driver can make VFs (QEMU's nvme with sriov_max_vfs, the nvme driver loaded) gets one
# VF, not probed by any driver (sriov_drivers_autoprobe=0), so that the dump has a real
# kernel's physfn and virtfn links. Facts: vf.pf (the physical function), vf.addr (its VF),
# vf.rc (0: sriov_numvfs took the write, 1: it refused).
fact() { echo "@e2e $1=$2"; }
for d in /sys/bus/pci/devices/*; do
	[ -r "$d/sriov_totalvfs" ] || continue
	read -r total <"$d/sriov_totalvfs" || continue
	[ "$total" -gt 0 ] || continue
	echo 0 >"$d/sriov_drivers_autoprobe"
	rc=0
	printf '1\n' >"$d/sriov_numvfs" 2>/dev/null || rc=1
	fact vf.rc "$rc"
	fact vf.pf "${d##*/}"
	vf=$(readlink "$d/virtfn0") && fact vf.addr "${vf##*/}"
	break
done
