# shellcheck shell=sh
# tests/e2e/lib.sh — what an end-to-end scenario is written with. Sourced by run.sh, which
# runs each tests/e2e/scenarios/NAME.sh in a subshell of its own, with E2E_NAME=NAME.
#
# A scenario builds an initramfs (e2e_image), maybe a root disk (e2e_rootfs, e2e_disk), boots
# Debian's kernel with them in QEMU (e2e_boot) and asserts on what the serial console shows
# (e2e_expect, e2e_reject, e2e_fact_is, …). Guest scripts report with lines
#     @e2e KEY=VALUE       a fact (the last one for a KEY counts)
#     @e2e end             the guest's checks ran to their end
#     @dmesg LINE          kernel log lines they chose to show
# Never assert on QEMU's exit status: it exits 0 after a kernel panic too.
#
# Variables: E2E_ROOT (the repo), E2E_OUT (build/e2e), E2E_KDIR, E2E_KVER, E2E_KERNEL (the
# kernel booted: boot/vmlinux-KVER through PVH when there, else the vmlinuz; E2E_BZIMAGE=1;
# build/kernel's, Debian bookworm's, unless a cell picks another with e2e_kernel),
# E2E_BOCHS (the module of the VGA stand-in's own driver in that kernel: bochs, 5.10's
# bochs-drm; E2E_BOCHS_MOD as /proc/modules spells it),
# E2E_GUEST (tests/e2e/guest), E2E_GPUVM (the gpuvm the gpuvm-* scenarios put in their images:
# build/gpuvm unless set), E2E_NAME; after e2e_image E2E_IMG; after e2e_disk E2E_DISK;
# after e2e_boot E2E_LOG, E2E_BOOT_SECS and E2E_BOOT_END (poweroff | panic | timeout | exit).
# E2E_TIMEOUT (default 150) bounds each boot in seconds; E2E_MEM (default 256) is its memory.

