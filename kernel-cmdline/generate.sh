#!/bin/sh
# Write the kernel command line fragments for every mode and CPU vendor from what
# `gpuvm cmdline` prints, so that they never disagree with the binary (a test regenerates
# them and compares). Usage: generate.sh GPUVM OUTDIR
set -eu
gpuvm=$1
out=$2
empty=$(mktemp)
trap 'rm -f "$empty"' EXIT

# label: the IOMMU parameters alone (gpuvm cmdline without --mode), for hosts whose host config
# decides the mode (the label mirror): a gpuvm.mode= on the boot line would override it.
# MODE: that mode pinned on the boot line (gpuvm cmdline --mode MODE).
for mode in label container vm-passthrough vm-vgpu; do
	for cpu in intel amd; do
		dir="$out/$mode-$cpu"
		mkdir -p "$dir"
		if [ "$mode" = label ]; then
			params=$("$gpuvm" --cmdline "" --config "$empty" cmdline --cpu "$cpu" 2>/dev/null)
			what="the IOMMU on $cpu, the mode left to gpuvm.conf (the label)"
		else
			params=$("$gpuvm" --cmdline "" --config "$empty" cmdline --mode "$mode" --cpu "$cpu" 2>/dev/null)
			what="gpuvm $mode on $cpu"
		fi
		# gpuvm's own keys are all the initramfs can still use; the IOMMU ones need the kernel.
		gpuvm_only=$(printf '%s\n' "$params" | tr ' ' '\n' | sed -n 's/^gpuvm\./rd.gpuvm./p' | tr '\n' ' ')
		gpuvm_only=${gpuvm_only% }
		# ... and the kernel's own (the IOMMU's), which only the boot loader can give it.
		kernel_only=$(printf '%s\n' "$params" | tr ' ' '\n' | sed '/^gpuvm\./d; /^$/d' | tr '\n' ' ')
		kernel_only=${kernel_only% }

		printf '%s\n' "$params" >"$dir/cmdline"

		cat >"$dir/grub.cfg" <<CFG
# /etc/default/grub.d/90-gpuvm.cfg: $what.
# Then update-grub (Debian, Ubuntu). Not for RHEL or Fedora: their grub2-mkconfig reads only
# /etc/default/grub, not this folder; use grubby.sh there.
GRUB_CMDLINE_LINUX="\${GRUB_CMDLINE_LINUX} $params"
CFG

		cat >"$dir/grubby.sh" <<SH
#!/bin/sh
# BLS entries (RHEL, Fedora): $what, for every installed kernel.
exec grubby --update-kernel=ALL --args="$params"
SH
		chmod +x "$dir/grubby.sh"

		cat >"$dir/kernel-install.sh" <<SH
#!/bin/sh
# kernel-install and UKIs read the whole command line from /etc/kernel/cmdline: add
# $what to it (once), then run kernel-install add or rebuild the UKI.
set -eu
f=\${1:-/etc/kernel/cmdline}
params='$params'
[ -s "\$f" ] || sed 's/BOOT_IMAGE=[^ ]* *//; s/initrd=[^ ]* *//g' /proc/cmdline >"\$f"
# shellcheck disable=SC2086 # one word per parameter
for p in \$params; do
	grep -qw -- "\$p" "\$f" || sed -i "1s|\\\$| \$p|" "\$f"
done
SH
		chmod +x "$dir/kernel-install.sh"

		# Nothing of gpuvm's to bake into the initramfs when the host config decides.
		[ "$mode" != label ] || continue
		if [ -n "$kernel_only" ]; then
			kernel_note="# The IOMMU's parameters ($kernel_only) are the kernel's: only the boot loader
# can give them (grub.cfg, grubby.sh or kernel-install.sh in this folder)."
		else
			kernel_note="# $mode needs no IOMMU parameter on the kernel's command line."
		fi
		cat >"$dir/dracut.conf" <<CONF
# /etc/dracut.conf.d/90-gpuvm.conf: $what.
# dracut writes $gpuvm_only into the initramfs's /etc/cmdline.d/01-default.conf,
# where gpuvm reads it; run dracut -f after installing this file.
$kernel_note
kernel_cmdline+=" $gpuvm_only "
CONF
	done
done
