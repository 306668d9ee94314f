# shellcheck shell=sh
# The distro matrix and the host config read from the root: gpuvm's initramfs-tools hook
# and boot script (initramfs-tools/) with a Debian release's own initramfs-tools, kernel and udev ($E2E_ARGS:
# the release; matrix). The image is built once inside the cached root
# build/roots/RELEASE-initramfs-tools by its own mkinitramfs (itools-lib.sh), MODULES=most as
# the release ships it, with the test hook and, instead of the init-premount report, the
# init-bottom one (guest/itools-e2e-bottom.sh, PREREQ gpuvm). No config in the image; the
# boot line says root=/dev/vda gpuvm.ids=1234:1111 (the stand-in is not an NVIDIA GPU) and no
# mode. The image is booted three times, the root disk's /etc/gpuvm/gpuvm.conf edited between
# the boots (container, vm-passthrough, container: confdisk-lib.sh's rootconf_cycle, which
# checks the image's sha256 unchanged).
#  - gpuvm ran at init-top before udev's init-top script started udevd: its first kernel log
#    line ("1 GPU held until the host config is read from the root") comes before udevd's
#    "Starting systemd-udevd version", and the image's init-top ORDER runs gpuvm before udev;
#    the coldplug loads bochs, which does not take the held stand-in.
#  - init-bottom: gpuvm's script decides from ${rootmnt}/etc/gpuvm/gpuvm.conf ("read from the
#    root at /root"), then the test's script reports ("e2e: init_bottom: the report"): the
#    stand-in on bochs-drm / vfio-pci / bochs-drm, boot.json decided at the root stage,
#    host_config read, sysroot /root.
# E2E_ITOOLS_HOOKLESS=1 builds the image without gpuvm (the root as before this step): the
# stand-in ends on bochs every time and the checks fail, as they must.
# shellcheck disable=SC2086 # the cell's words
set -- $E2E_ARGS
release=${1-}
# shellcheck source=tests/e2e/itools-lib.sh
. "$E2E_ROOT/tests/e2e/itools-lib.sh"
# shellcheck source=tests/e2e/confdisk-lib.sh
. "$E2E_ROOT/tests/e2e/confdisk-lib.sh"
itools_need "$release"
# shellcheck disable=SC2034 # read by lib.sh's e2e_boot
E2E_MEM=${E2E_DISTRO_MEM:-512}
tree=$E2E_OUT/$E2E_NAME.rootfs
rm -rf "$tree"
mkdir -p "$tree/etc/gpuvm" "$tree/sbin" "$tree/proc" "$tree/sys" "$tree/dev" "$tree/run"
cp "$E2E_GUEST/root-init.sh" "$tree/sbin/init"
e2e_disk "$tree" e2e-root
if [ -n "${E2E_ITOOLS_HOOKLESS-}" ]; then
	itools_image --no-gpuvm --premount '' --bottom "$E2E_GUEST/itools-e2e-bottom.sh"
else
	itools_image --premount '' --bottom "$E2E_GUEST/itools-e2e-bottom.sh"
fi
[ -n "$E2E_ITOOLS_ORDER" ] || e2e_fail "the image has no init-top ORDER"
itools_order_ok "$E2E_ITOOLS_ORDER"

itools_cycle_boot() {
	e2e_boot --log "$1" --iommu intel --gpu vga --disk "$E2E_DISK" \
		--append "root=/dev/vda ro gpuvm.ids=1234:1111"
	e2e_fact_is init shell
	e2e_fact_is bochs yes
	a=$(grep -n -m1 -E '^\[ *[0-9.]+\] gpuvm: 1 GPU held until the host config is read from the root' "$E2E_LOG" | cut -d: -f1)
	b=$(grep -n -m1 -E 'Starting systemd-udevd version' "$E2E_LOG" | cut -d: -f1)
	if [ -z "$a" ] || [ -z "$b" ] || [ "$a" -ge "$b" ]; then
		e2e_fail "gpuvm's hold (line ${a:-none}) is not before udevd's start (line ${b:-none})"
	fi
	a=$(grep -n -m1 -E '^@dmesg \[ *[0-9.]+\] gpuvm: config: /etc/gpuvm/gpuvm.conf read from the root at /root' "$E2E_LOG" | cut -d: -f1)
	b=$(grep -n -m1 -E '^@dmesg \[ *[0-9.]+\] e2e: init_bottom: the report' "$E2E_LOG" | cut -d: -f1)
	if [ -z "$a" ] || [ -z "$b" ] || [ "$a" -ge "$b" ]; then
		e2e_fail "gpuvm's decision (line ${a:-none}) is not before the init-bottom report (line ${b:-none})"
	fi
	e2e_bootjson_is .boot.sysroot /root
	e2e_reject 'gpuvm: apply.* exited|gpuvm: the IOMMU is not active|did not decide' 'the boot script warned'
}
rootconf_cycle itools_cycle_boot vga.driver vga.override