E2E_ROOT=${E2E_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
E2E_OUT=${E2E_OUT:-$E2E_ROOT/build/e2e}
E2E_KDIR=${E2E_KDIR:-$E2E_ROOT/build/kernel}
E2E_GUEST=$E2E_ROOT/tests/e2e/guest
E2E_TIMEOUT=${E2E_TIMEOUT:-150}
E2E_MEM=${E2E_MEM:-256}
E2E_GPUVM=${E2E_GPUVM:-$E2E_ROOT/build/gpuvm}
E2E_CMDLINE='console=ttyS0 panic=-1 no_timer_check'
E2E_FAILED=''
E2E_VERDICT=''
if [ -f "$E2E_KDIR/KVER" ]; then
	E2E_KVER=$(cat "$E2E_KDIR/KVER")
	# The ELF kernel boots through QEMU's PVH entry, skipping the bzImage's real-mode setup and
	# its decompressor under TCG: half the boot time. E2E_BZIMAGE=1 boots the vmlinuz itself.
	E2E_KERNEL=$E2E_KDIR/boot/vmlinux-$E2E_KVER
	if [ -n "${E2E_BZIMAGE:-}" ] || [ ! -f "$E2E_KERNEL" ]; then
		E2E_KERNEL=$E2E_KDIR/boot/vmlinuz-$E2E_KVER
	fi
fi

# e2e_bochs: E2E_BOCHS and E2E_BOCHS_MOD for the kernel in E2E_KDIR (bochs-drm until 5.x).
e2e_bochs() {
	E2E_BOCHS=bochs
	if grep -q '/bochs-drm\.ko' "$E2E_KDIR/lib/modules/$E2E_KVER/modules.dep" 2>/dev/null; then
		E2E_BOCHS=bochs-drm
	fi
	# shellcheck disable=SC2034 # for the cells
	E2E_BOCHS_MOD=$(echo "$E2E_BOCHS" | tr - _)
}
[ -z "${E2E_KVER:-}" ] || e2e_bochs

# e2e_kernel RELEASE [ARCH]: boot that Debian release's kernel (bullseye, bookworm, trixie,
# sid: its newest, through the meta-package) instead of build/kernel's; ARCH amd64 (the
# default) or arm64 (arm64-lib.sh's a64_need RELEASE calls it so). scripts/fetch-kernel.sh
# --release fetches it once into build/kernels/RELEASE[-ARCH] (private apt; a lock lets the
# cells of one kernel ask at once). Sets E2E_KDIR, E2E_KVER, E2E_KERNEL, E2E_BOCHS.
e2e_kernel() {
	ek_arch=${2:-amd64}
	ek_dir=$E2E_ROOT/build/kernels/$1
	[ "$ek_arch" = amd64 ] || ek_dir=$ek_dir-$ek_arch
	command -v flock >/dev/null || e2e_skip "no flock (util-linux)"
	mkdir -p "$ek_dir"
	if ! E2E_KVER=$(flock "$ek_dir.lock" "$E2E_ROOT/scripts/fetch-kernel.sh" \
		--release "$1" --arch "$ek_arch" "$ek_dir"); then
		e2e_fail "scripts/fetch-kernel.sh --release $1 --arch $ek_arch failed"
		exit 1
	fi
	E2E_KDIR=$ek_dir/kernel
	E2E_KERNEL=$E2E_KDIR/boot/vmlinux-$E2E_KVER
	if [ -n "${E2E_BZIMAGE:-}" ] || [ ! -f "$E2E_KERNEL" ]; then
		E2E_KERNEL=$E2E_KDIR/boot/vmlinuz-$E2E_KVER
	fi
	e2e_bochs
	e2e_note "kernel: Debian $1 $E2E_KVER ($E2E_KERNEL)"
}

e2e_note() { echo "[$E2E_NAME] $*"; }

# e2e_fail REASON: record a failed check (the first reason is the one reported); go on.
e2e_fail() {
	e2e_note "FAIL: $*"
	[ -n "$E2E_FAILED" ] || E2E_FAILED=$*
	return 1
}

# e2e_skip REASON: the scenario cannot run here (e.g. needs build/gpuvm). Ends the scenario.
e2e_skip() {
	E2E_VERDICT="SKIP ($*)"
	exit 0
}

# e2e_image [--as SUFFIX] [mkimage options…]: build $E2E_OUT/$E2E_NAME[-SUFFIX].img from
# Debian's kernel and set E2E_IMG to it; the options go to scripts/mkimage.sh (--modules,
# --load, --add, --no-gpuvm, --gpuvm, --config, --compress-modules, …).
e2e_image() {
	E2E_IMG=$E2E_OUT/$E2E_NAME.img
	if [ "${1-}" = --as ]; then
		E2E_IMG=$E2E_OUT/$E2E_NAME-$2.img
		shift 2
	fi
	"$E2E_ROOT/scripts/mkimage.sh" --kernel-dir "$E2E_KDIR" --kver "$E2E_KVER" \
		--out "$E2E_IMG" "$@" || { e2e_fail "mkimage failed"; exit 1; }
}

# e2e_rootfs DIR [mkimage options…]: a root file system tree in DIR, made by mkimage.sh (so
# it has busybox, its applets and, with --modules, modules with their indexes; --add puts more
# in, e.g. --add "$E2E_GUEST/gpuvm-check.sh:/etc/e2e-check.sh"), without gpuvm and without /init;
# its /sbin/init is guest/root-init.sh (replace DIR/sbin/init to change that).
e2e_rootfs() {
	dir=$1
	shift
	rm -rf "$dir"
	mkdir -p "$dir"
	if ! "$E2E_ROOT/scripts/mkimage.sh" --kernel-dir "$E2E_KDIR" --kver "$E2E_KVER" \
		--no-gpuvm --compress none --out "$dir.cpio" "$@" ||
		! (cd "$dir" && cpio -id --quiet <"$dir.cpio"); then
		e2e_fail "cannot make the root file system in $dir"
		exit 1
	fi
	rm -f "$dir.cpio" "$dir/init" "$dir/sbin/init"
	cp "$E2E_GUEST/root-init.sh" "$dir/sbin/init"
	chmod 0755 "$dir/sbin/init"
}

# e2e_disk DIR [LABEL [SIZE]]: an ext4 image of DIR (mkfs.ext4 -d; no root privileges
# needed) in $E2E_OUT/$E2E_NAME.disk; sets E2E_DISK. QEMU opens it with snapshot=on.
e2e_disk() {
	E2E_DISK=$E2E_OUT/$E2E_NAME.disk
	rm -f "$E2E_DISK"
	truncate -s "${3:-32M}" "$E2E_DISK"
	mkfs.ext4 -q -F -L "${2:-e2e-root}" -d "$1" "$E2E_DISK" ||
		{ e2e_fail "mkfs.ext4 -d $1 failed"; exit 1; }
}

# e2e_boot [--iommu intel|amd|none] [--gpu vga|virtio]… [--disk FILE] [--append "ARGS"]
#          [--log SUFFIX] [--timeout S] [-- QEMU ARGS…]
# Boot $E2E_KERNEL with $E2E_IMG under TCG; the IOMMU comes before the other devices (it must;
# the AMD one takes 00:01.0 and moves the rest), then the stand-in GPUs in the order given,
# then the disk on virtio-blk, then the QEMU ARGS. The kernel command line is
# "console=ttyS0 panic=-1 no_timer_check ARGS" (no_timer_check: under TCG on a busy host the
# kernel's IO-APIC timer check can miss its ticks and, with interrupt remapping on, panic:
# "timer doesn't work through Interrupt-remapped IO-APIC", seen about once in 8 AMD boots).
# The console goes to $E2E_OUT/$E2E_NAME[-SUFFIX].log (CRs and ESC[K removed).
e2e_boot() {
	iommu=intel gpus='' disk='' append='' suffix='' tmo=$E2E_TIMEOUT
	while [ $# -gt 0 ]; do
		case $1 in
		--iommu) iommu=$2; shift 2 ;;
		--gpu) gpus="$gpus $2"; shift 2 ;;
		--disk) disk=$2; shift 2 ;;
		--append) append=$2; shift 2 ;;
		--log) suffix=-$2; shift 2 ;;
		--timeout) tmo=$2; shift 2 ;;
		--) shift; break ;;
		*) e2e_fail "e2e_boot: unknown option $1"; exit 1 ;;
		esac
	done
	nextra=$# # the extra QEMU arguments go last: rotated to the end below
	set -- "$@" -machine q35,kernel-irqchip=split -accel tcg -m "$E2E_MEM" -nodefaults \
		-vga none -display none -serial stdio -monitor none -no-reboot
	case $iommu in
	intel) set -- "$@" -device intel-iommu,intremap=on ;;
	amd) set -- "$@" -device amd-iommu ;;
	none) ;;
	*) e2e_fail "e2e_boot: --iommu $iommu"; exit 1 ;;
	esac
	for g in $gpus; do
		case $g in
		vga) set -- "$@" -device VGA ;; # 1234:1111, class 0x030000, driver bochs-drm
		virtio) set -- "$@" -device virtio-gpu-pci ;; # 1af4:1050, driver virtio-pci
		*) e2e_fail "e2e_boot: --gpu $g"; exit 1 ;;
		esac
	done
	if [ -n "$disk" ]; then
		set -- "$@" -drive "file=$disk,format=raw,if=none,id=root,snapshot=on" \
			-device virtio-blk-pci,drive=root
	fi
	while [ "$nextra" -gt 0 ]; do
		set -- "$@" "$1"
		shift
		nextra=$((nextra - 1))
	done
	e2e_qemu qemu-system-x86_64 "$E2E_CMDLINE $append" "$suffix" "$tmo" "$@"
}

