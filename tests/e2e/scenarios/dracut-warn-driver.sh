# shellcheck shell=sh
# dracut/90gpuvm at image build time, no boot:
#  - check() says 0 (dracut includes gpuvm by itself) whenever the gpuvm binary is there,
#    whatever the host config says (the mode is the root's at boot, and may change without a
#    rebuild); 1 without a binary. And dracut acts on it: an image built without -m (every
#    other module omitted) holds gpuvm with a vm-passthrough config, a container config or a
#    kernel_cmdline; none of them holds the host config.
#  - a vm-passthrough host config (GPUVM_CONFIG; its mode asked of gpuvm, the one parser) with
#    nouveau in the image (--add-drivers, which dracut installs after every module's
#    install()): dracut's output warns plainly, and the image holds gpuvm, its two hooks, the
#    vfio modules and nouveau, and no /etc/gpuvm/gpuvm.conf.
#  - the same with nouveau put in by 50drm (a module before gpuvm): the warning again.
#  - the same with a container config: no warning.
#  - a container config with --kernel-cmdline rd.gpuvm.mode=vm-passthrough: the warning again,
#    naming kernel_cmdline.
# Assertions read dracut's output ($E2E_OUT/$E2E_NAME-SUFFIX.img.dracut.log) and the image's
# file list.
# shellcheck source=tests/e2e/dracut-lib.sh
. "$E2E_ROOT/tests/e2e/dracut-lib.sh"
dracut_need
conf=$E2E_DRACUT/conf
rm -rf "$conf"
mkdir -p "$conf"
printf '# host config\nmode=vm-passthrough\n' >"$conf/vm.conf"
printf 'nvidia.com/gpu.workload.config=vm-vgpu\n' >"$conf/label-vgpu.conf"
printf 'mode=vm-passthrough\nmode=container\n' >"$conf/container.conf"
printf 'ids=10de:*\n' >"$conf/nomode.conf"
printf 'mode=container\nconfig=LABEL=gpuvm-conf\n' >"$conf/container-disk.conf"

# check_rc CONFIG [KERNEL_CMDLINE] [BINARY]: what module-setup.sh's check() returns, with
# dracut's own find_binary (dracut-functions.sh).
check_rc() {
	# shellcheck disable=SC2016 # expanded by that bash
	env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin GPUVM_CONFIG="$1" kernel_cmdline="${2-}" \
		GPUVM_BINARY="${3:-$E2E_GPUVM}" DRACUT_HOST="$E2E_DRACUT_HOST" MODSETUP="$E2E_ROOT/dracut/90gpuvm/module-setup.sh" \
		bash -c '. "$DRACUT_HOST/dracut-functions.sh" >/dev/null 2>&1; . "$MODSETUP"; check' >/dev/null 2>&1
	echo $?
}
check_is() { # WANT CONFIG [KERNEL_CMDLINE] [BINARY]
	want=$1
	shift
	got=$(check_rc "$@")
	[ "$got" = "$want" ] || e2e_fail "check() with ${1##*/}${2:+ and kernel_cmdline=\"$2\"}${3:+ and binary $3}: $got, expected $want"
}
check_is 0 "$conf/vm.conf"
check_is 0 "$conf/label-vgpu.conf"
check_is 0 "$conf/container.conf"
check_is 0 "$conf/nomode.conf"
check_is 0 "$conf/none.conf"
check_is 0 "$conf/container.conf" " rd.gpuvm.mode=vm-passthrough "
check_is 0 "$conf/container-disk.conf"
check_is 0 "$conf/vm.conf" " gpuvm.mode=container "
check_is 1 "$conf/vm.conf" "" /nonexistent/gpuvm

# files IMG: the image's file list (the images are not compressed).
files() { cpio -t --quiet <"$1" 2>/dev/null; }

