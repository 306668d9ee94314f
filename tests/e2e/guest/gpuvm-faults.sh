#!/bin/sh
# In the guest, as an /init.d hook before guest/gpuvm-check.sh (gpuvm-faults): gpuvm run again
# with parts of the initramfs gone, after its boot-time run bound the VGA stand-in
# (1234:1111). Each run first gives the stand-in back (vfio-pci unbinds it, the override is
# cleared), so that gpuvm has a bind to do.
#   nokmsg   /dev/kmsg removed: gpuvm logs to stderr only; facts nokmsg.rc, nokmsg.summary
#            (gpuvm's summary line on stderr), nokmsg.driver
#   nomods   /lib/modules moved away (vfio-pci is loaded already): the module directory
#            cannot be opened, the driver is in the kernel, the bind goes on; facts
#            nomods.rc, nomods.driver, nomods.warning (gpuvm's line about the directory)
#   rorun    /run remounted read-only: the state file cannot be written, the bind stands;
#            facts rorun.rc, rorun.driver, rorun.error
dmesg -n 1 2>/dev/null
fact() { echo "@e2e $1=$2"; }
dev=''
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor"):$(cat "$d/device")" = 0x1234:0x1111 ] && dev=$d && break
done
[ -n "$dev" ] || { fact faults no-stand-in; exit 1; }
driver() { if [ -e "$dev/driver" ]; then basename "$(readlink "$dev/driver")"; else echo none; fi; }
giveback() {
	[ -e "$dev/driver" ] && echo "${dev##*/}" >"$dev/driver/unbind"
	echo >"$dev/driver_override"
}

giveback
mv /dev/kmsg /dev/kmsg.gone
/sbin/gpuvm apply 2>/tmp/nokmsg.err
fact nokmsg.rc $?
mv /dev/kmsg.gone /dev/kmsg
fact nokmsg.summary "$(grep '^gpuvm: vm-passthrough: ' /tmp/nokmsg.err)"
fact nokmsg.driver "$(driver)"

giveback
mv /lib/modules /lib/modules.gone
/sbin/gpuvm apply 2>/tmp/nomods.err
fact nomods.rc $?
mv /lib/modules.gone /lib/modules
fact nomods.driver "$(driver)"
fact nomods.warning "$(grep 'module directory' /tmp/nomods.err | head -n 1)"

giveback
mount -o remount,ro /run
/sbin/gpuvm apply 2>/tmp/rorun.err
fact rorun.rc $?
mount -o remount,rw /run
fact rorun.driver "$(driver)"
fact rorun.error "$(grep 'cannot write /run/gpuvm/state.json' /tmp/rorun.err)"
exit 0
