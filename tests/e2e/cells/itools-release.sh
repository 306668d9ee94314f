# shellcheck shell=sh
# Issue 19: gpuvm's initramfs-tools hook and init-top script (initramfs-tools/) with another
# Debian release's own initramfs-tools, kernel and udev ($E2E_ARGS: the release, and where
# the settings come from: cmdline, the default, or config; matrix).
# The image is built inside the cached root build/roots/RELEASE-initramfs-tools by its own
# mkinitramfs (itools-lib.sh), MODULES=most as the release ships it, with the test hooks.
# cmdline: no config in the image, gpuvm.mode=vm-passthrough gpuvm.ids=1234:1111 on the boot
# line. config: the same in the root's /etc/gpuvm/gpuvm.conf while the image is built, which
# gpuvm's hook copies in, and nothing on the boot line (a host config picked up by the build).
#  - gpuvm ran at init-top before udev's init-top script started udevd: its kernel log lines
#    come before udevd's "Starting systemd-udevd version" (shown when the boot line has no
#    `quiet`), and the image's init-top ORDER runs gpuvm before udev.
#  - after udev's coldplug and settle (init-premount): the stand-in is on vfio-pci, bochs
#    (loaded by the coldplug) did not take it; the state file says ok.
# E2E_ITOOLS_HOOKLESS=1 builds the image without gpuvm (the root as before this step): the
# stand-in ends on bochs and the checks fail, as they must.
# shellcheck disable=SC2086 # the cell's words
set -- $E2E_ARGS
release=${1-} where=${2:-cmdline}
case $where in
cmdline) conf='' append="gpuvm.mode=vm-passthrough gpuvm.ids=1234:1111" ;;
config) conf=$(printf 'mode=vm-passthrough\nids=1234:1111') append='' ;;
*) e2e_fail "itools-release: the settings come from cmdline or config, not '$where'" || exit 1 ;;
esac
# shellcheck source=tests/e2e/itools-lib.sh
. "$E2E_ROOT/tests/e2e/itools-lib.sh"
itools_need "$release"
# shellcheck disable=SC2034 # read by lib.sh's e2e_boot
E2E_MEM=${E2E_DISTRO_MEM:-512}
if [ -n "${E2E_ITOOLS_HOOKLESS-}" ]; then
	itools_image --no-gpuvm --host-config "$conf"
else
	itools_image --host-config "$conf"
fi
[ -n "$E2E_ITOOLS_ORDER" ] || e2e_fail "the image has no init-top ORDER"
itools_order_ok "$E2E_ITOOLS_ORDER"
e2e_boot --iommu intel --gpu vga --append "$append"
e2e_guest_done
itools_bound
case $where in
cmdline) e2e_state_is .mode_source cmdline ;;
config) e2e_state_match .mode_source '^/etc/gpuvm/gpuvm.conf' ;;
esac
