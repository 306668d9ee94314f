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
case $(echo "$E2E_ITOOLS_ORDER" | grep -n -E '/(gpuvm|udev) ' | cut -d: -f1 | tr '\n' ' ') in
'') e2e_fail "init-top ORDER: no gpuvm nor udev: $E2E_ITOOLS_ORDER" ;;
*)
	g=$(echo "$E2E_ITOOLS_ORDER" | grep -n -m1 '/gpuvm ' | cut -d: -f1)
	u=$(echo "$E2E_ITOOLS_ORDER" | grep -n -m1 '/udev ' | cut -d: -f1)
	if [ -z "$g" ] || [ -z "$u" ] || [ "$g" -ge "$u" ]; then
		e2e_fail "init-top ORDER does not run gpuvm (line ${g:-none}) before udev (line ${u:-none})"
	fi
	;;
esac
e2e_boot --iommu intel --gpu vga --append "$append"
e2e_guest_done
e2e_fact_is init shell
e2e_fact_is vga.driver vfio-pci
e2e_fact_is vga.override vfio-pci
e2e_fact_is vga.vfio_node yes
e2e_fact_is bochs yes
e2e_state_is .result ok
e2e_state_is .mode vm-passthrough
case $where in
cmdline) e2e_state_is .mode_source cmdline ;;
config) e2e_state_match .mode_source '^/etc/gpuvm/gpuvm.conf' ;;
esac
e2e_state_is "$E2E_JQ_VGA | .driver_before" null
e2e_state_is "$E2E_JQ_VGA | .driver_after" vfio-pci
e2e_state_is '.errors | length' 0
before() {
	a=$(grep -n -m1 -E -- "$1" "$E2E_LOG" | cut -d: -f1)
	b=$(grep -n -m1 -E -- "$2" "$E2E_LOG" | cut -d: -f1)
	if [ -z "$a" ] || [ -z "$b" ]; then
		e2e_fail "$3: no line matching /$1/ (${a:-none}) or /$2/ (${b:-none})"
	elif [ "$a" -ge "$b" ]; then
		e2e_fail "$3: /$1/ (line $a) is not before /$2/ (line $b)"
	fi
}
before '^\[ *[0-9.]+\] gpuvm: ' 'Starting systemd-udevd version' 'gpuvm before udevd'
e2e_reject 'gpuvm: apply exited|gpuvm: the IOMMU is not active' 'the init-top script warned'
