# shellcheck shell=sh
# Faults of the initramfs itself, on a real kernel (guest/gpuvm-faults.sh): gpuvm run
# again with /dev/kmsg gone, with the module directory gone (vfio-pci already loaded), and with
# /run read-only. Each time the stand-in ends on vfio-pci, the exit status is 0, and gpuvm says
# what it could not do on stderr.
e2e_need_gpuvm
e2e_image --gpuvm "$E2E_GPUVM" --load bochs \
	--add "$E2E_GUEST/gpuvm-faults.sh:/init.d/40-gpuvm-faults.sh" \
	--add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
e2e_boot --iommu intel --gpu vga --append "gpuvm.mode=vm-passthrough gpuvm.ids=1234:1111"
e2e_guest_done
e2e_fact_is nokmsg.rc 0
e2e_fact_match nokmsg.summary '^gpuvm: vm-passthrough: 1 GPU and 0 companion functions on vfio-pci, 0 failed'
e2e_fact_is nokmsg.driver vfio-pci
e2e_fact_is nomods.rc 0
e2e_fact_is nomods.driver vfio-pci
e2e_fact_match nomods.warning 'cannot open the module directory'
e2e_fact_is rorun.rc 0
e2e_fact_is rorun.driver vfio-pci
e2e_fact_match rorun.error 'cannot write /run/gpuvm/state.json: Read-only file system'
e2e_fact_is vga.driver vfio-pci
