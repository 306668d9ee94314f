#!/bin/sh
# In the guest, as an /init.d hook: bind the stand-in GPU to vfio-pci by hand, the way gpuvm
# does (driver_override, unbind, drivers_probe, read the driver link back), then load the
# stand-in's own driver and see whether it takes the device. Reports "@e2e KEY=VALUE" facts
# and the relevant kernel log as "@dmesg" lines, and ends with "@e2e end".
# Kernel command line: e2e.id=VVVV:DDDD (default 1234:1111, the VGA stand-in),
# e2e.driver=MODULE (its own driver, default bochs).

fact() { echo "@e2e $1=$2"; }
id=1234:1111 own=bochs
read -r cmdline </proc/cmdline
for a in $cmdline; do
	case $a in
	e2e.id=*) id=${a#*=} ;;
	e2e.driver=*) own=${a#*=} ;;
	esac
done

# The device by vendor:device, never by address (the AMD IOMMU moves devices).
dev=''
for d in /sys/bus/pci/devices/*; do
	if [ "$(cat "$d/vendor")" = "0x${id%:*}" ] && [ "$(cat "$d/device")" = "0x${id#*:}" ]; then
		dev=${d##*/}
		break
	fi
done
fact device "${dev:-none}"
if [ -z "$dev" ]; then
	echo "@e2e end"
	exit 1
fi
sys=/sys/bus/pci/devices/$dev
driver() { if [ -e "$sys/driver" ]; then basename "$(readlink "$sys/driver")"; else echo none; fi; }
mods() { cut -d' ' -f1 /proc/modules | sort | tr '\n' ' '; }
names() { for f in "$1"/*; do [ -e "$f" ] && printf '%s ' "${f##*/}"; done; }
wr() { echo "$2" >"$1"; }

fact iommus "$(names /sys/class/iommu)"
fact groups "$(names /sys/kernel/iommu_groups)"
if [ -e "$sys/iommu_group" ]; then
	group=$(basename "$(readlink "$sys/iommu_group")")
	fact group "$group"
	fact group_devices "$(names "$sys/iommu_group/devices")"
else
	group=''
	fact group none
fi
fact driver_before "$(driver)"

modprobe vfio-pci
fact modprobe_vfio_pci $?
# busybox modprobe ignores softdeps: vfio's "post: vfio_iommu_type1" is not loaded with it.
fact modules_after_vfio_pci "$(mods)"
modprobe vfio_iommu_type1
fact modprobe_type1 $?

wr "$sys/driver_override" vfio-pci
fact override_write $?
if [ -e "$sys/driver" ]; then
	wr "$sys/driver/unbind" "$dev"
	fact unbind_write $?
fi
wr /sys/bus/pci/drivers_probe "$dev"
fact probe_write $?
fact driver "$(driver)"
fact dev_vfio "$(names /dev/vfio)"
if [ -n "$group" ] && [ -c "/dev/vfio/$group" ]; then
	fact group_node yes
else
	fact group_node no
fi

# The race: the device's own driver arrives after the binding.
modprobe "$own"
fact modprobe_own $?
fact driver_after_own "$(driver)"
fact override "$(cat "$sys/driver_override")"
fact modules "$(mods)"
dmesg | grep -E 'vfio|probe of|bochs|virtio|DMAR|AMD-Vi|iommu' | sed 's/^/@dmesg /'
echo "@e2e end"
