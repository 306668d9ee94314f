# shellcheck shell=sh
# `gpuvm apply --live` on the running guest, one boot on bookworm's kernel with the
# Intel IOMMU and the VGA stand-in (1234:1111), in container mode at boot (bochs, loaded by
# /etc/modules-load after gpuvm, takes it). The hook guest/gpuvm-live.sh then changes the host
# config and runs apply --live four times: vm-passthrough while a process holds
# /dev/dri/card0 (refused: exit 7, nothing changed), vm-passthrough free (vfio-pci, verified,
# /dev/vfio/GROUP), container while a process holds /dev/vfio/GROUP (refused, nothing
# changed), container free (bochs again). The refusals name the holder's pid and command.
e2e_need_gpuvm
e2e_image --gpuvm "$E2E_GPUVM" --load "$E2E_BOCHS" --add "$E2E_GUEST/gpuvm-live.sh:/init.d/50-gpuvm-live.sh"
e2e_boot --iommu intel --gpu vga --append "gpuvm.ids=1234:1111"
e2e_guest_done
e2e_fact_is before.driver bochs-drm
e2e_fact_match group '^[0-9]+$'

# 1: /dev/dri/card0 held: refused, the stand-in as it was
e2e_fact_is live1.rc 7
e2e_fact_is live1.driver bochs-drm
e2e_fact_is live1.override '(null)'
e2e_fact_is live1.result refused
e2e_fact_is live1.mode container
holder=$(e2e_fact holder1)
e2e_fact_match live1.error "in use: /dev/dri/card0 \\(0000:00:0[0-9a-f]\\.0\\) held by pid $holder \\(sleep\\)"

# 2: free: vfio-pci, verified
e2e_fact_is live2.rc 0
e2e_fact_is live2.driver vfio-pci
e2e_fact_is live2.override vfio-pci
e2e_fact_is live2.result ok
e2e_fact_is live2.mode vm-passthrough
e2e_fact_is live2.group_node yes

# 3: /dev/vfio/GROUP held (a VM): refused, still vfio-pci
e2e_fact_is live3.rc 7
e2e_fact_is live3.driver vfio-pci
e2e_fact_is live3.override vfio-pci
e2e_fact_is live3.result refused
e2e_fact_is live3.mode vm-passthrough
holder=$(e2e_fact holder3)
group=$(e2e_fact group)
e2e_fact_match live3.error "in use: /dev/vfio/$group \\(0000:00:0[0-9a-f]\\.0\\) held by pid $holder \\(sleep\\)"

# 4: free: off vfio-pci, bochs again
e2e_fact_is live4.rc 0
e2e_fact_is live4.driver bochs-drm
e2e_fact_is live4.override '(null)'
e2e_fact_is live4.result ok
e2e_fact_is live4.mode container

e2e_expect '^@dmesg .*gpuvm: 0000:00:0[0-9a-f]\.0: bochs-drm -> vfio-pci \(bind\)' \
	"no kernel log line for the live bind"
e2e_expect '^@dmesg .*gpuvm: 0000:00:0[0-9a-f]\.0: in use: /dev/dri/card0 .* held by pid [0-9]+ \(sleep\)' \
	"no kernel log line naming the holder"
e2e_expect '^@dmesg .*gpuvm: live switch to vm-passthrough: 1 selected device in use' \
	"no kernel log line for the refusal"
e2e_expect '^@dmesg .*gpuvm: 0000:00:0[0-9a-f]\.0: vfio-pci -> bochs-drm \(unbind\)' \
	"no kernel log line for the live return to bochs"
e2e_reject '^gpuvm-init: warning' 'init warned'
