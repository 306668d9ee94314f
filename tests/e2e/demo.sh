#!/bin/sh
# tests/e2e/demo.sh — `make demo`: gpuvm at work in a real boot, in a few lines.
#
# Fetches Debian's kernel (scripts/fetch-kernel.sh: build/kernel; nothing is installed on the
# host), builds the standalone initramfs with build/gpuvm and bochs (the stand-in GPU's own
# driver, loaded by init right after gpuvm), and boots it in QEMU (TCG, q35, Intel IOMMU) with
# the stand-in GPU `-device VGA` (1234:1111) and `gpuvm.mode=vm-passthrough
# gpuvm.ids=1234:1111`. Prints gpuvm's kernel log lines and where the stand-in ended; exits 0
# when it ended on vfio-pci, 1 otherwise (2: cannot run here).
# It boots Debian's vmlinuz (the bzImage a boot loader boots); E2E_BZIMAGE= (empty) boots the
# ELF vmlinux through PVH instead, twice as fast. The whole console is in build/e2e/demo.log.
set -u

here=$(cd "$(dirname "$0")" && pwd)
E2E_ROOT=$(cd "$here/../.." && pwd)
E2E_OUT=$E2E_ROOT/build/e2e
E2E_NAME=demo
E2E_BZIMAGE=${E2E_BZIMAGE-1}
export E2E_ROOT E2E_OUT E2E_NAME E2E_BZIMAGE
params='gpuvm.mode=vm-passthrough gpuvm.ids=1234:1111'

say() { echo "demo: $*"; }
cannot() { say "cannot run: $*" >&2; exit 2; }

problem=''
for tool in qemu-system-x86_64 timeout cpio zstd depmod modprobe jq; do
	command -v "$tool" >/dev/null || problem="$problem $tool"
done
[ -z "$problem" ] || cannot "missing:$problem (scripts/install-packages.sh)"
[ -x /bin/busybox ] || cannot "no /bin/busybox (apt-get install busybox-static)"
[ -x "${E2E_GPUVM:-$E2E_ROOT/build/gpuvm}" ] || cannot "no ${E2E_GPUVM:-build/gpuvm} (run make)"
mkdir -p "$E2E_OUT"
kver=$("$E2E_ROOT/scripts/fetch-kernel.sh" "$E2E_ROOT/build") || cannot "scripts/fetch-kernel.sh failed"

# shellcheck source=tests/e2e/lib.sh
. "$here/lib.sh"
out=$E2E_OUT/demo.out
rm -f "$E2E_OUT/demo.times"
say "Debian's kernel $kver ($(basename "$E2E_KERNEL")) in QEMU: TCG, q35, Intel IOMMU,"
say "stand-in GPU -device VGA (1234:1111; its own driver, bochs, is in the image too)"
if ! (e2e_image --gpuvm "$E2E_GPUVM" --load bochs \
	--add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh") >"$out" 2>&1; then
	tail -n 5 "$out" >&2
	cannot "the image could not be built (build/e2e/demo.out)"
fi
E2E_IMG=$E2E_OUT/demo.img
say "kernel command line: $params"
e2e_boot --iommu intel --gpu vga --append "$params" >>"$out" 2>&1
say "boot ended ($E2E_BOOT_END) after $E2E_BOOT_SECS s; console log: build/e2e/demo.log"
echo

# gpuvm's own lines as the console showed them, and init's word on it.
grep -E '^\[ *[0-9.]+\] gpuvm: |^gpuvm-init: warning' "$E2E_LOG" | sed 's/^/    /'
if e2e_fact modules | grep -qw bochs; then
	echo "    (then init loaded bochs, the stand-in's own driver, from /etc/modules-load)"
fi
echo

addr=$(e2e_fact vga.device) || addr=''
drv=$(e2e_fact vga.driver) || drv=''
ovr=$(e2e_fact vga.override) || ovr=''
grp=$(e2e_fact vga.group) || grp=''
node=$(e2e_fact vga.vfio_node) || node=''
if [ -z "$addr" ]; then
	say "FAIL: the guest did not report the stand-in (boot: $E2E_BOOT_END); see build/e2e/demo.log"
	tail -n 15 "$E2E_LOG" | sed 's/^/    | /'
	exit 1
fi
where="IOMMU group $grp"
[ "$node" != yes ] || where="$where, /dev/vfio/$grp"
echo "stand-in 1234:1111 at $addr: driver $drv (driver_override $ovr; $where)"
if result=$(e2e_state '"result \(.result), mode \(.mode) (from \(.mode_source)), IOMMU \(.iommu.unit // "none")"'); then
	echo "gpuvm's state file /run/gpuvm/state.json: $result"
fi
echo
if [ "$drv" = vfio-pci ]; then
	say "PASS: gpuvm bound the stand-in to vfio-pci before its own driver could take it"
	exit 0
fi
say "FAIL: the stand-in ended on '$drv', not vfio-pci; see build/e2e/demo.log"
exit 1
