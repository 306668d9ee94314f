#!/bin/sh
# In the guest, as an /init.d hook (gpuvm-live): after the boot (container mode, the
# VGA stand-in 1234:1111 on its own driver, bochs, loaded by /etc/modules-load), the host config
# changes and `gpuvm apply --live` switches the running host, four times:
#   1  vm-passthrough while a process holds /dev/dri/card0 open: refused (exit 7), nothing
#      changed (driver and driver_override as they were)
#   2  vm-passthrough, free: vfio-pci, verified, /dev/vfio/GROUP there
#   3  container while a process holds /dev/vfio/GROUP open (a VM): refused, nothing changed
#   4  container, free: off vfio-pci, the override cleared, bochs takes it again
# Facts, N = 1..4: liveN.rc (gpuvm's exit status), liveN.driver, liveN.override (after it),
# liveN.error (gpuvm's first error line), liveN.result and liveN.mode (the state file's);
# holder1, holder3 (the holding process's pid); before.driver; group; the gpuvm: kernel
# log lines as @dmesg lines.
dmesg -n 1 2>/dev/null
fact() { echo "@e2e $1=$2"; }
dev=''
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor"):$(cat "$d/device")" = 0x1234:0x1111 ] && dev=$d && break
done
[ -n "$dev" ] || { fact before.driver no-stand-in; echo "@e2e end"; exit 1; }
driver() { if [ -e "$dev/driver" ]; then basename "$(readlink "$dev/driver")"; else echo none; fi; }
state() { sed -n "s/^  \"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}\$/\1/p" /run/gpuvm/state.json; }
conf=/run/gpuvm-live.conf

# live N MODE: the host config says MODE, then apply --live.
live() {
	printf 'mode=%s\nids=1234:1111\n' "$2" >"$conf"
	/sbin/gpuvm --config "$conf" apply --live 2>/run/live.err
	fact "live$1.rc" $?
	fact "live$1.driver" "$(driver)"
	fact "live$1.override" "$(cat "$dev/driver_override")"
	fact "live$1.error" "$(grep -m 1 'gpuvm: error: ' /run/live.err)"
	fact "live$1.result" "$(state result)"
	fact "live$1.mode" "$(state mode)"
}

fact before.driver "$(driver)"
group=$(basename "$(readlink "$dev/iommu_group")")
fact group "$group"

# shellcheck disable=SC2217 # the descriptor is the point: sleep holds it open
sleep 600 </dev/dri/card0 &
holder=$!
fact holder1 "$holder"
sleep 1 # the shell has opened it before sleep runs
live 1 vm-passthrough
kill "$holder"
wait "$holder" 2>/dev/null

live 2 vm-passthrough
fact live2.group_node "$([ -c "/dev/vfio/$group" ] && echo yes || echo no)"

# shellcheck disable=SC2217
sleep 600 <"/dev/vfio/$group" &
holder=$!
fact holder3 "$holder"
sleep 1
live 3 container
kill "$holder"
wait "$holder" 2>/dev/null

live 4 container

dmesg | grep 'gpuvm: ' | sed 's/^/@dmesg /'
echo "@e2e end"
