# shellcheck shell=sh
# Issue 19: the config-disk wait of the dracut module (dracut-config-disk.sh) with another
# Debian release's own dracut, kernel and systemd, one cell a release and an init
# ($E2E_ARGS: trixie|sid shell|systemd; tests/e2e/matrix). The image is built inside the
# cached root build/roots/RELEASE by its dracut (distro-lib.sh): trixie has dracut 106,
# kernel 6.12, systemd 257; sid the newest of each (dracut 112, kernel 7.x, systemd 262 when
# this was written). No config in the image; the config disk is there (ext4 labelled
# gpuvm-conf: mode=vm-passthrough, ids=1234:1111), rd.gpuvm.config=LABEL=gpuvm-conf.
#  - pre-udev: gpuvm ran before udevd and held the stand-in (gpuvm-hold, no driver, a state
#    file; "e2e: pre_udev: udevd=none"), exited 5, and its hook queued gpuvm-resume.sh in
#    dracut's initqueue. Then udevd (shell: its "Starting systemd-udevd version", shown with
#    udev.log_level=info on these releases; systemd: "Finished dracut-pre-udev.service" before
#    "Starting systemd-udevd.service"), then pre-trigger.
#  - the initqueue (the shell init's main loop; dracut-initqueue.service in a systemd
#    initramfs) runs the job until the coldplug has brought virtio_blk and the disk: gpuvm
#    reads the config and binds the stand-in to vfio-pci; bochs, loaded by the coldplug,
#    does not take it. The state file says ok, the config from the disk.
#  - systemd: dracut-pre-udev.service was active before systemd-udevd.service started, and no
#    unit failed (dracut-initqueue.service ran, it was not skipped).
#  - nothing wrote under the read-only /usr of systemd 257 and later ("Read-only file
#    system"), and /sbin/initqueue was there (dracut 108 and later ship it as a module).
# shellcheck disable=SC2086 # the cell's words
set -- $E2E_ARGS
release=${1-} init=${2-}
case $init in
shell) mods="base gpuvm e2e" extra='' ;;
systemd) mods="dracut-systemd base gpuvm e2e" extra="systemd.log_target=kmsg" ;;
*) e2e_fail "dracut-release: no such init '$init' (tests/e2e/matrix)" || exit 1 ;;
esac
# shellcheck source=tests/e2e/dracut-lib.sh
. "$E2E_ROOT/tests/e2e/dracut-lib.sh"
# shellcheck source=tests/e2e/distro-lib.sh
. "$E2E_ROOT/tests/e2e/distro-lib.sh"
# shellcheck source=tests/e2e/confdisk-lib.sh
. "$E2E_ROOT/tests/e2e/confdisk-lib.sh"
distro_need "$release"
# A newer kernel and systemd want more than the 256 MiB of the other scenarios.
# shellcheck disable=SC2034 # read by lib.sh's e2e_boot
E2E_MEM=${E2E_DISTRO_MEM:-512}
args="rd.gpuvm.config=LABEL=gpuvm-conf rd.gpuvm.ids=1234:1111 udev.log_level=info $extra"

confdisk_conf 'mode=vm-passthrough\nids=1234:1111\n'
confdisk_ext4 "$E2E_OUT/$E2E_NAME.conf.disk" gpuvm-conf "$CONFDISK_CONF"
confdisk_args "$E2E_OUT/$E2E_NAME.conf.disk"
dracut_image -m "$mods" --add-drivers "bochs virtio_pci virtio_blk"
e2e_boot --iommu intel --gpu vga --append "$args" -- $CONFDISK_ARGS
e2e_guest_done
e2e_fact_is init "$init"
e2e_fact_is pre_udev.udevd none
e2e_fact_is pre_udev.state yes
e2e_fact_match pre_trigger.udevd '^[0-9]+$'
dracut_held_then_read
dracut_before '^\[ *[0-9.]+\] gpuvm: config=LABEL=gpuvm-conf: not there yet' \
	'^\[ *[0-9.]+\] e2e: pre_udev: udevd=none vga\.driver=none vga\.override=gpuvm-hold ' \
	'gpuvm before the end of pre-udev'
dracut_order "$init"
if [ "$init" = systemd ]; then
	e2e_expect '^\[ *[0-9.]+\] systemd\[1\]: Finished dracut-initqueue\.service' \
		'dracut-initqueue.service did not run'
	dracut_before '^\[ *[0-9.]+\] systemd\[1\]: Starting dracut-initqueue\.service' \
		'^\[ *[0-9.]+\] gpuvm: config: LABEL=gpuvm-conf:' 'the decision inside dracut-initqueue'
fi
e2e_reject 'Read-only file system' 'a write under the read-only /usr'
e2e_reject 'initqueue: not found' 'no /sbin/initqueue in the image'
