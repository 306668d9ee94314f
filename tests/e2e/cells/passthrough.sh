# shellcheck shell=sh
# Passthrough under an Intel or an AMD IOMMU, one cell an IOMMU and maybe a Debian release
# whose kernel boots (lib.sh's e2e_kernel) ($E2E_ARGS: intel|amd [RELEASE]; tests/e2e/matrix):
# the standalone image with build/gpuvm, the VGA stand-in (1234:1111, selected by ID),
# gpuvm.mode=vm-passthrough. gpuvm, the first thing init runs, loads vfio-pci (libkmod) and
# binds the stand-in; bochs, its own driver, is in the image and loaded after gpuvm
# (/etc/modules-load) and does not take it. The state file says ok, driver_after vfio-pci,
# verified, no error; /dev/vfio/GROUP exists, and the state file names it (and the vfio cdev
# where the kernel has one: lib.sh's e2e_vfio_nodes); the kernel log has gpuvm's summary.
#  - intel: -device intel-iommu, unit dmar0; the stand-in at 0000:00:01.0.
#  - amd: -device amd-iommu, unit ivhd0. The AMD IOMMU is the PCI function 00:01.0 (class
#    0806, which gpuvm never binds) and moves the stand-in to 00:02.0: gpuvm.ids= finds it by ID.
# Then the guest dumps its sysfs (guest/gpuvm-dump.sh) and build/gpuvm replays it here: the
# replay plans as the guest's own gpuvm did, in each mode (lib.sh's e2e_dump_replay). Under
# intel the machine also has a PCIe-to-PCI bridge with an e1000 and an rtl8139 behind it (one
# IOMMU group: no driver in the image takes them, gpuvm's boot run does not select them), and
# the dump and the guest's plans add the e1000 to the selection (e2e.dump=): its group is not
# viable (the rtl8139 is no companion), a real kernel's, replayed. And gpuvm-dra runs here on
# that dump with the guest's pinned records and /dev/vfio listing (lib.sh's e2e_dra_replay):
# a claim for the stand-in prepared to the guest's /dev/vfio/GROUP and its address.
# shellcheck disable=SC2086 # the cell's words
set -- $E2E_ARGS
iommu=${1-} release=${2-}
dump=1 viable='' nvme=''
case $iommu in
intel)
	unit=dmar0 addr=0000:00:01.0 dump=1234:1111,8086:100e,1b36:0010 nvme=" nvme"
	set -- -device pcie-pci-bridge,id=pb -device e1000,bus=pb,addr=1 -device rtl8139,bus=pb,addr=2 \
		-device nvme-subsys,id=vfsub \
		-device nvme,serial=e2e-vf,subsys=vfsub,sriov_max_vfs=1,sriov_vq_flexible=2,sriov_vi_flexible=1
	viable='([.groups[] | select(.viable | not) | select(.blocked_by | length == 1)] | length == 1)
		and ([.devices[] | select(.vf)] | length == 1)'
	;;
amd)
	unit=ivhd0 addr=0000:00:02.0
	set --
	;;
*) e2e_fail "passthrough: no such IOMMU '$iommu' (tests/e2e/matrix)" || exit 1 ;;
esac
e2e_need_gpuvm
[ -z "$release" ] || e2e_kernel "$release"
e2e_image --gpuvm "$E2E_GPUVM" --load "$E2E_BOCHS$nvme" \
	--add "$E2E_GUEST/sriov-vfs.sh:/init.d/44-sriov-vfs.sh" \
	--add "$E2E_GUEST/gpuvm-dump.sh:/init.d/45-gpuvm-dump.sh" \
	--add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
e2e_boot --iommu "$iommu" --gpu vga --append "gpuvm.mode=vm-passthrough gpuvm.ids=1234:1111 e2e.dump=$dump" \
	-- "$@"
e2e_guest_done
e2e_dump_replay "$viable"
e2e_dra_replay vga ids vm-passthrough
if [ "$iommu" = intel ]; then
	e2e_fact_is vf.rc 0
	[ -L "$E2E_OUT/$E2E_NAME.dump/root/sys/bus/pci/devices/$(e2e_fact vf.addr)/physfn" ] ||
		e2e_fail "the dump has no physfn link for the VF $(e2e_fact vf.addr)"
fi
e2e_fact_match iommus "^$unit \$"
e2e_fact_is vga.device "$addr"
e2e_fact_is vga.driver vfio-pci
e2e_fact_is vga.override vfio-pci
e2e_fact_is vga.vfio_node yes
e2e_fact_match modules "(^| )$E2E_BOCHS_MOD( |\$)"
e2e_fact_is type1 yes
e2e_state_is .result ok
e2e_state_is .mode vm-passthrough
e2e_state_is .mode_source cmdline
e2e_state_is .iommu.active true
e2e_state_is .iommu.unit "$unit"
e2e_state_is "$E2E_JQ_VGA | .address" "$addr"
e2e_state_is "$E2E_JQ_VGA | .action" bind
e2e_state_is "$E2E_JQ_VGA | .driver_before" null
e2e_state_is "$E2E_JQ_VGA | .driver_after" vfio-pci
e2e_state_is "$E2E_JQ_VGA | .verified" true
e2e_state_is "$E2E_JQ_VGA | .result" ok
e2e_state_is "$E2E_JQ_VGA | .iommu_group | tostring" "$(e2e_fact vga.group)"
e2e_state_is '.errors | length' 0
e2e_state_is .kernel "$E2E_KVER"
e2e_vfio_nodes vga "$E2E_JQ_VGA"
e2e_expect '^@dmesg .*gpuvm: vm-passthrough: 1 GPU and 0 companion functions on vfio-pci, 0 failed' \
	"no gpuvm summary line in the kernel log"
e2e_reject '^gpuvm-init: warning' 'init warned'
