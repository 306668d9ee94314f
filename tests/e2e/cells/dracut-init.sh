# shellcheck shell=sh
# The dracut module under each of dracut's inits ($E2E_ARGS: shell|systemd;
# tests/e2e/matrix), the host's dracut, Intel IOMMU, the VGA stand-in (1234:1111) with its own
# driver, bochs, in the image; rd.gpuvm.mode=vm-passthrough rd.gpuvm.ids=1234:1111.
# shell: modules base and gpuvm, no systemd; udev loads bochs when the coldplug shows it the
# device. systemd: dracut-systemd (systemd, systemd-initrd, udev-rules), with
# systemd.log_target=kmsg so that systemd's unit messages land in the kernel log, in one order
# with gpuvm's.
#  - gpuvm's pre-udev hook ran before udevd started: in the kernel log gpuvm's summary comes
#    before the test hook's "e2e: pre_udev: udevd=none" (pre-udev 99, after gpuvm's 00), and
#    that before udevd's start (shell: "Starting systemd-udevd version …"; systemd:
#    "Finished dracut-pre-udev.service", "Starting systemd-udevd.service", and systemd's own
#    timestamps agree) and the pre-trigger hook's "e2e: pre_trigger: udevd=PID"; the
#    stand-in was on vfio-pci before udevd existed.
#  - at the end (after the coldplug, udev settled) bochs is loaded and the stand-in is still
#    on vfio-pci, /dev/vfio/GROUP exists, the state file says ok.
#  - rd.break=pre-udev: dracut stops *before* the pre-udev hooks (so at that shell gpuvm has
#    not run yet: no driver, no override, no state file, no udevd either); when the shell
#    exits the hooks run, gpuvm first, and the boot ends as above.
#  - shell: rd.break=pre-trigger is the shell to look at what gpuvm did before udev's
#    coldplug: the stand-in on vfio-pci, udevd running, bochs not loaded yet.
# shellcheck source=tests/e2e/dracut-lib.sh
. "$E2E_ROOT/tests/e2e/dracut-lib.sh"
# shellcheck disable=SC2086 # the cell's words
set -- $E2E_ARGS
init=${1-}
dracut_need
case $init in
shell) mods="base gpuvm e2e" extra='' ;;
systemd)
	[ -x /usr/lib/systemd/systemd ] || [ -x /lib/systemd/systemd ] ||
		e2e_skip "no systemd on this host (dracut copies the host's systemd into the image)"
	mods="dracut-systemd base gpuvm e2e" extra=" systemd.log_target=kmsg"
	;;
*) e2e_fail "dracut-init: no such init '$init' (tests/e2e/matrix)" || exit 1 ;;
esac
dracut_image -m "$mods" --add-drivers bochs
args="rd.gpuvm.mode=vm-passthrough rd.gpuvm.ids=1234:1111$extra"

# check_end: the facts of the end of a boot (every boot ends the same).
check_end() {
	e2e_guest_done
	e2e_fact_is init "$init"
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
	dracut_order "$init"
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
[ "$init" = shell ] || exit 0 # the pre-trigger break: the shell init's

# rd.break=pre-trigger is the shell that comes after gpuvm: udevd runs, the coldplug has not
# come yet, the stand-in is on vfio-pci and bochs is not loaded.
e2e_boot --log break-trigger --iommu intel --gpu vga --append "$args rd.break=pre-trigger"
check_end
e2e_expect 'Break before pre-trigger' 'dracut did not break at pre-trigger'
e2e_fact_match break.pre-trigger.udevd '^[0-9]+$'
e2e_fact_is break.pre-trigger.vga.driver vfio-pci
e2e_fact_is break.pre-trigger.vga.override vfio-pci
e2e_fact_is break.pre-trigger.state yes
e2e_fact_is break.pre-trigger.bochs no
dracut_before '^\[ *[0-9.]+\] gpuvm: vm-passthrough: ' 'Break before pre-trigger' 'gpuvm, then the break'