# e2e_untangle: the console on stdin with each line whole. The kernel writes its messages
# to the serial port as they come, between two bytes of a line an init or a script has under
# way: "gpuvm-init: ... goes on[    1.95] tsc: ...", the line's rest after the kernel's. A
# kernel message found inside a line (past the "@dmesg " of the guest's copies of the log)
# goes on a line of its own, and the line it cut is put back together from the next line
# that is not the kernel's.
e2e_untangle() {
	awk '
	function cut(s, from) {
		if (!match(substr(s, from), /\[ *[0-9]+\.[0-9]+\] /))
			return 0
		return RSTART + from - 1
	}
	/^\[ *[0-9]+\.[0-9]+\] / { print; next }
	{
		line = head $0
		head = ""
		at = cut(line, line ~ /^@dmesg \[/ ? 9 : 2)
		if (at) {
			print substr(line, at)
			head = substr(line, 1, at - 1)
		} else
			print line
	}
	END { if (head != "") print head }'
}

# e2e_qemu QEMU CMDLINE SUFFIX TIMEOUT ARGS…: boot $E2E_KERNEL with $E2E_IMG on QEMU (the
# binary) with ARGS and the kernel command line CMDLINE, bounded by TIMEOUT seconds; the
# console (CRs removed) to $E2E_OUT/$E2E_NAME$SUFFIX.log. Sets E2E_LOG, E2E_BOOT_SECS and
# E2E_BOOT_END (poweroff, panic, timeout or exit) and records the boot time. e2e_boot and
# arm64-lib.sh's a64_boot end here.
e2e_qemu() {
	qemu=$1 cmdline=$2 suffix=$3 tmo=$4
	shift 4
	E2E_LOG=$E2E_OUT/$E2E_NAME$suffix.log
	e2e_note "boot: $qemu $* -kernel $E2E_KERNEL -initrd $E2E_IMG -append '$cmdline'"
	t0=$(date +%s.%N)
	timeout -k 10 "$tmo" "$qemu" "$@" -kernel "$E2E_KERNEL" -initrd "$E2E_IMG" \
		-append "$cmdline" </dev/null >"$E2E_LOG.raw" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	# systemd 257 and later begin some console lines with ESC[K (erase the line): gone too.
	tr -d '\r' <"$E2E_LOG.raw" | sed 's/\x1b\[K//g' | e2e_untangle >"$E2E_LOG"
	rm -f "$E2E_LOG.raw"
	E2E_BOOT_SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		E2E_BOOT_END=timeout
	elif grep -q 'Kernel panic' "$E2E_LOG"; then
		E2E_BOOT_END=panic
	elif grep -q 'reboot: Power down' "$E2E_LOG"; then
		E2E_BOOT_END=poweroff
	else
		E2E_BOOT_END='exit'
	fi
	echo "$E2E_NAME$suffix $E2E_BOOT_SECS" >>"$E2E_OUT/$E2E_NAME.times"
	e2e_note "boot ended ($E2E_BOOT_END) after $E2E_BOOT_SECS s; log $E2E_LOG"
	e2e_apply_time "$E2E_NAME$suffix"
	return 0
}

# e2e_apply_time NAME: when the console shows a state file, append "NAME ELAPSED_US PHASE_US"
# to $E2E_OUT/$E2E_NAME.apply: gpuvm apply's own elapsed_us, and the initramfs phase it was
# part of, from the kernel's "Run /init as init process" to the start of the guest's check
# (its "@e2e uptime=", guest/gpuvm-check.sh); "-" when either end is not on the console.
# run.sh prints them with the boot times.
e2e_apply_time() {
	us=$(e2e_state .elapsed_us 2>/dev/null) || return 0
	case $us in '' | *[!0-9]*) return 0 ;; esac
	start=$(sed -n 's/^\[ *\([0-9.]*\)\] Run .* as init process.*/\1/p' "$E2E_LOG" | head -n 1)
	end=$(e2e_fact uptime) || end=''
	phase=$(awk -v a="$start" -v b="$end" 'BEGIN {
		if (a == "" || b == "" || b <= a) print "-"; else printf "%d", (b - a) * 1e6 }')
	echo "$1 $us $phase" >>"$E2E_OUT/$E2E_NAME.apply"
}

