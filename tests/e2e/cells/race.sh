# shellcheck shell=sh
# The race with the stand-in's own driver, and its arm64 twin, one cell an architecture
# and, for the kernel matrix, a Debian release ($E2E_ARGS: x86_64|arm64 [RELEASE]; tests/e2e/matrix):
# the race. Both stand-ins (VGA 1234:1111, virtio-gpu 1af4:1050), selected by ID
# (gpuvm.ids=1234:1111,1af4:1050), vm-passthrough; x86_64 under an Intel IOMMU, arm64 under
# the SMMUv3, where neither has an IOMMU group before gpuvm binds them (two pending groups,
# each read back with the group its vfio-pci probe gave it; where virtio_pci is built in, 6.12
# on, it took the virtio one at boot, which then had its group). Their own drivers arrive after
# gpuvm, the two ways a real boot loads them: bochs through /etc/modules-load (init loads it
# right after gpuvm), virtio_pci and virtio_gpu by modprobe in a hook (e2e.load=, after the
# first report, as udev or a later modprobe would). Both stand-ins stay on vfio-pci: their
# driver_override keeps their own drivers away. There is no udev in the image (the kernel's
# own module requests go to busybox modprobe): the drivers are loaded explicitly, which is
# what udev would do for them. The state file names each one's /dev/vfio/GROUP and, where
# the kernel has it, its vfio cdev (lib.sh's e2e_vfio_nodes).
# With RELEASE the kernel is that release's (lib.sh's e2e_kernel), and NVIDIA's own drivers
# the kernel has (nova_core, nouveau: neither binds a stand-in) are in the image and loaded by
# the hook too: the stand-ins still end on vfio-pci.
# On arm64 the guest also dumps its sysfs (guest/gpuvm-dump.sh, right after gpuvm's boot run:
# the two groups the probes gave) and build/gpuvm replays it here: the SMMUv3's, replayed as
# the guest's own gpuvm planned it, in each mode (lib.sh's e2e_dump_replay).
# shellcheck disable=SC2086 # the cell's words
set -- $E2E_ARGS
arch=${1-} release=${2-}
ids=gpuvm.ids=1234:1111,1af4:1050
load=virtio_pci,virtio_gpu
nvidia=''
case $arch in
x86_64)
	e2e_need_gpuvm
	[ -z "$release" ] || e2e_kernel "$release"
	;;
arm64)
	# shellcheck source=tests/e2e/arm64-lib.sh
	. "$E2E_ROOT/tests/e2e/arm64-lib.sh"
	a64_need "$release"
	;;
*)
	e2e_fail "race: no such architecture '$arch' (tests/e2e/matrix)" || exit 1
	;;
esac
if [ -n "$release" ]; then
	for m in nova_core nouveau; do
		if grep -q "/$m\\.ko" "$E2E_KDIR/lib/modules/$E2E_KVER/modules.dep"; then
			nvidia="$nvidia $m"
			load=$load,$m
		fi
	done
fi
args="gpuvm.mode=vm-passthrough $ids e2e.load=$load"
if [ "$arch" = x86_64 ]; then
	e2e_image --gpuvm "$E2E_GPUVM" --load "$E2E_BOCHS" --modules "virtio_pci virtio_gpu $nvidia" \
		--add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
	e2e_boot --iommu intel --gpu vga --gpu virtio --append "$args"
else
	a64_image --load "$E2E_BOCHS" --modules "virtio_pci virtio_gpu $nvidia" \
		--add "$E2E_GUEST/gpuvm-dump.sh:/init.d/45-gpuvm-dump.sh" \
		--add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
	a64_boot --iommu smmuv3 --gpu vga --gpu virtio --append "$args"
fi
e2e_guest_done
[ "$arch" != arm64 ] || e2e_dump_replay '.iommu.groups_at_probe and (.iommu.cpu_vendor == "arm")'
e2e_fact_is vga.driver vfio-pci
e2e_fact_is virtio.driver vfio-pci
e2e_fact_is vga.vfio_node yes
e2e_fact_is virtio.vfio_node yes
e2e_reject '^@e2e load_failed=' 'a module of e2e.load= did not load'
# shellcheck disable=SC2086 # names
e2e_loaded "$E2E_BOCHS" virtio_gpu virtio_pci $nvidia
e2e_fact_is vga.driver_after_load vfio-pci
e2e_fact_is virtio.driver_after_load vfio-pci
e2e_fact_is virtio.override_after_load vfio-pci
e2e_state_is .result ok
if [ "$arch" = arm64 ] && e2e_builtin virtio_pci; then
	# 6.12 on: virtio-pci, built in, probed the virtio stand-in at boot and gave it a group
	e2e_state_is "$E2E_JQ_VIRTIO | .driver_before" virtio-pci
	e2e_state_is .iommu.groups 1
	e2e_state_is '[.groups[] | select(.pending)] | length' 1
elif [ "$arch" = arm64 ]; then
	e2e_state_is .iommu.groups 0
	e2e_state_is '[.groups[] | select(.pending)] | length' 2
fi
e2e_state_is "$E2E_JQ_VGA | .driver_after" vfio-pci
e2e_state_is "$E2E_JQ_VIRTIO | .driver_after" vfio-pci
e2e_state_is "$E2E_JQ_VGA | .iommu_group | tostring" "$(e2e_fact vga.group)"
e2e_state_is "$E2E_JQ_VIRTIO | .iommu_group | tostring" "$(e2e_fact virtio.group)"
e2e_state_is "[.devices[] | select(.verified)] | length" 2
e2e_vfio_nodes vga "$E2E_JQ_VGA"
e2e_vfio_nodes virtio "$E2E_JQ_VIRTIO"
e2e_state_is .kernel "$E2E_KVER"
e2e_expect '^@dmesg .*gpuvm: vm-passthrough: 2 GPUs and 0 companion functions on vfio-pci, 0 failed' \
	"no gpuvm summary line for 2 GPUs in the kernel log"
