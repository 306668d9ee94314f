#!/bin/sh
# In the guest, after gpuvm: what gpuvm left behind, for the gpuvm-* scenarios. Runs as an
# /init.d hook (--add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh") or on the root
# disk as /etc/e2e-check.sh (guest/root-init.sh runs it after switch_root).
#
# It first lowers the console log level (dmesg -n 1), so that kernel messages cannot break
# into the lines it prints; the kernel log lines it wants come out as "@dmesg" lines.
# Kernel command line:
#   e2e.load=MOD[,MOD…]   modprobe these after the first report (a GPU's own driver arriving
#                         after gpuvm: the race), then report the drivers again
# Facts ("@e2e KEY=VALUE"), for each stand-in present (vga = 1234:1111, virtio = 1af4:1050):
#   NAME.device NAME.driver NAME.override NAME.group NAME.vfio_node (yes|no)
#   NAME.vfio_dev (the names in its vfio-dev directory, "none" without one: 5.10)
#   NAME.cdev (/dev/vfio/devices/vfioN when vfio-dev/vfioN has a dev attribute and the node
#   is there; "missing:PATH" when only the attribute is; "none")
#   NAME.driver_after_load NAME.override_after_load   (with e2e.load=)
# and: uptime (/proc/uptime when the check began), iommus, dev_vfio, vfio_class (the names
# in /sys/class/vfio: the groups' char devices), modules (sorted names
# from /proc/modules), type1 (yes|no: /sys/module/vfio_iommu_type1), vfio_files (the vfio
# module files in /lib/modules), state (yes|no: /run/gpuvm/state.json), load_failed (a module
# of e2e.load= that did not load), run_gpuvm (the names in /run/gpuvm: state.json, metrics and
# "pending" while gpuvm waits for its config's disk), gpuvm_mounts (mount points under
# /run/gpuvm: none, once gpuvm is done).
# The state file itself is printed between "@state-begin" and "@state-end", each of its
# lines as "@state LINE" (lib.sh's e2e_state reads it back), and /run/gpuvm/boot.json (what
# this boot's initramfs did) the same way between "@boot-begin" and "@boot-end" (e2e_bootjson).
# Then "@dmesg" lines from gpuvm,
# vfio, the stand-ins' drivers and failed probes; last "@e2e end".

dmesg -n 1 2>/dev/null
fact() { echo "@e2e $1=$2"; }
# When the check began: where the initramfs phase ends for lib.sh's apply share.
fact uptime "$(cut -d' ' -f1 /proc/uptime)"
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

# vfio_dev NAME DIR: the vfio device of a stand-in (6.1 on) and its cdev, if any.
vfio_dev() {
	if [ ! -d "$2/vfio-dev" ]; then
		fact "$1.vfio_dev" none
		fact "$1.cdev" none
		return
	fi
	fact "$1.vfio_dev" "$(names "$2/vfio-dev" | sed 's/ $//')"
	cdev=none
	for v in "$2"/vfio-dev/vfio*; do
		[ -e "$v/dev" ] || continue
		cdev=/dev/vfio/devices/${v##*/}
		[ -c "$cdev" ] || cdev=missing:$cdev
	done
	fact "$1.cdev" "$cdev"
}

report() { # report SUFFIX
	for s in vga virtio; do
		d=$(standin $s) || continue
		if [ -z "$1" ]; then
			fact "$s.device" "${d##*/}"
			if [ -e "$d/iommu_group" ]; then
				g=$(basename "$(readlink "$d/iommu_group")")
				fact "$s.group" "$g"
				if [ -c "/dev/vfio/$g" ]; then fact "$s.vfio_node" yes; else fact "$s.vfio_node" no; fi
			else
				fact "$s.group" none
				fact "$s.vfio_node" no
			fi
			vfio_dev "$s" "$d"
		fi
		fact "$s.override$1" "$(cat "$d/driver_override")"
		fact "$s.driver$1" "$(driver "$d")"
	done
}

fact iommus "$(names /sys/class/iommu)"
report ''
fact dev_vfio "$(names /dev/vfio)"
fact vfio_class "$(names /sys/class/vfio)"
if [ -d /sys/module/vfio_iommu_type1 ]; then fact type1 yes; else fact type1 no; fi
fact vfio_files "$(find /lib/modules -name 'vfio*.ko*' 2>/dev/null | sed 's|.*/||' | sort | tr '\n' ' ')"
fact run_gpuvm "$(names /run/gpuvm)"
fact gpuvm_mounts "$(awk '$2 ~ "^/run/gpuvm" { print $2 }' /proc/mounts | tr '\n' ' ')"
if [ -f /run/gpuvm/state.json ]; then
	fact state yes
	echo "@state-begin"
	sed 's/^/@state /' /run/gpuvm/state.json
	echo # the file may not end with a newline
	echo "@state-end"
else
	fact state no
fi
if [ -f /run/gpuvm/boot.json ]; then
	echo "@boot-begin"
	sed 's/^/@boot /' /run/gpuvm/boot.json
	echo
	echo "@boot-end"
fi
if [ -n "$load" ]; then
	for m in $load; do
		modprobe "$m" || fact load_failed "$m"
	done
	report _after_load
fi
fact modules "$(cut -d' ' -f1 /proc/modules | sort | tr '\n' ' ')"
dmesg | grep -E 'gpuvm|vfio|probe of|bochs|virtio' | sed 's/^/@dmesg /'
echo "@e2e end"