# e2e_boot_end WANT: the last boot ended as WANT (poweroff | panic | timeout | exit).
e2e_boot_end() {
	[ "$E2E_BOOT_END" = "$1" ] && return 0
	why=$E2E_BOOT_END
	case $E2E_BOOT_END in
	timeout) why="timed out" ;;
	panic) why="kernel panic: $(grep -m1 -o 'Kernel panic.*' "$E2E_LOG")" ;;
	esac
	e2e_fail "boot did not end in $1 but: $why"
}

# e2e_expect ERE [WHAT] / e2e_reject ERE [WHAT]: the console log of the last boot has / has
# no line matching ERE.
e2e_expect() {
	grep -Eq -- "$1" "$E2E_LOG" || e2e_fail "${2:-no line matching /$1/}"
}
e2e_reject() {
	if line=$(grep -E -m1 -- "$1" "$E2E_LOG"); then
		e2e_fail "${2:-unwanted line}: $line"
	fi
}

# e2e_fact KEY: the value of the last "@e2e KEY=VALUE" line; status 1 when there is none.
e2e_fact() {
	grep -q "^@e2e $1=" "$E2E_LOG" || return 1
	sed -n "s/^@e2e $1=//p" "$E2E_LOG" | tail -n 1
}

# e2e_fact_is KEY VALUE / e2e_fact_match KEY ERE: check a fact.
e2e_fact_is() {
	v=$(e2e_fact "$1") || { e2e_fail "no fact $1 (@e2e end: $(e2e_ended))"; return 1; }
	[ "$v" = "$2" ] || e2e_fail "$1 is '$v', expected '$2'"
}
e2e_fact_match() {
	v=$(e2e_fact "$1") || { e2e_fail "no fact $1 (@e2e end: $(e2e_ended))"; return 1; }
	printf '%s\n' "$v" | grep -Eq -- "$2" || e2e_fail "$1 is '$v', expected /$2/"
}
e2e_ended() {
	if grep -q '^@e2e end$' "$E2E_LOG"; then echo yes; else echo "no, boot: $E2E_BOOT_END"; fi
}

