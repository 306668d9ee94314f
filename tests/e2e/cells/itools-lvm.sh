# shellcheck shell=sh
# The config-disk wait and switch_root into a root on LVM (Ubuntu Server's default)
# with initramfs-tools ($E2E_ARGS: the Debian release; matrix), gpuvm's config on the root file
# system itself: gpuvm.config=UUID=<the root's UUID>; the boot line names the stand-in
# (gpuvm.ids=1234:1111: what a VM mode would select, so what gpuvm holds while it waits) but
# not the mode, which only the config on the root says.
# The image is built inside the cached root (itools-lib.sh) with lvm2's own hook. The root
# does not exist when the boot starts: the test's init-premount script (guest/
# itools-lvm-premount.sh) makes it on the blank disk after gpuvm's own init-premount try.
#  - init-top: `gpuvm apply --defer` found no such disk and held the stand-in (console line
#    "GPUs held"); at init-premount it was still held (gpuvm-hold, no driver, pending) although
#    udev's coldplug had loaded bochs.
#  - init-bottom: gpuvm's script waited ("Begin: gpuvm: waiting"), gpuvm read the config from
#    the logical volume initramfs-tools had mounted as root, and bound the stand-in.
#  - late (the second word): the volume group comes back only 3 s after init-premount, while
#    initramfs-tools waits for the root device ("Waiting for root file system") running the
#    local-block scripts each second: gpuvm's local-block script decides there, and
#    init-bottom has nothing left to wait for.
#  - after switch_root (the root's /sbin/init is guest/root-init.sh, PID 1, root
#    /dev/mapper/e2e-root): the stand-in is on vfio-pci, the state file says mode
#    vm-passthrough, config from the disk, no errors.
#  - root (the third word): no config= on the boot line; the config is the root's own
#    /etc/gpuvm/gpuvm.conf, read by gpuvm's init-bottom script from ${rootmnt} once
#    initramfs-tools has mounted the LV (with late: after local-block waited for it): held at
#    init-top and init-premount (root-pending), "read from the root at /root" after the
#    volume's activation, boot.json host_config read, no config disk.
# shellcheck disable=SC2086 # the cell's words
set -- $E2E_ARGS
release=${1-} when=${2:-now} from=${3:-config}
case $when in
now) late='' ;;
late) late=e2e.lvm=late ;;
*) e2e_fail "itools-lvm: the root comes now or late, not '$when'" || exit 1 ;;
esac
case $from in
config) ;;
root) ;;
*) e2e_fail "itools-lvm: the config comes from config= or the root, not '$from'" || exit 1 ;;
esac
# shellcheck disable=SC2034 # read by lib.sh's e2e_boot
E2E_MEM=${E2E_DISTRO_MEM:-512}
# shellcheck source=tests/e2e/itools-lib.sh
. "$E2E_ROOT/tests/e2e/itools-lib.sh"
uuid=5e2e1f5e-0019-4c0d-9a1e-00000000e2e0
rootfs=$E2E_OUT/$E2E_NAME.rootfs
e2e_rootfs "$rootfs"
mkdir -p "$rootfs/etc/gpuvm" "$rootfs/usr/lib/e2e"
printf 'mode=vm-passthrough\n' >"$rootfs/etc/gpuvm/gpuvm.conf"
cp "$E2E_GUEST/dracut-check.sh" "$E2E_GUEST/dracut-facts.sh" "$rootfs/usr/lib/e2e/"
printf '#!/bin/sh\nexec sh /usr/lib/e2e/dracut-check.sh\n' >"$rootfs/etc/e2e-check.sh"
chmod 0755 "$rootfs/etc/e2e-check.sh"
files=$E2E_OUT/$E2E_NAME.files
rm -rf "$files"
mkdir -p "$files"
truncate -s 16M "$files/root.ext4"
mkfs.ext4 -q -F -U "$uuid" -L e2e-lvm-root -d "$rootfs" "$files/root.ext4" ||
	{ e2e_fail "mkfs.ext4 -d $rootfs failed"; exit 1; }
