# shellcheck shell=sh
# config= in dracut images: the host config on a disk whose driver udev brings. No config in
# the image; rd.gpuvm.config=LABEL=gpuvm-conf rd.gpuvm.ids=1234:1111 on the kernel command line.
#   shell    dracut's shell init, the disk there (ext4: mode=vm-passthrough, ids=1234:1111).
#            At pre-udev the disk's driver is not loaded: gpuvm holds the stand-in
#            (gpuvm-hold, no driver: the pre-udev facts) and exits 5; the hook queues
#            gpuvm-resume.sh in dracut's initqueue and a finished hook. udev's coldplug loads
#            bochs, virtio_pci, virtio_blk; bochs does not take the held stand-in; the job
#            finds the disk, reads the config, binds the stand-in to vfio-pci, and the main
#            loop ends.
#   auto     built in container mode with the config= on the boot line, gpuvm included by
#            check() alone (always, while it is installed): the disk's vm-passthrough binds
#            the stand-in.
#   systemd  a systemd initramfs, no disk, rd.gpuvm.config_timeout=3: the same hold, the job
#            in dracut-initqueue.service, and after 3 s the fallback (container, the default):
#            released, bochs takes the stand-in; no unit failed.
# shellcheck source=tests/e2e/dracut-lib.sh
. "$E2E_ROOT/tests/e2e/dracut-lib.sh"
# shellcheck source=tests/e2e/confdisk-lib.sh
. "$E2E_ROOT/tests/e2e/confdisk-lib.sh"
dracut_need
args="rd.gpuvm.config=LABEL=gpuvm-conf rd.gpuvm.ids=1234:1111"

confdisk_conf 'mode=vm-passthrough\nids=1234:1111\n'
confdisk_ext4 "$E2E_OUT/$E2E_NAME.conf.disk" gpuvm-conf "$CONFDISK_CONF"
confdisk_args "$E2E_OUT/$E2E_NAME.conf.disk"
dracut_image --as shell -m "base gpuvm e2e" --add-drivers "bochs virtio_pci virtio_blk"
# shellcheck disable=SC2086 # QEMU arguments
e2e_boot --log shell --iommu intel --gpu vga --append "$args" -- $CONFDISK_ARGS
e2e_guest_done
e2e_fact_is init shell
e2e_fact_is pre_udev.vga.driver none
dracut_held_then_read

# An image built while the host was in container mode. gpuvm is neither asked for (-m, -a) nor
# left out: every module but those the image above took (gpuvm aside) is omitted, and
# module-setup.sh's check() includes gpuvm because it is installed (the test module e2e,
# whose check() says 255, is asked for). The image carries no config: config= and ids= are
# on the boot line; the disk's config says vm-passthrough: the stand-in is bound.
incl=" $(sed -n 's/.*\*\*\* Including module: \([^ ]*\) \*\*\*.*/\1/p' "$E2E_IMG.dracut.log" | tr '\n' ' ') "
case $incl in *" base "*) ;; *) e2e_fail "no 'Including module' lines in $E2E_IMG.dracut.log" ;; esac
omit=$(for m in "$E2E_DRACUT_BASE"/modules.d/[0-9][0-9]*; do
	m=${m##*/} && m=${m#[0-9][0-9]}
	case "$incl" in *" $m "*) [ "$m" != gpuvm ] && continue ;; esac
	[ "$m" = gpuvm ] || printf '%s ' "$m"
done)
printf '# built in container mode\nmode=container\n' >"$E2E_DRACUT/container.conf"
GPUVM_CONFIG=$E2E_DRACUT/container.conf dracut_image --as auto -o "$omit" -a e2e \
	--add-drivers "bochs virtio_pci virtio_blk"
grep -q 'Including module: gpuvm ' "$E2E_IMG.dracut.log" ||
	e2e_fail "check() did not include gpuvm in an image built in container mode"
# shellcheck disable=SC2086 # QEMU arguments
e2e_boot --log auto --iommu intel --gpu vga --append "$args" -- $CONFDISK_ARGS
e2e_guest_done
e2e_fact_is pre_udev.vga.override gpuvm-hold
e2e_fact_is vga.driver vfio-pci
e2e_state_is .result ok
e2e_state_is .mode vm-passthrough
e2e_state_is .config_disk.status disk
e2e_state_is .mode_source LABEL=gpuvm-conf:/etc/gpuvm/gpuvm.conf:1
e2e_reject 'Warning: gpuvm:' 'the gpuvm hooks warned'

if [ -x /usr/lib/systemd/systemd ] || [ -x /lib/systemd/systemd ]; then
	dracut_image --as systemd -m "dracut-systemd base gpuvm e2e" --add-drivers "bochs virtio_pci virtio_blk"
	e2e_boot --log systemd --iommu intel --gpu vga \
		--append "$args rd.gpuvm.config_timeout=3 systemd.log_target=kmsg"
	e2e_guest_done
	e2e_fact_is init systemd
	e2e_fact_is pre_udev.vga.override gpuvm-hold
	e2e_fact_is bochs yes
	e2e_fact_is vga.driver bochs-drm
	e2e_fact_is vga.override '(null)'
	e2e_fact_is failed_units ''
	e2e_state_is .mode container
	e2e_state_is .config_disk.status fallback
	e2e_state_match .config_disk.reason 'no such device after waiting 3 s$'
	e2e_state_is "$E2E_JQ_VGA | .driver_after" bochs-drm
	e2e_reject 'Warning: gpuvm:' 'the gpuvm hooks warned'
else
	e2e_note "no systemd on this host: the systemd half is left out"
fi
