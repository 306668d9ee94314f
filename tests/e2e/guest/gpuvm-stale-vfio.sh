#!/bin/sh
# In the guest, as an /init.d hook that runs before guest/gpuvm-check.sh (gpuvm-container):
# after gpuvm's boot-time run, vfio-pci takes the VGA stand-in (1234:1111, found by ID) the way
# a stale VM configuration would, then gpuvm runs again: the state gpuvm finds is the one it
# would find at boot on a host where vfio-pci claimed the GPU before gpuvm's turn (vfio-pci
# built in, or loaded earlier in the initramfs, or by the GPU Operator's VFIO manager).
# Kernel command line: e2e.stale=
#   ids       modprobe vfio-pci, and nothing else: busybox modprobe adds the module's options
#             from the kernel command line (vfio_pci.ids=1234:1111), vfio-pci registers that
#             dynamic ID and claims the stand-in, as a built-in vfio-pci would at boot
#   override  modprobe vfio-pci, driver_override=vfio-pci, drivers_probe: the VFIO manager's
#             way (and gpuvm's own in vm-passthrough)
# Facts: stale.driver, stale.override (after vfio-pci took it); rerun_rc (the exit status of
# the second `gpuvm apply`, whose state file and kernel log lines replace the first's),
# rerun.driver, rerun.override.
dmesg -n 1 2>/dev/null
fact() { echo "@e2e $1=$2"; }
how=''
read -r cmdline </proc/cmdline
for a in $cmdline; do
	case $a in e2e.stale=*) how=${a#*=} ;; esac
done
dev=''
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor"):$(cat "$d/device")" = 0x1234:0x1111 ] && dev=$d && break
done
[ -n "$dev" ] || { fact stale.driver no-stand-in; exit 1; }
driver() { if [ -e "$dev/driver" ]; then basename "$(readlink "$dev/driver")"; else echo none; fi; }

modprobe vfio-pci || fact stale.modprobe failed
case $how in
ids) ;;
override)
	echo vfio-pci >"$dev/driver_override"
	echo "${dev##*/}" >/sys/bus/pci/drivers_probe
	;;
*) fact stale.how "unknown: e2e.stale=$how" ;;
esac
fact stale.driver "$(driver)"
fact stale.override "$(cat "$dev/driver_override")"

/sbin/gpuvm apply
fact rerun_rc $?
fact rerun.driver "$(driver)"
fact rerun.override "$(cat "$dev/driver_override")"