# The release's own kernel from here on (the root file system above has no modules).
itools_need "$release"
itools_image --premount "$E2E_GUEST/itools-lvm-premount.sh" --file "$files/root.ext4"
disk=$E2E_OUT/$E2E_NAME.disk
rm -f "$disk"
truncate -s 32M "$disk"
cfg="gpuvm.config=UUID=$uuid"
[ "$from" = config ] || cfg=''
e2e_boot --iommu intel --gpu vga --disk "$disk" \
	--append "root=/dev/mapper/e2e-root $cfg gpuvm.ids=1234:1111 $late"
e2e_guest_done
e2e_fact_is pid 1
e2e_fact_is root '/dev/mapper/e2e-root ext4 ro'
e2e_fact_is premount.vga.override gpuvm-hold
e2e_fact_is premount.vga.driver none
if [ "$from" = config ]; then
	e2e_fact_is premount.pending yes
else
	e2e_fact_is premount.pending no
	e2e_fact_is premount.root_pending yes
fi
e2e_fact_is premount.bochs yes
e2e_fact_is vga.driver vfio-pci
e2e_fact_is vga.override vfio-pci
e2e_fact_is vga.vfio_node yes
e2e_state_is .result ok
e2e_state_is .mode vm-passthrough
if [ "$from" = root ]; then
	e2e_state_is .mode_source /etc/gpuvm/gpuvm.conf:1
	e2e_state_is .config_disk null
	e2e_bootjson_is .boot.stage root
	e2e_bootjson_is .boot.host_config read
	e2e_bootjson_is .boot.sysroot /root
	e2e_expect 'gpuvm: 1 GPU held until the host config is read from the root'
	a=$(grep -n -m1 -E 'e2e: lvm root (activated|made), status 0' "$E2E_LOG" | cut -d: -f1)
	[ -z "$late" ] || a=$(grep -n -m1 -E 'e2e: lvm root activated, status 0' "$E2E_LOG" | cut -d: -f1)
	b=$(grep -n -m1 -E 'gpuvm: config: /etc/gpuvm/gpuvm.conf read from the root at /root' "$E2E_LOG" | cut -d: -f1)
	if [ -z "$a" ] || [ -z "$b" ] || [ "$a" -ge "$b" ]; then
		e2e_fail "the volume (line ${a:-none}) is not before gpuvm's decision from the root (line ${b:-none})"
	fi
	[ -z "$late" ] || e2e_expect 'Begin: Waiting for root file system'
	e2e_reject 'gpuvm: apply.* exited|did not decide|the IOMMU is not active' 'the boot script warned'
	exit 0 # the config= checks below are not this boot's
fi
e2e_state_is .config_disk.status disk
e2e_state_is "$E2E_JQ_VGA | .driver_after" vfio-pci
e2e_state_is '.errors | length' 0
e2e_expect 'gpuvm: GPUs held until the config.s disk is read'
e2e_expect 'e2e: lvm root made, status 0'
if [ -z "$late" ]; then
	e2e_expect 'Begin: gpuvm: waiting for the config.s disk'
else
	# The decision in local-block, while initramfs-tools waited for the root: after the
	# volume group came back, and nothing left for init-bottom.
	e2e_expect 'e2e: lvm root deactivated, status 0'
	e2e_expect 'Begin: Waiting for root file system'
	e2e_reject 'Begin: gpuvm: waiting for the config.s disk' 'init-bottom waited: local-block did not decide'
	a=$(grep -n -m1 -E 'e2e: lvm root activated, status 0' "$E2E_LOG" | cut -d: -f1)
	b=$(grep -n -m1 -E 'gpuvm: config: UUID=' "$E2E_LOG" | cut -d: -f1)
	if [ -z "$a" ] || [ -z "$b" ] || [ "$a" -ge "$b" ]; then
		e2e_fail "the activation (line ${a:-none}) is not before gpuvm's decision (line ${b:-none})"
	fi
fi
e2e_reject 'gpuvm: apply.* exited|did not decide|the IOMMU is not active' 'the boot script warned'
