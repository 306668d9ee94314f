# shellcheck shell=sh
# A systemd initramfs (dracut-systemd, which brings systemd, systemd-initrd
# and udev-rules; base; gpuvm), Intel IOMMU, the VGA stand-in with bochs in the image,
# rd.gpuvm.mode=vm-passthrough rd.gpuvm.ids=1234:1111, and systemd.log_target=kmsg so that
# systemd's own unit messages land in the kernel log, in one order with gpuvm's.
#  - dracut-pre-udev.service ran gpuvm's hook before systemd-udevd.service started: in the
#    kernel log gpuvm's summary, then "e2e: pre_udev: udevd=none" (the test's pre-udev 99),
#    "Finished dracut-pre-udev.service", "Starting systemd-udevd.service"; systemd's own
#    timestamps agree (dracut-pre-udev active before systemd-udevd left inactive).
#  - after the coldplug bochs is loaded and the stand-in is still on vfio-pci.
#  - rd.break=pre-udev: dracut-pre-udev.service breaks before the pre-udev hooks (gpuvm has not
#    run at that shell); when the shell exits the hooks run and the boot ends as above.
# shellcheck source=tests/e2e/dracut-lib.sh
. "$E2E_ROOT/tests/e2e/dracut-lib.sh"
dracut_need
[ -x /usr/lib/systemd/systemd ] || [ -x /lib/systemd/systemd ] ||
	e2e_skip "no systemd on this host (dracut copies the host's systemd into the image)"
dracut_image -m "dracut-systemd base gpuvm e2e" --add-drivers bochs
args="rd.gpuvm.mode=vm-passthrough rd.gpuvm.ids=1234:1111 systemd.log_target=kmsg"

check_end() {
	e2e_guest_done
	e2e_fact_is init systemd
	e2e_fact_match iommus '^dmar0 $'
	e2e_fact_match gpuvm_hook '^00-gpuvm-pre-udev\.sh '
	e2e_fact_is pre_udev.udevd none
	e2e_fact_is pre_udev.vga.driver vfio-pci
	e2e_fact_is pre_udev.vga.override vfio-pci
	e2e_fact_is pre_udev.state yes
	e2e_fact_match pre_trigger.udevd '^[0-9]+$'
	dracut_bound
	e2e_state_is .mode_source cmdline
	e2e_state_is "$E2E_JQ_VGA | .driver_after" vfio-pci
	e2e_state_is "$E2E_JQ_VGA | .verified" true
	dracut_before '^\[ *[0-9.]+\] gpuvm: vm-passthrough: 1 GPU .* on vfio-pci, 0 failed' \
		'^\[ *[0-9.]+\] e2e: pre_udev: udevd=none vga\.driver=vfio-pci ' 'gpuvm before the end of pre-udev'
	dracut_order systemd
}

e2e_boot --iommu intel --gpu vga --append "$args"
check_end

e2e_boot --log break --iommu intel --gpu vga --append "$args rd.break=pre-udev"
check_end
e2e_expect 'Break before pre-udev' 'dracut did not break at pre-udev'
e2e_fact_is break.pre-udev.udevd none
e2e_fact_is break.pre-udev.vga.driver none
e2e_fact_is break.pre-udev.vga.override '(null)'
e2e_fact_is break.pre-udev.state no
dracut_before 'Break before pre-udev' '^\[ *[0-9.]+\] e2e: break\.pre-udev: udevd=none' 'the break, then its shell'
dracut_before '^\[ *[0-9.]+\] e2e: break\.pre-udev: the shell exits' '^\[ *[0-9.]+\] gpuvm: ' \
	'gpuvm after the shell exited'