# dracut's own choice: no -m, every module but gpuvm omitted, no kernel: the image holds gpuvm
# exactly when check() said 0.
dracut_base
omit=$(for m in "$E2E_DRACUT_BASE"/modules.d/[0-9][0-9]*; do
	m=${m##*/} && m=${m#[0-9][0-9]} && [ "$m" = gpuvm ] || printf '%s ' "$m"
done)
auto_gpuvm() { # WANT(yes|no) SUFFIX [DRACUT OPTIONS…]
	want=$1 suffix=$2
	shift 2
	dracut_image --as "auto-$suffix" --no-kernel --no-compress -o "$omit" "$@"
	got=no
	! files "$E2E_IMG" | grep -q '^usr/sbin/gpuvm$' || got=yes
	[ "$got" = "$want" ] || e2e_fail "dracut without -m, ${GPUVM_CONFIG##*/}${*:+, $*}: gpuvm in the image: $got, expected $want"
}
export GPUVM_CONFIG
GPUVM_CONFIG=$conf/vm.conf
auto_gpuvm yes vm
GPUVM_CONFIG=$conf/container.conf
auto_gpuvm yes container
auto_gpuvm yes cmdline --kernel-cmdline rd.gpuvm.mode=vm-passthrough
for img in "$E2E_OUT/$E2E_NAME"-auto-*.img; do
	! files "$img" | grep -q '^etc/gpuvm/' || e2e_fail "${img##*/} holds /etc/gpuvm: the image must carry no host config"
done

warning='WARNING: gpuvm: this initramfs carries nouveau, a driver for NVIDIA GPUs, while the host asks for vm-passthrough'
GPUVM_CONFIG=$conf/vm.conf
dracut_image --as vm -m gpuvm --add-drivers nouveau --no-compress
E2E_LOG=$E2E_IMG.dracut.log
e2e_expect "^dracut: $warning \($conf/vm.conf\)\. Harmless" "no warning about nouveau in dracut's output"
e2e_reject 'ERROR|FATAL' 'dracut complained'
list=$(files "$E2E_IMG")
! printf '%s\n' "$list" | grep -q '^etc/gpuvm/' || e2e_fail "the image holds /etc/gpuvm"
for f in usr/sbin/gpuvm usr/lib/dracut/hooks/pre-udev/00-gpuvm-pre-udev.sh \
	usr/lib/dracut/hooks/pre-pivot/50-gpuvm-pre-pivot.sh \
	'/vfio-pci\.ko' '/vfio_iommu_type1\.ko' '/nouveau\.ko' "modules\.alias$" "modules\.dep$"; do
	printf '%s\n' "$list" | grep -Eq -- "$f" || e2e_fail "the image has no $f"
done

# nouveau put in by a module that comes before gpuvm (50drm, all DRM drivers without hostonly;
# on a real host its hostonly mode picks nouveau for the NVIDIA GPU it finds).
dracut_image --as drm -m "drm gpuvm" --no-compress
E2E_LOG=$E2E_IMG.dracut.log
e2e_expect "^dracut: $warning \($conf/vm.conf\)\. Harmless" "no warning about nouveau from 50drm"

GPUVM_CONFIG=$conf/container.conf
dracut_image --as container -m gpuvm --add-drivers nouveau --no-compress
E2E_LOG=$E2E_IMG.dracut.log
e2e_reject 'WARNING: gpuvm' 'a warning without a VM mode'
files "$E2E_IMG" | grep -q '/nouveau\.ko' || e2e_fail "the container image has no nouveau.ko"

dracut_image --as cmdline -m gpuvm --add-drivers nouveau --no-compress \
	--kernel-cmdline "rd.gpuvm.mode=vm-passthrough"
E2E_LOG=$E2E_IMG.dracut.log
e2e_expect "^dracut: $warning \(kernel_cmdline: rd\.gpuvm\.mode=vm-passthrough\)\. Harmless" \
	"no warning about nouveau with kernel_cmdline=rd.gpuvm.mode=vm-passthrough"
