# shellcheck shell=sh
# The distro matrix and the host config read from the root: the dracut module with a
# Debian release's own dracut, kernel and systemd, one cell a release and an init ($E2E_ARGS: bookworm|trixie|
# sid shell|systemd; tests/e2e/matrix). bookworm is the host's own dracut (059, systemd 252)
# with bookworm's kernel (build/kernel); trixie and sid build inside the cached root
# build/roots/RELEASE with its dracut (distro-lib.sh): trixie has dracut 106, kernel 6.12,
# systemd 257; sid the newest of each (dracut 112, kernel 7.x, systemd 262 when this was
# written). ONE image (no config in it: the module installs none), booted three times with
# root=/dev/vda, an ext4 root whose /etc/gpuvm/gpuvm.conf is edited on the disk between the
# boots (container, vm-passthrough, container: confdisk-lib.sh's rootconf_cycle, which also
# checks the image's sha256 unchanged); rd.gpuvm.ids=1234:1111 (the stand-in is not an
# NVIDIA GPU) and no mode on the boot line.
#  - pre-udev: gpuvm ran before udevd and held the stand-in (gpuvm-hold, no driver, a state
#    file; "e2e: pre_udev: udevd=none"); then udevd (shell: "Starting systemd-udevd version",
#    with udev.log_level=info; systemd: its unit lines), pre-trigger, the coldplug (bochs,
#    virtio_blk): bochs does not take the held stand-in.
#  - dracut mounts the root on /sysroot; gpuvm's pre-pivot hook (50) reads
#    /sysroot/etc/gpuvm/gpuvm.conf and decides; the test's pre-pivot hook (99) reports right
#    after it ("e2e: pre_pivot: the report", after gpuvm's "read from the root at /sysroot")
#    and powers off: the stand-in on bochs-drm / vfio-pci / bochs-drm, boot.json decided at
#    the root stage, host_config read, sysroot /sysroot.
#  - systemd: no unit failed; nothing wrote under the read-only /usr of systemd 257 and
#    later ("Read-only file system"), and /sbin/initqueue was there.
# shellcheck disable=SC2086 # the cell's words
set -- $E2E_ARGS
release=${1-} init=${2-}
case $init in
shell) mods="base rootfs-block gpuvm e2e" extra='' ;;
systemd) mods="dracut-systemd base rootfs-block gpuvm e2e" extra="systemd.log_target=kmsg" ;;
*) e2e_fail "dracut-release: no such init '$init' (tests/e2e/matrix)" || exit 1 ;;
esac
# shellcheck disable=SC2034 # read by dracut-lib.sh's dracut_base
E2E_DRACUT_END=pre-pivot
# shellcheck source=tests/e2e/dracut-lib.sh
. "$E2E_ROOT/tests/e2e/dracut-lib.sh"
# shellcheck source=tests/e2e/confdisk-lib.sh
. "$E2E_ROOT/tests/e2e/confdisk-lib.sh"
if [ "$release" = bookworm ]; then
	dracut_need # the host's dracut, build/kernel's kernel
else
	# shellcheck source=tests/e2e/distro-lib.sh
	. "$E2E_ROOT/tests/e2e/distro-lib.sh"
	distro_need "$release"
fi
# A newer kernel and systemd want more than the 256 MiB of the other scenarios.
# shellcheck disable=SC2034 # read by lib.sh's e2e_boot
E2E_MEM=${E2E_DISTRO_MEM:-512}
args="root=/dev/vda ro rd.gpuvm.ids=1234:1111 udev.log_level=info $extra"

# The root: what dracut mounts (and would switch to: guest/root-init.sh; 059 takes a root
# without /proc, /sys and /dev for no root); the config edited.
tree=$E2E_OUT/$E2E_NAME.rootfs
rm -rf "$tree"
mkdir -p "$tree/etc/gpuvm" "$tree/sbin" "$tree/proc" "$tree/sys" "$tree/dev" "$tree/run"
cp "$E2E_GUEST/root-init.sh" "$tree/sbin/init"
e2e_disk "$tree" e2e-root
dracut_image -m "$mods" --add-drivers "bochs virtio_pci virtio_blk ext4"

dracut_cycle_boot() {
	e2e_boot --log "$1" --iommu intel --gpu vga --disk "$E2E_DISK" --append "$args"
	e2e_fact_is init "$init"
	e2e_fact_is pre_udev.udevd none
	e2e_fact_is pre_udev.vga.driver none
	e2e_fact_is pre_udev.vga.override gpuvm-hold
	e2e_fact_match pre_trigger.udevd '^[0-9]+$'
	e2e_fact_is bochs yes
	# The kernel's lines as dmesg printed them (@dmesg): on the console a systemd status line
	# can run into one.
	dracut_before '^@dmesg \[ *[0-9.]+\] gpuvm: 1 GPU held until the host config is read from the root' \
		'^@dmesg \[ *[0-9.]+\] e2e: pre_udev: udevd=none vga\.driver=none vga\.override=gpuvm-hold ' \
		'gpuvm held before the end of pre-udev'
	dracut_order "$init"
	dracut_before '^@dmesg \[ *[0-9.]+\] gpuvm: config: /etc/gpuvm/gpuvm.conf read from the root at /sysroot' \
		'^@dmesg \[ *[0-9.]+\] e2e: pre_pivot: the report' 'gpuvm decided before the report at pre-pivot'
	e2e_bootjson_is .boot.sysroot /sysroot
	e2e_reject 'Read-only file system' 'a write under the read-only /usr'
	e2e_reject 'initqueue: not found' 'no /sbin/initqueue in the image'
	e2e_reject 'Warning: gpuvm:' 'the gpuvm hooks warned'
}
rootconf_cycle dracut_cycle_boot vga.driver vga.override
