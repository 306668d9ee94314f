#!/bin/sh
# In the guest, after gpuvm (an /init.d hook, or /etc/e2e-check.sh on the root disk, which
# guest/root-init.sh runs): reports the stand-in GPUs and what gpuvm left behind. With
# e2e.load=MOD[,MOD…] on the kernel command line it then loads those modules (a GPU's own
# driver arriving after gpuvm: the race) and reports the drivers again.
# Facts, for each stand-in present (vga = 1234:1111, virtio = 1af4:1050):
#   NAME.device NAME.driver NAME.override NAME.group NAME.vfio_node (yes|no)
#   NAME.driver_after_load (with e2e.load=)
# and: iommus, dev_vfio, modules, state (yes|no: /run/gpuvm/state.json), state_result,
# state_mode; "@dmesg" lines from gpuvm and vfio; last "@e2e end".

fact() { echo "@e2e $1=$2"; }
names() { for f in "$1"/*; do [ -e "$f" ] && printf '%s ' "${f##*/}"; done; }
load=''
read -r cmdline </proc/cmdline
for a in $cmdline; do
	case $a in e2e.load=*) load=$(echo "${a#*=}" | tr ',' ' ') ;; esac
done

# standin NAME: the sysfs directory of that stand-in, by ID (never by address).
standin() {
	case $1 in vga) want=0x1234:0x1111 ;; virtio) want=0x1af4:0x1050 ;; esac
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor"):$(cat "$d/device")" = "$want" ] && echo "$d" && return 0
	done
	return 1
}
driver() { if [ -e "$1/driver" ]; then basename "$(readlink "$1/driver")"; else echo none; fi; }

report() { # report SUFFIX
	for s in vga virtio; do
		d=$(standin $s) || continue
		if [ -z "$1" ]; then
			fact "$s.device" "${d##*/}"
			fact "$s.override" "$(cat "$d/driver_override")"
			if [ -e "$d/iommu_group" ]; then
				g=$(basename "$(readlink "$d/iommu_group")")
				fact "$s.group" "$g"
				if [ -c "/dev/vfio/$g" ]; then fact "$s.vfio_node" yes; else fact "$s.vfio_node" no; fi
			else
				fact "$s.group" none
				fact "$s.vfio_node" no
			fi
		fi
		fact "$s.driver$1" "$(driver "$d")"
	done
}

fact iommus "$(names /sys/class/iommu)"
report ''
fact dev_vfio "$(names /dev/vfio)"
if [ -f /run/gpuvm/state.json ]; then
	fact state yes
	# The first "result" and "mode" with a string value are the top-level ones.
	fact state_result "$(sed -n 's/.*"result": *"\([^"]*\)".*/\1/p' /run/gpuvm/state.json | head -n 1)"
	fact state_mode "$(sed -n 's/.*"mode": *"\([^"]*\)".*/\1/p' /run/gpuvm/state.json | head -n 1)"
else
	fact state no
fi
if [ -n "$load" ]; then
	for m in $load; do
		modprobe "$m" || echo "@e2e load_failed=$m"
	done
	report _after_load
fi
fact modules "$(cut -d' ' -f1 /proc/modules | sort | tr '\n' ' ')"
dmesg | grep -E 'gpuvm|vfio|probe of' | sed 's/^/@dmesg /'
echo "@e2e end"
