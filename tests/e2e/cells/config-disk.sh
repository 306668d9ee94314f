# shellcheck shell=sh
# The host config on a disk, the standalone image. The kernel command line says only
# where the real one is and which devices are GPUs here (gpuvm.config=LABEL=gpuvm-conf
# gpuvm.ids=1234:1111: an NVIDIA GPU needs no ids=, the default match selects it); the image
# has no config (one in the image is never read at boot). The disk (virtio-blk, ext4,
# /etc/gpuvm/gpuvm.conf: mode=vm-passthrough, ids=1234:1111) needs virtio_pci and virtio_blk,
# which init loads after gpuvm's first run (/etc/modules-load), with bochs, the stand-in's own
# driver. So: `gpuvm apply --defer` finds no disk, holds the stand-in (driver_override
# gpuvm-hold) and exits 5; bochs loads and does not take it; `gpuvm apply --resume` finds the
# disk, loads ext4 itself (in the image, not loaded by init), mounts it read-only on
# /run/gpuvm/disk.*, reads the file, unmounts, binds the stand-in to vfio-pci.
# $E2E_ARGS (tests/e2e/matrix): nothing, or a Debian release whose kernel boots (the kernel
# kernel matrix: the wait on the oldest and the newest kernel; lib.sh's e2e_kernel).
# shellcheck source=tests/e2e/confdisk-lib.sh
. "$E2E_ROOT/tests/e2e/confdisk-lib.sh"
e2e_need_gpuvm
[ -z "$E2E_ARGS" ] || e2e_kernel "$E2E_ARGS"
confdisk_conf 'mode=vm-passthrough\nids=1234:1111\n'
confdisk_ext4 "$E2E_OUT/$E2E_NAME.conf.disk" gpuvm-conf "$CONFDISK_CONF"
confdisk_args "$E2E_OUT/$E2E_NAME.conf.disk"
e2e_image --gpuvm "$E2E_GPUVM" --load "virtio_pci virtio_blk $E2E_BOCHS" --modules ext4 \
	--add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
# shellcheck disable=SC2086 # QEMU arguments
e2e_boot --iommu intel --gpu vga --append "gpuvm.config=LABEL=gpuvm-conf gpuvm.ids=1234:1111" \
	-- $CONFDISK_ARGS
e2e_guest_done
e2e_fact_is vga.driver vfio-pci
e2e_fact_is vga.override vfio-pci
e2e_fact_is vga.vfio_node yes
e2e_fact_match modules "(^| )$E2E_BOCHS_MOD( |\$)"
e2e_fact_match modules '(^| )ext4( |$)'
e2e_fact_is run_gpuvm 'boot.json metrics pinned state.json '
e2e_fact_is gpuvm_mounts ''
e2e_state_is .result ok
e2e_state_is .mode vm-passthrough
e2e_state_is .mode_source LABEL=gpuvm-conf:/etc/gpuvm/gpuvm.conf:1
e2e_state_is .settings.ids.source cmdline
e2e_state_is .config_disk.status disk
e2e_state_is .config_disk.device /dev/vda
e2e_state_is .config_disk.fstype ext4
# Nothing took the stand-in while gpuvm waited: held (override gpuvm-hold), no driver, when the
# decision came.
e2e_state_is "$E2E_JQ_VGA | .driver_before" null
e2e_state_is "$E2E_JQ_VGA | .driver_override" gpuvm-hold
e2e_state_is "$E2E_JQ_VGA | .driver_after" vfio-pci
e2e_state_is '.errors | length' 0
e2e_state_is .settings.config.source cmdline
e2e_state_is .boot.host_config disk
e2e_state_is .boot.decided true
e2e_expect '^@dmesg .*gpuvm: config=LABEL=gpuvm-conf: not there yet; 1 GPU held, waiting up to 90 s for it'
e2e_expect '^@dmesg .*gpuvm: config: LABEL=gpuvm-conf:/etc/gpuvm/gpuvm.conf is on /dev/vda \(ext4\)'
e2e_expect '^@dmesg .*gpuvm: vm-passthrough: 1 GPU and 0 companion functions on vfio-pci, 0 failed'
e2e_reject '^gpuvm-init: warning' 'init warned'
