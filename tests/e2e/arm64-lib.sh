# shellcheck shell=sh
# tests/e2e/arm64-lib.sh — the arm64 boots. A scenario tests/e2e/scenarios/arm64-*.sh
# sources this after lib.sh (run.sh sources lib.sh) and then writes as any other scenario,
# with a64_need first and a64_boot in place of e2e_boot:
#
#     . "$E2E_ROOT/tests/e2e/arm64-lib.sh"
#     a64_need                              # skips when a tool is missing; fetches the kernel
#     a64_image --load bochs --add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
#     a64_boot --iommu smmuv3 --gpu vga --append "gpuvm.mode=vm-passthrough gpuvm.ids=1234:1111"
#     e2e_guest_done
#
# The kernel is Debian's linux-image-*-arm64 of the same series as build/kernel's amd64 one,
# unpacked into build/arm64/kernel by `scripts/fetch-kernel.sh --arch arm64 build/arm64`
# (private apt state, dpkg -x, depmod -b on the host). The image is mkimage.sh's with the
# aarch64 gpuvm (build/arm64/gpuvm, `make arm64`) and busybox-static:arm64 (build/arm64/busybox,
# scripts/sysroot.sh). QEMU: qemu-system-aarch64 -machine virt[,iommu=smmuv3] -cpu cortex-a57
# -nic none under TCG (a boot takes 3-4 s here; -cpu max is three times slower), console on
# ttyAMA0 (PL011). The virt machine's SMMUv3 is described by the device tree: the kernel gives
# a PCI function its IOMMU group only when a driver first probes it.
#
# Variables: A64_DIR (build/arm64), A64_GPUVM (E2E_A64_GPUVM or build/arm64/gpuvm),
# A64_BUSYBOX; a64_need sets E2E_KDIR, E2E_KVER and E2E_KERNEL to the arm64 kernel, so that
# lib.sh's e2e_image and e2e_rootfs build arm64 trees (with --busybox "$A64_BUSYBOX").

A64_DIR=$E2E_ROOT/build/arm64
A64_GPUVM=${E2E_A64_GPUVM:-$A64_DIR/gpuvm}
A64_BUSYBOX=$A64_DIR/busybox
A64_CMDLINE='console=ttyAMA0 panic=-1'

# a64_need [RELEASE]: what an arm64 boot needs, or skip the scenario naming what is missing.
# The kernel is fetched here (once: a lock serialises parallel scenarios): bookworm's into
# build/arm64, or with RELEASE that Debian release's (lib.sh's e2e_kernel RELEASE arm64:
# build/kernels/RELEASE-arm64).
# shellcheck disable=SC2120 # RELEASE is optional
a64_need() {
	for t in qemu-system-aarch64 flock; do
		command -v "$t" >/dev/null || e2e_skip "no $t (scripts/install-packages.sh)"
	done
	[ -x "$A64_GPUVM" ] || e2e_skip "no $A64_GPUVM (make arm64)"
	[ -x "$A64_BUSYBOX" ] || e2e_skip "no $A64_BUSYBOX (make arm64 runs scripts/sysroot.sh)"
	if [ -n "${1-}" ]; then
		e2e_kernel "$1" arm64
		# shellcheck disable=SC2034 # used by lib.sh's e2e_qemu
		E2E_KERNEL=$E2E_KDIR/boot/vmlinuz-$E2E_KVER # an Image: arm64's vmlinuz is not compressed
		return 0
	fi
	mkdir -p "$A64_DIR"
	if ! E2E_KVER=$(flock "$A64_DIR/.fetch-kernel.lock" \
		"$E2E_ROOT/scripts/fetch-kernel.sh" --arch arm64 "$A64_DIR"); then
		e2e_fail "scripts/fetch-kernel.sh --arch arm64 failed"
		exit 1
	fi
	E2E_KDIR=$A64_DIR/kernel
	# shellcheck disable=SC2034 # used by lib.sh's e2e_qemu
	E2E_KERNEL=$E2E_KDIR/boot/vmlinuz-$E2E_KVER # an Image: arm64's vmlinuz is not compressed
	e2e_bochs
}

# a64_image [e2e_image options…]: e2e_image with the arm64 busybox and gpuvm.
a64_image() {
	e2e_image --busybox "$A64_BUSYBOX" --gpuvm "$A64_GPUVM" "$@"
}

# a64_rootfs DIR [options…]: e2e_rootfs with the arm64 busybox.
a64_rootfs() {
	a64_rootfs_dir=$1
	shift
	e2e_rootfs "$a64_rootfs_dir" --busybox "$A64_BUSYBOX" "$@"
}

# a64_boot [--iommu smmuv3|none] [--gpu vga|virtio]… [--disk FILE] [--append "ARGS"]
#          [--log SUFFIX] [--timeout S] [-- QEMU ARGS…]
# As lib.sh's e2e_boot, on qemu-system-aarch64 -machine virt: the SMMUv3 is a machine
# property (iommu=smmuv3), the stand-ins are PCI devices on the virt host bridge (VGA:
# 1234:1111 at 00:01.0, own driver bochs; virtio-gpu-pci: 1af4:1050), the disk virtio-blk.
# Sets E2E_LOG, E2E_BOOT_SECS, E2E_BOOT_END like e2e_boot.
a64_boot() {
	iommu=smmuv3 gpus='' disk='' append='' suffix='' tmo=$E2E_TIMEOUT
	while [ $# -gt 0 ]; do
		case $1 in
		--iommu) iommu=$2; shift 2 ;;
		--gpu) gpus="$gpus $2"; shift 2 ;;
		--disk) disk=$2; shift 2 ;;
		--append) append=$2; shift 2 ;;
		--log) suffix=-$2; shift 2 ;;
		--timeout) tmo=$2; shift 2 ;;
		--) shift; break ;;
		*) e2e_fail "a64_boot: unknown option $1"; exit 1 ;;
		esac
	done
	case $iommu in
	smmuv3) machine=virt,iommu=smmuv3 ;;
	none) machine=virt ;;
	*) e2e_fail "a64_boot: --iommu $iommu"; exit 1 ;;
	esac
	nextra=$#
	set -- "$@" -machine "$machine" -cpu cortex-a57 -accel tcg -m "$E2E_MEM" -nodefaults \
		-nic none -display none -serial stdio -monitor none -no-reboot
	for g in $gpus; do
		case $g in
		vga) set -- "$@" -device VGA ;;
		virtio) set -- "$@" -device virtio-gpu-pci ;;
		*) e2e_fail "a64_boot: --gpu $g"; exit 1 ;;
		esac
	done
	if [ -n "$disk" ]; then
		set -- "$@" -drive "file=$disk,format=raw,if=none,id=root,snapshot=on" \
			-device virtio-blk-pci,drive=root
	fi
	while [ "$nextra" -gt 0 ]; do
		set -- "$@" "$1"
		shift
		nextra=$((nextra - 1))
	done
	e2e_qemu qemu-system-aarch64 "$A64_CMDLINE $append" "$suffix" "$tmo" "$@"
}
