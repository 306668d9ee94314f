# shellcheck shell=sh
# The mode from the host config baked into the initramfs
# (mkimage.sh --config guest/gpuvm-label.conf: the label line
# nvidia.com/gpu.workload.config=vm-passthrough on line 2, ids=1234:1111 on line 3), Intel
# IOMMU, bochs loaded after gpuvm (/etc/modules-load).
#   config   no gpuvm.* on the kernel command line: bound to vfio-pci, and the state file names
#            the config line each setting came from.
#   cmdline  the same image with gpuvm.mode=container: the command line wins for the mode (the
#            ids still come from the config); the stand-in is not bound and bochs takes it.
e2e_need_gpuvm
e2e_image --gpuvm "$E2E_GPUVM" --load bochs --config "$E2E_GUEST/gpuvm-label.conf" \
	--add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
e2e_boot --log config --iommu intel --gpu vga
e2e_guest_done
e2e_reject '^@dmesg .*Command line:.*gpuvm' 'gpuvm.* on the kernel command line'
e2e_fact_is vga.driver vfio-pci
e2e_fact_is vga.vfio_node yes
e2e_state_is .result ok
e2e_state_is .mode vm-passthrough
e2e_state_is .mode_source /etc/gpuvm/gpuvm.conf:2
e2e_state_is .settings.ids.source /etc/gpuvm/gpuvm.conf:3
e2e_state_is "$E2E_JQ_VGA | .driver_after" vfio-pci
e2e_state_is '.errors | length' 0
e2e_state_is '.warnings | length' 0
e2e_expect '^@dmesg .*gpuvm: vm-passthrough: 1 GPU and 0 companion functions on vfio-pci, 0 failed'
e2e_reject '^gpuvm-init: warning' 'init warned'

e2e_boot --log cmdline --iommu intel --gpu vga --append "gpuvm.mode=container"
e2e_guest_done
e2e_fact_is vga.driver bochs-drm
e2e_fact_is vga.override '(null)'
e2e_fact_is dev_vfio ''
e2e_state_is .mode container
e2e_state_is .mode_source cmdline
e2e_state_is .settings.ids.source /etc/gpuvm/gpuvm.conf:3
e2e_state_is "$E2E_JQ_VGA | .action" keep
e2e_state_is '.errors | length' 0
e2e_expect '^@dmesg .*gpuvm: container: 1 GPU in place for the host driver, 0 failed'
