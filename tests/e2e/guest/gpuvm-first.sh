#!/bin/sh
# An /init.d hook of gpuvm's busybox image (--add "$E2E_GUEST/gpuvm-first.sh:/init.d/40-gpuvm-first.sh"):
# with root= on the boot line it runs after `gpuvm apply --defer` and before init's last call
# (`gpuvm apply --resume --sysroot /newroot`), so it sees what the first call alone did. Facts
# first.vga.driver, first.vga.override, first.run_gpuvm (the names in /run/gpuvm); the
# boot.json of that moment between "@first-begin" and "@first-end" as "@first LINE" (lib.sh's
# e2e_firstjson).
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor"):$(cat "$d/device")" = 0x1234:0x1111 ] || continue
	if [ -e "$d/driver" ]; then drv=$(basename "$(readlink "$d/driver")"); else drv=none; fi
	echo "@e2e first.vga.driver=$drv"
	echo "@e2e first.vga.override=$(cat "$d/driver_override")"
done
names=""
for f in /run/gpuvm/*; do [ -e "$f" ] && names="$names${f##*/} "; done
echo "@e2e first.run_gpuvm=$names"
if [ -f /run/gpuvm/boot.json ]; then
	echo "@first-begin"
	sed 's/^/@first /' /run/gpuvm/boot.json
	echo
	echo "@first-end"
fi
