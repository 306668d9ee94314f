#!/bin/sh
# dracut test module, the end of a test boot (run with sh; in dracut's shell init by a
# pre-mount hook, in a systemd initramfs by e2e-check.service after the udev coldplug):
# waits for udev to settle, then prints everything the scenario checks and powers off.
# Facts ("@e2e KEY=VALUE"): those the other hooks recorded (pre_udev.*, pre_trigger.*,
# break.*, each with .udevd .vga.driver .vga.override .state .bochs), end.* the same now,
# and: init (systemd|shell), iommus, vga.device vga.driver vga.override vga.group
# vga.vfio_node, dev_vfio, bochs (yes|no: /sys/module/bochs), modules, state (yes|no),
# gpuvm_hook (the pre-udev hooks in the image), and in a systemd initramfs the monotonic
# times (µs) pre_udev.done_us (dracut-pre-udev.service active) and udevd.start_us
# (systemd-udevd.service left inactive). The state file between "@state-begin" and
# "@state-end" as "@state LINE", /run/gpuvm/boot.json between "@boot-begin" and "@boot-end"
# as "@boot LINE"; kernel log lines as "@dmesg LINE"; then "@e2e end".
# shellcheck source=tests/e2e/guest/dracut-facts.sh
. /usr/lib/e2e/dracut-facts.sh
udevadm settle --timeout=60 >/dev/null 2>&1
dg_at end
dmesg -n 1 2>/dev/null # nothing may break into the lines below
names() { for f in "$1"/*; do [ -e "$f" ] && printf '%s ' "${f##*/}"; done; }
fact() { echo "@e2e $1=$2"; }

echo
cat /run/e2e/facts 2>/dev/null
if [ -d /run/systemd/system ]; then fact init systemd; else fact init shell; fi
fact iommus "$(names /sys/class/iommu)"
if d=$(dg_standin); then
	fact vga.device "${d##*/}"
	fact vga.driver "$(dg_driver "$d")"
	fact vga.override "$(cat "$d/driver_override")"
	if [ -e "$d/iommu_group" ]; then
		g=$(basename "$(readlink "$d/iommu_group")")
		fact vga.group "$g"
		if [ -c "/dev/vfio/$g" ]; then fact vga.vfio_node yes; else fact vga.vfio_node no; fi
	else
		fact vga.group none
		fact vga.vfio_node no
	fi
fi
fact dev_vfio "$(names /dev/vfio)"
if [ -d /sys/module/bochs ]; then fact bochs yes; else fact bochs no; fi
fact modules "$(cut -d' ' -f1 /proc/modules | sort | tr '\n' ' ')"
# dracut 108 and later keep the hooks in /var/lib/dracut/hooks, before in /lib/dracut/hooks.
for h in /var/lib/dracut/hooks /lib/dracut/hooks; do
	[ -d "$h/pre-udev" ] && break
done
fact gpuvm_hook "$(names "$h/pre-udev")"
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
if [ -d /run/systemd/system ]; then
	fact pre_udev.done_us "$(systemctl show -P ActiveEnterTimestampMonotonic dracut-pre-udev.service)"
	fact udevd.start_us "$(systemctl show -P InactiveExitTimestampMonotonic systemd-udevd.service)"
	fact failed_units "$(systemctl list-units --failed --plain --no-legend | cut -d' ' -f1 | tr '\n' ' ')"
fi
dmesg | grep -E 'gpuvm|vfio|bochs|e2e:|udev|dracut' | sed 's/^/@dmesg /'
echo "@e2e end"
echo o >/proc/sysrq-trigger
sleep 60