# e2e_need_gpuvm: skip the scenario when there is no gpuvm to test ($E2E_GPUVM: build/gpuvm,
# or another binary named in the environment); scenarios pass it as mkimage's --gpuvm.
e2e_need_gpuvm() {
	[ -x "$E2E_GPUVM" ] || e2e_skip "no $E2E_GPUVM (run make)"
}

# e2e_state [JQ]: the last state file the guest printed (guest/gpuvm-check.sh prints
# /run/gpuvm/state.json as "@state LINE" lines between "@state-begin" and "@state-end"),
# through `jq -r JQ` (default .); status 1 when the console has none or it is not JSON.
# E2E_JQ_VGA and E2E_JQ_VIRTIO select a stand-in's entry in devices[], e.g.
#     e2e_state_is "$E2E_JQ_VGA | .driver_after" vfio-pci
e2e_state() {
	awk '/^@state-begin$/ { buf = ""; on = 1; next }
		/^@state-end$/ { on = 0; last = buf; got = 1; next }
		on && /^@state / { buf = buf substr($0, 8) "\n" }
		END { if (!got) exit 1; printf "%s", last }' "$E2E_LOG" >"$E2E_LOG.state" || return 1
	jq -r "${1:-.}" "$E2E_LOG.state" 2>&1
}
# e2e_bootjson [JQ]: the same for the last /run/gpuvm/boot.json the guest printed ("@boot
# LINE" lines between "@boot-begin" and "@boot-end": guest/gpuvm-check.sh, dracut-check.sh
# after the state file); e2e_firstjson [JQ] the one an /init.d hook printed before init's
# last gpuvm call ("@first" lines: guest/gpuvm-first.sh). The document is also kept in
# $E2E_OUT/NAME[-SUFFIX].boot.json (.first.json): a real boot's boot.json, for other tests.
e2e_bootjson() { e2e_json boot "${1:-.}"; }
e2e_firstjson() { e2e_json first "${1:-.}"; }
e2e_json() {
	ej_file=${E2E_LOG%.log}.$1.json
	[ "$1" != boot ] || ej_file=${E2E_LOG%.log}.boot.json
	awk -v t="$1" '$0 == "@" t "-begin" { buf = ""; on = 1; next }
		$0 == "@" t "-end" { on = 0; last = buf; got = 1; next }
		on && index($0, "@" t " ") == 1 { l = substr($0, length(t) + 3)
			# a kernel message the console put inside the line, before its newline
			sub(/\[ *[0-9]+\.[0-9]+\] .*$/, "", l); buf = buf l "\n" }
		END { if (!got) exit 1; printf "%s", last }' "$E2E_LOG" >"$ej_file" || return 1
	jq -r "$2" "$ej_file" 2>&1
}
# e2e_bootjson_is JQ VALUE / e2e_firstjson_is JQ VALUE: as e2e_state_is.
e2e_bootjson_is() { e2e_json_is boot "$@"; }
e2e_firstjson_is() { e2e_json_is first "$@"; }
e2e_json_is() {
	v=$(e2e_json "$1" "$2") || { e2e_fail "no $1 json on the console, or not JSON: $v"; return 1; }
	v=$(printf '%s\n' "$v" | tr '\n' ' ' | sed 's/ $//')
	[ "$v" = "$3" ] || e2e_fail "$1.json: $2 is '$v', expected '$3'"
}

