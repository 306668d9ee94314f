# shellcheck shell=sh
# Compressed modules, one cell a compression ($E2E_ARGS: xz or zst; tests/e2e/matrix): every
# module of the image compressed as .ko.COMP (mkimage.sh --compress-modules COMP, which runs
# depmod again), Intel IOMMU, vm-passthrough. This kernel has no in-kernel module
# decompression (CONFIG_MODULE_DECOMPRESS unset): busybox modprobe gets .ko.xz in only after a
# refused finit_module and cannot load .ko.zst at all ("invalid module format"); gpuvm loads
# them with libkmod, which decompresses in userspace. vfio_iommu_type1 comes in through vfio's
# softdep (which busybox modprobe ignores): /sys/module/vfio_iommu_type1 must exist. Nothing
# else loads modules here.
comp=$E2E_ARGS
case $comp in
xz | zst) ;;
*) e2e_fail "gpuvm-compressed: no such compression '$comp' (tests/e2e/matrix)" || exit 1 ;;
esac
e2e_need_gpuvm
e2e_image --gpuvm "$E2E_GPUVM" --compress-modules "$comp" \
	--add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
e2e_boot --iommu intel --gpu vga --append "gpuvm.mode=vm-passthrough gpuvm.ids=1234:1111"
e2e_guest_done
e2e_fact_match vfio_files "^(vfio[-_a-z0-9]*\\.ko\\.$comp )+\$"
e2e_fact_match vfio_files "(^| )vfio_iommu_type1\\.ko\\.$comp "
e2e_fact_is type1 yes
e2e_fact_match modules '(^| )vfio_pci( |.*)vfio_pci_core( |.*)vfio_virqfd( |$)'
e2e_fact_is vga.driver vfio-pci
e2e_fact_is vga.vfio_node yes
e2e_state_is .result ok
e2e_state_is '.modules[] | select(.name == "vfio-pci") | .loaded' true
e2e_state_is '.modules[] | .error' null
e2e_state_is "$E2E_JQ_VGA | .driver_after" vfio-pci
e2e_state_is "$E2E_JQ_VGA | .verified" true
e2e_expect '^@dmesg .*gpuvm: loaded vfio-pci'
e2e_reject 'gpuvm: .*cannot load' 'gpuvm could not load a module'
