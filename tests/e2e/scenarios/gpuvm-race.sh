# shellcheck shell=sh
# Issue 4, scenario 5: the race. Both stand-ins, selected by ID (gpuvm.ids=1234:1111,1af4:1050),
# Intel IOMMU, vm-passthrough. Their own drivers arrive after gpuvm, the two ways a real boot
# loads them: bochs through /etc/modules-load (init loads it right after gpuvm), virtio_pci and
# virtio_gpu by modprobe in a hook (e2e.load=, after the first report, as udev or a later
# modprobe would). Both stand-ins stay on vfio-pci: their driver_override keeps their own
# drivers away. There is no udev in the image (the kernel's own module requests go to busybox
# modprobe): the drivers are loaded explicitly, which is what udev would do for them.
e2e_need_gpuvm
e2e_image --gpuvm "$E2E_GPUVM" --load bochs --modules "virtio_pci virtio_gpu" \
	--add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
e2e_boot --iommu intel --gpu vga --gpu virtio \
	--append "gpuvm.mode=vm-passthrough gpuvm.ids=1234:1111,1af4:1050 e2e.load=virtio_pci,virtio_gpu"
e2e_guest_done
e2e_fact_is vga.driver vfio-pci
e2e_fact_is virtio.driver vfio-pci
e2e_fact_is vga.vfio_node yes
e2e_fact_is virtio.vfio_node yes
e2e_reject '^@e2e load_failed=' 'a module of e2e.load= did not load'
e2e_fact_match modules '(^| )bochs( |.*)virtio_gpu( |.*)virtio_pci( |$)'
e2e_fact_is vga.driver_after_load vfio-pci
e2e_fact_is virtio.driver_after_load vfio-pci
e2e_fact_is virtio.override_after_load vfio-pci
e2e_state_is .result ok
e2e_state_is "$E2E_JQ_VGA | .driver_after" vfio-pci
e2e_state_is "$E2E_JQ_VIRTIO | .driver_after" vfio-pci
e2e_state_is "[.devices[] | select(.verified)] | length" 2
e2e_expect '^@dmesg .*gpuvm: vm-passthrough: 2 GPUs and 0 companion functions on vfio-pci, 0 failed' \
	"no gpuvm summary line for 2 GPUs in the kernel log"
