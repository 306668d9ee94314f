#!/bin/sh
# In the guest of bench/boot.sh, an /init.d hook: after the measured step, what it left.
# Prints "@bench KEY=VALUE" lines that boot.sh reads from the console:
#   step      the step this boot measured (bench.step= on the kernel command line)
#   driver    the driver of the stand-in GPU (1234:1111), "none" when unbound
#   modules   the modules loaded (/proc/modules), sorted
#   elapsed_us  gpuvm's own elapsed_us from /run/gpuvm/state.json ("-" without one)
#   kmsg      the kernel log from the "gpuvm-bench: begin" marker to the "end" one, a line
#             each, with its printk time: "@bench kmsg=SECONDS TEXT"
# and last "@bench end". Then init powers the VM off (no root=).
dmesg -n 1 2>/dev/null
step=''
read -r cmdline </proc/cmdline
for a in $cmdline; do
	case $a in bench.step=*) step=${a#*=} ;; esac
done
echo "@bench step=$step"
drv=none
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor"):$(cat "$d/device")" = 0x1234:0x1111 ] || continue
	[ -e "$d/driver" ] && drv=$(basename "$(readlink "$d/driver")")
	echo "@bench device=${d##*/}"
done
echo "@bench driver=$drv"
echo "@bench modules=$(cut -d' ' -f1 /proc/modules | sort | tr '\n' ' ' | sed 's/ $//')"
us=-
if [ -f /run/gpuvm/state.json ]; then
	us=$(sed -n 's/.*"elapsed_us": *\([0-9]*\).*/\1/p' /run/gpuvm/state.json | head -n 1)
fi
echo "@bench elapsed_us=${us:--}"
dmesg | sed -n 's/^[^[]*\[ *\([0-9]*\.[0-9]*\)\] \(.*\)$/\1 \2/p' |
	sed -n '/^[0-9.]* gpuvm-bench: begin/,/^[0-9.]* gpuvm-bench: end/s/^/@bench kmsg=/p'
echo "@bench end"