# shellcheck disable=SC2034 # for the scenarios
E2E_JQ_VGA='.devices[] | select(.vendor == "1234" and .device == "1111")'
# shellcheck disable=SC2034
E2E_JQ_VIRTIO='.devices[] | select(.vendor == "1af4" and .device == "1050")'

# e2e_state_is JQ VALUE: what the state file says (the lines jq prints, joined by blanks) is
# VALUE. e2e_state_match JQ ERE: one of the lines jq prints matches ERE, e.g.
#     e2e_state_match '.errors[]' 'IOMMU is not active'
e2e_state_is() {
	v=$(e2e_state "$1") || { e2e_fail "no state file on the console, or not JSON: $v"; return 1; }
	v=$(printf '%s\n' "$v" | tr '\n' ' ' | sed 's/ $//')
	[ "$v" = "$2" ] || e2e_fail "state: $1 is '$v', expected '$2'"
}
e2e_state_match() {
	v=$(e2e_state "$1") || { e2e_fail "no state file on the console, or not JSON: $v"; return 1; }
	printf '%s\n' "$v" | grep -Eq -- "$2" ||
		e2e_fail "state: $1 is '$(printf '%s\n' "$v" | tr '\n' ' ' | sed 's/ $//')', expected /$2/"
}

# e2e_builtin MODULE: the kernel booted has MODULE built in (its modules.builtin; virtio_pci
# is from 6.12).
e2e_builtin() {
	grep -q "/$(echo "$1" | tr - _)\.ko\$" "$E2E_KDIR/lib/modules/$E2E_KVER/modules.builtin" 2>/dev/null
}

# e2e_loaded MODULE…: each is in the guest's /proc/modules (the fact "modules") or built in.
e2e_loaded() {
	for el_m; do
		e2e_builtin "$el_m" || e2e_fact_match modules "(^| )$(echo "$el_m" | tr - _)( |\$)"
	done
}

# e2e_vfio_nodes STANDIN JQ: what the kernel version changes, for a stand-in (vga, virtio)
# on vfio-pci: the state file's entry (JQ, e.g. "$E2E_JQ_VGA") names its group's char device
# /dev/vfio/GROUP, which the guest found (guest/gpuvm-check.sh: STANDIN.group, .vfio_node),
# and its vfio cdev /dev/vfio/devices/vfioN where the kernel has one (CONFIG_VFIO_DEVICE_CDEV
# in the kernel's config: the guest found vfio-dev/vfioN/dev and the node), else null; the
# vfio device itself (vfio-dev/vfioN) is there from 6.1, none in 5.x.
e2e_vfio_nodes() {
	evn_group=$(e2e_fact "$1.group") || evn_group=''
	e2e_fact_is "$1.vfio_node" yes
	e2e_state_is "$2 | .vfio_group" "/dev/vfio/$evn_group"
	case $E2E_KVER in
	[1-5].*) e2e_fact_is "$1.vfio_dev" none ;;
	*) e2e_fact_match "$1.vfio_dev" '^vfio[0-9]+$' ;;
	esac
	[ -f "$E2E_KDIR/boot/config-$E2E_KVER" ] ||
		e2e_fail "no config of the kernel $E2E_KVER: cannot tell whether it has the vfio cdev"
	if grep -q '^CONFIG_VFIO_DEVICE_CDEV=y' "$E2E_KDIR/boot/config-$E2E_KVER"; then
		e2e_fact_match "$1.cdev" '^/dev/vfio/devices/vfio[0-9]+$'
		e2e_state_is "$2 | .vfio_cdev" "$(e2e_fact "$1.cdev")"
	else
		e2e_fact_is "$1.cdev" none
		e2e_state_is "$2 | .vfio_cdev" null
	fi
}

