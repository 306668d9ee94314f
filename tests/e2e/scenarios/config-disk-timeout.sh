# shellcheck shell=sh
# config= names a disk that never comes. The kernel command line:
# gpuvm.config=LABEL=gpuvm-conf gpuvm.ids=1234:1111 gpuvm.config_timeout=3, no mode (so the
# fallback is the default, container); the image has no config. gpuvm holds the stand-in at
# its first run, bochs (the stand-in's own driver) loads while it waits and does not take it;
# after 3 s gpuvm gives up, says why, falls back to the command line and the defaults (never
# to a config in the image) and releases the stand-in: bochs takes it. The GPUs never stay
# held by accident.
# shellcheck source=tests/e2e/confdisk-lib.sh
. "$E2E_ROOT/tests/e2e/confdisk-lib.sh"
e2e_need_gpuvm
e2e_image --gpuvm "$E2E_GPUVM" --load "virtio_pci virtio_blk bochs" \
	--modules ext4 --add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
e2e_boot --iommu intel --gpu vga \
	--append 'gpuvm.config=LABEL=gpuvm-conf gpuvm.ids=1234:1111 gpuvm.config_timeout=3'
e2e_guest_done
e2e_fact_is vga.driver bochs-drm
e2e_fact_is vga.override '(null)'
e2e_fact_is dev_vfio ''
e2e_fact_is run_gpuvm 'boot.json metrics state.json '
e2e_state_is .mode container
e2e_state_is .mode_source default
e2e_state_is .config_disk.status fallback
e2e_state_is .config_disk.device null
e2e_state_match .config_disk.reason '^LABEL=gpuvm-conf:/etc/gpuvm/gpuvm.conf: no such device after waiting 3 s$'
e2e_state_is "$E2E_JQ_VGA | .driver_before" null
e2e_state_is "$E2E_JQ_VGA | .driver_override" gpuvm-hold
e2e_state_is "$E2E_JQ_VGA | .action" unbind
e2e_state_is "$E2E_JQ_VGA | .driver_after" bochs-drm
e2e_state_match '.errors[]' '^config: LABEL=gpuvm-conf:/etc/gpuvm/gpuvm.conf: no such device after waiting 3 s; using the kernel command line and the defaults$'
e2e_state_is .boot.decided true
e2e_expect '^@dmesg .*gpuvm: config=LABEL=gpuvm-conf: not there yet; 1 GPU held, waiting up to 3 s for it'
e2e_expect '^@dmesg .*gpuvm: container: 1 GPU in place for the host driver, 0 failed'