# e2e_dump_replay [JQ]: the guest's dump (guest/gpuvm-dump.sh: gpuvm dump and the guest's
# own plan in each mode, a gzipped tar in base64 on the console) replayed here: unpacked into
# $E2E_OUT/$E2E_NAME.dump/ (dump.tar, plan-MODE.json, root/: the dump unpacked), then
# build/gpuvm --root root plan --mode MODE --json must print what the guest printed, and exit
# as it did, in each mode (x86_64's gpuvm for an arm64 guest too: a dump is a tree of files).
# JQ, when given, must hold on the guest's vm-passthrough plan (jq -e), e.g. a group that is
# not viable. The dump's size and the guest's time for it go to the scenario's output.
e2e_dump_replay() {
	edr_dir=$E2E_OUT/$E2E_NAME.dump
	edr_gpuvm=$E2E_ROOT/build/gpuvm
	rm -rf "$edr_dir"
	mkdir -p "$edr_dir/root"
	e2e_fact_is dump_rc 0 || return 1
	awk '/^@dump-begin$/ { buf = ""; on = 1; next }
		/^@dump-end$/ { on = 0; last = buf; got = 1; next }
		on && /^@dump / { l = substr($0, 7); sub(/\[ *[0-9]+\.[0-9]+\] .*$/, "", l)
			buf = buf l "\n" }
		END { if (!got) exit 1; printf "%s", last }' "$E2E_LOG" | base64 -d >"$edr_dir.tgz" ||
		{ e2e_fail "no dump on the console, or not base64"; return 1; }
	[ "$(sha256sum <"$edr_dir.tgz" | cut -d' ' -f1)" = "$(e2e_fact dump_sha256)" ] ||
		{ e2e_fail "the dump on the console is not what the guest sent (sha256)"; return 1; }
	if ! tar -xzf "$edr_dir.tgz" -C "$edr_dir" || ! tar -xf "$edr_dir/dump.tar" -C "$edr_dir/root"; then
		e2e_fail "cannot unpack the guest's dump"
		return 1
	fi
	rm -f "$edr_dir.tgz"
	for edr_m in container vm-passthrough vm-vgpu; do
		"$edr_gpuvm" --root "$edr_dir/root" plan --mode "$edr_m" --json \
			>"$edr_dir/replay-$edr_m.json" 2>"$edr_dir/replay-$edr_m.err"
		edr_rc=$?
		e2e_fact_is "plan_rc_$edr_m" "$edr_rc"
		if ! jq -S . "$edr_dir/plan-$edr_m.json" >"$edr_dir/a.json" ||
			! jq -S . "$edr_dir/replay-$edr_m.json" >"$edr_dir/b.json" ||
			! cmp -s "$edr_dir/a.json" "$edr_dir/b.json"; then
			e2e_note "dump, $edr_m: the guest's plan (<) and the replay (>):"
			diff "$edr_dir/a.json" "$edr_dir/b.json" | head -n 20
			e2e_fail "the replay of the guest's dump plans otherwise in $edr_m"
		fi
	done
	rm -f "$edr_dir/a.json" "$edr_dir/b.json"
	if [ -n "${1-}" ] && ! jq -e "$1" "$edr_dir/plan-vm-passthrough.json" >/dev/null; then
		e2e_fail "the guest's vm-passthrough plan does not hold $1"
	fi
	e2e_note "dump: $(e2e_fact dump_bytes) bytes, $(e2e_fact dump_secs) s in the guest, replayed in $edr_dir"
}

# e2e_dra_replay KEY SELECTION MODE: after e2e_dump_replay, gpuvm-dra runs here on the
# guest's dump with what the guest sent beside it (its pinned records and /dev/vfio listing:
# tests/dra/replay.sh), a claim allocated for the stand-in the facts KEY.device and KEY.group
# name, the kubelet stand-in's NodePrepareResources: the CDI spec must name the guest's
# /dev/vfio/GROUP (and /dev/vfio/vfio), the device metadata's pciBusID must be its address,
# and the ResourceSlice's device must say vfio.gpuvm.dev/pinnedBy SELECTION and mode MODE
# (the guest's record). Without build/gpuvm-dra or Debian's grpcio it is said and not run,
# except under CI=true (make test), where that fails.
e2e_dra_replay() {
	edr_dir=$E2E_OUT/$E2E_NAME.dump
	if [ ! -x "$E2E_ROOT/build/gpuvm-dra" ] || ! /usr/bin/python3 -c 'import grpc, grpc_tools' 2>/dev/null; then
		if [ "${CI-}" = true ]; then
			e2e_fail "the DRA replay needs build/gpuvm-dra and python3-grpcio, python3-grpc-tools"
		else
			e2e_note "DRA replay not run: no build/gpuvm-dra, or no python3-grpcio and python3-grpc-tools"
		fi
		return 0
	fi
	if ! edr_addr=$(e2e_fact "$1.device") || ! edr_group=$(e2e_fact "$1.group"); then
		e2e_fail "DRA replay: no fact $1.device or $1.group"
		return 1
	fi
	grep -qx "vfio/$edr_group" "$edr_dir/dev-vfio.txt" 2>/dev/null ||
		{ e2e_fail "DRA replay: the guest's /dev/vfio listing has no vfio/$edr_group"; return 1; }
	if ! "$E2E_ROOT/tests/dra/replay.sh" "$edr_dir" "$edr_addr" >"$E2E_OUT/$E2E_NAME.dra.out" 2>&1; then
		tail -n 20 "$E2E_OUT/$E2E_NAME.dra.out"
		e2e_fail "DRA replay: $(tail -n 1 "$E2E_OUT/$E2E_NAME.dra.out")"
		return 1
	fi
	edr_got=$(jq -r '[.devices[0].containerEdits.deviceNodes[].hostPath] | join(" ")' "$edr_dir/dra/cdi.json")
	[ "$edr_got" = "/dev/vfio/$edr_group /dev/vfio/vfio" ] ||
		e2e_fail "DRA replay: the CDI spec's nodes are '$edr_got', expected /dev/vfio/$edr_group /dev/vfio/vfio"
	edr_got=$(jq -rs '[.[].requests[0].devices[0].attributes."resource.kubernetes.io/pciBusID".string] | unique | join(" ")' \
		"$edr_dir/dra/metadata.json")
	[ "$edr_got" = "$edr_addr" ] ||
		e2e_fail "DRA replay: the metadata's pciBusID is '$edr_got', expected $edr_addr"
	edr_got=$(jq -r '[.items[].spec.devices[] | "\(.name) \(.attributes."vfio.gpuvm.dev/pinnedBy".string) \(.attributes."vfio.gpuvm.dev/mode".string)"] | join(",")' \
		"$edr_dir/dra/slices.json")
	[ "$edr_got" = "gpu-$(printf '%s' "$edr_addr" | tr ':.' '--') $2 $3" ] ||
		e2e_fail "DRA replay: the slice's devices are '$edr_got', expected the stand-in pinned by $2 in $3"
	e2e_note "DRA replay: prepared gpu-$(printf '%s' "$edr_addr" | tr ':.' '--'): /dev/vfio/$edr_group, pciBusID $edr_addr ($edr_dir/dra)"
}

# e2e_guest_done: the guest's checks ran to "@e2e end" and the VM powered off.
e2e_guest_done() {
	grep -q '^@e2e end$' "$E2E_LOG" || {
		e2e_boot_end poweroff
		e2e_fail "the guest checks did not reach '@e2e end'"
		return 1
	}
	e2e_boot_end poweroff
}

# e2e_finish: the scenario's exit trap (run.sh sets it): writes $E2E_OUT/$E2E_NAME.result,
# one line: PASS, FAIL (reason) or SKIP (reason).
e2e_finish() {
	rc=$?
	if [ -z "$E2E_VERDICT" ]; then
		if [ -n "$E2E_FAILED" ]; then
			E2E_VERDICT="FAIL ($E2E_FAILED)"
		elif [ "$rc" -ne 0 ]; then
			E2E_VERDICT="FAIL (scenario exited with status $rc)"
		else
			E2E_VERDICT=PASS
		fi
	fi
	echo "$E2E_VERDICT" >"$E2E_OUT/$E2E_NAME.result"
}
