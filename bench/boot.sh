#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/boot.sh: the boot ratio. gpuvm's step at boot against the physical
# floor of the boot path, the kernel's own bind at module load, in QEMU (TCG) with Debian's
# kernel (build/kernel: bookworm's current amd64 kernel, the e2e tests' default, fetched by
# scripts/fetch-kernel.sh) and the busybox image of scripts/mkimage.sh. bench/run.sh calls it;
# it also runs alone.
#
# One image for every path: the shipped init, in which the line that runs gpuvm
# (`run_gpuvm apply --defer`) is replaced by the step that bench.step= on the kernel command
# line names, between two kernel log markers written by the shell itself (a builtin echo into
# /dev/kmsg, no process):
#     echo "gpuvm-bench: begin STEP" >/dev/kmsg ; STEP ; echo "gpuvm-bench: end STEP" >/dev/kmsg
#   apply     `run_gpuvm apply --defer`: the image's own gpuvm step, unchanged (busybox
#             timeout as the backstop, then gpuvm, which loads vfio-pci with libkmod and binds)
#             with gpuvm.mode= on the command line: one call
#   hold-decide  the boot's two calls when the mode comes from the host config, as it does
#             without gpuvm.mode= on the line: `run_gpuvm apply --defer` (it holds the stand-in
#             for the mode; a third marker, "held", after it) then `run_gpuvm apply --resume
#             --sysroot /` (the image's own /etc/gpuvm/gpuvm.conf, mode=vm-passthrough, is the
#             host's: no root= here), which loads vfio-pci and binds. The command line of these
#             boots has no gpuvm.mode=; the other paths' has, and it wins over the file
#   modprobe  `modprobe -a vfio_iommu_type1 vfio-pci` with "options vfio-pci ids=1234:1111"
#             in /etc/modprobe.d (written before the begin marker): busybox's modprobe (the
#             image has no kmod); the kernel binds the stand-in when vfio-pci loads, with no
#             userspace after that. vfio_iommu_type1 is named because busybox's modprobe
#             ignores modules.softdep, where vfio asks for it ("post:"), and kmod's modprobe
#             (what vfio-pci.ids= or a modprobe.d line gets at boot) and gpuvm's libkmod load
#             it: both paths must load the same modules (checked in every boot)
#   modprobe-nosoftdep  `modprobe vfio-pci ids=1234:1111`, the command a VFIO guide gives:
#             with busybox's modprobe, the same without vfio_iommu_type1
#   version   `run_gpuvm --version`: the backstop and gpuvm's process start alone
# The time of a step is the difference of the two markers' printk timestamps. The stand-in
# GPU is QEMU's VGA (1234:1111, its own driver bochs is not in the image), the IOMMU Intel's
# (-device intel-iommu), the kernel command line the e2e tests' plus
# "gpuvm.mode=vm-passthrough gpuvm.ids=1234:1111 bench.step=STEP" (hold-decide: without
# gpuvm.mode=); QEMU as the e2e tests run
# it (tests/e2e/lib.sh's e2e_boot). The boots are interleaved (apply modprobe … apply …),
# one at a time. A boot is invalid, and the run fails, when it does not power off, lacks a
# marker, or (apply, modprobe) the stand-in is not on vfio-pci at the end; after --version it
# must be on no driver. bench/boot-check.sh, an /init.d hook, reports that.
#
# Environment:
#   BENCH_BOOTS=N    boots per path (default 7; 3 with BENCH_QUICK=1)
#   BENCH_QUICK=1    fewer boots (as above)
#   BOOT_BIN=FILE    the gpuvm put in the image (default build/gpuvm, built first): an A/B of
#                    a change, e.g. BOOT_BIN=/tmp/gpuvm-old sh bench/boot.sh
#   BOOT_STEPS="…"   the paths measured (default "apply hold-decide modprobe modprobe-nosoftdep
#                    version")
#   BOOT_ICOUNT=N    QEMU -icount shift=N,sleep=off: the guest's clock counts 2^N ns an
#                    instruction and skips idle time, so the steps no longer depend on the
#                    host's load (repeatable to ~0.1 ms; bench/run.sh also runs it with N=1).
#                    Output then in build/bench/boot-icount/
# Output: build/bench/boot/boots.tsv (one line a boot), build/bench/boot/RESULTS-boot.md (the
# section bench/run.sh puts in bench/RESULTS.md; printed at the end). The image is cached in
# build/bench/boot/ for both (rebuilt when gpuvm, init, the hook, mkimage.sh or the kernel change);
# consoles in build/bench/boot/bench-boot-STEP-I.log.
set -eu

if [ -n "${BOOT_BIN:-}" ]; then
	case $BOOT_BIN in /*) ;; *) BOOT_BIN=$(pwd)/$BOOT_BIN ;; esac
fi
cd "$(dirname "$0")/.."
TOP=$(pwd)
OUT=$TOP/build/bench/boot${BOOT_ICOUNT:+-icount}
IMGDIR=$TOP/build/bench/boot
QUICK=${BENCH_QUICK:-}
[ "$QUICK" = 0 ] && QUICK=
if [ -n "${BENCH_BOOTS:-}" ]; then
	BOOTS=$BENCH_BOOTS
elif [ -n "$QUICK" ]; then
	BOOTS=3
else
	BOOTS=7
fi
STEPS=${BOOT_STEPS:-apply hold-decide modprobe modprobe-nosoftdep version}
ICOUNT=''
case ${BOOT_ICOUNT:-} in
'') ;;
*[!0-9]*) echo "boot-bench: BOOT_ICOUNT=$BOOT_ICOUNT: a shift (0-10)" >&2; exit 1 ;;
*) ICOUNT="-icount shift=$BOOT_ICOUNT,sleep=off" ;;
esac
STANDIN=1234:1111

log() { printf 'boot-bench: %s\n' "$*" >&2; }
die() {
	log "$*"
	exit 1
}

case $BOOTS in '' | *[!0-9]* | 0) die "BENCH_BOOTS=$BOOTS: a number of boots, at least 1" ;; esac
for s in $STEPS; do
	case $s in
	apply | hold-decide | modprobe | modprobe-nosoftdep | version) ;;
	*) die "BOOT_STEPS: unknown step $s (apply hold-decide modprobe modprobe-nosoftdep version)" ;;
	esac
done
for t in qemu-system-x86_64 cpio zstd depmod modprobe timeout; do
	command -v "$t" >/dev/null 2>&1 || die "needs $t (scripts/install-packages.sh installs it)"
done
mkdir -p "$OUT"

# --- gpuvm, kernel, image ------------------------------------------------------------------
if [ -z "${BOOT_BIN:-}" ]; then
	make --no-print-directory -s all >&2
	BOOT_BIN=$TOP/build/gpuvm
fi
[ -x "$BOOT_BIN" ] || die "$BOOT_BIN: not an executable"
KVER=$(scripts/fetch-kernel.sh "$TOP/build" 2>"$OUT/fetch-kernel.log") ||
	die "scripts/fetch-kernel.sh failed: $(tail -n 3 "$OUT/fetch-kernel.log")"
KDIR=$TOP/build/kernel

# The shipped init with the gpuvm line replaced by the measured step (exactly one such line).
n=$(grep -c '^	run_gpuvm apply --defer$' init || :)
[ "$n" = 1 ] || die "init: expected one line '	run_gpuvm apply --defer', found $n: update bench/boot.sh"
awk '
$0 == "\trun_gpuvm apply --defer" {
	print "\tbench_step=apply"
	print "\tfor a in $cmdline; do case $a in bench.step=*) bench_step=${a#*=} ;; esac; done"
	print "\tif [ \"$bench_step\" = modprobe ]; then"
	print "\t\tmkdir -p /etc/modprobe.d"
	print "\t\techo \"options vfio-pci ids=" standin "\" >/etc/modprobe.d/bench-vfio.conf"
	print "\tfi"
	print "\techo \"gpuvm-bench: begin $bench_step\" >/dev/kmsg"
	print "\tcase $bench_step in"
	print "\tmodprobe) modprobe -a vfio_iommu_type1 vfio-pci; rc=$? ;;"
	print "\tmodprobe-nosoftdep) modprobe vfio-pci ids=" standin "; rc=$? ;;"
	print "\tversion) run_gpuvm --version ;;"
	print "\thold-decide) run_gpuvm apply --defer"
	print "\t\techo \"gpuvm-bench: held rc=$rc\" >/dev/kmsg"
	print "\t\trun_gpuvm apply --resume --sysroot / ;;"
	print "\t*) run_gpuvm apply --defer ;;"
	print "\tesac"
	print "\techo \"gpuvm-bench: end $bench_step rc=$rc\" >/dev/kmsg"
	next
}
{ print }' standin="$STANDIN" init >"$OUT/init.new"
mv "$OUT/init.new" "$OUT/init"

# The host config of the hold-decide boots (the image is their whole system).
printf '# bench/boot.sh: the host config of the hold-decide boots\nmode=vm-passthrough\n' >"$OUT/gpuvm.conf"
IMG=$IMGDIR/bench-boot.img
mkdir -p "$IMGDIR"
key=$(cat "$BOOT_BIN" "$OUT/init" "$OUT/gpuvm.conf" bench/boot-check.sh scripts/mkimage.sh "$KDIR/KVER" |
	sha256sum | cut -c1-16)
if [ -f "$IMG" ] && [ "$(cat "$IMG.key" 2>/dev/null)" = "$key" ]; then
	log "image: $IMG (cached)"
else
	log "image: building $IMG (kernel $KVER, gpuvm $BOOT_BIN)"
	rm -f "$IMG.key"
	scripts/mkimage.sh --kernel-dir "$KDIR" --kver "$KVER" --out "$IMG" --gpuvm "$BOOT_BIN" \
		--init "$OUT/init" --config "$OUT/gpuvm.conf" --add "$TOP/bench/boot-check.sh:/init.d/50-bench-check.sh" 2>"$OUT/mkimage.log" ||
		die "mkimage failed: $(tail -n 3 "$OUT/mkimage.log")"
	echo "$key" >"$IMG.key"
fi

# --- boots ---------------------------------------------------------------------------------
# tests/e2e/lib.sh boots QEMU exactly as the e2e tests do.
# shellcheck disable=SC2034 # lib.sh's
{
	E2E_ROOT=$TOP
	E2E_OUT=$OUT
	E2E_KDIR=$KDIR
	E2E_NAME=bench-boot
}
# shellcheck source=tests/e2e/lib.sh disable=SC1091
. "$TOP/tests/e2e/lib.sh"
# shellcheck disable=SC2034 # lib.sh's e2e_boot boots it
E2E_IMG=$IMG
rm -f "$OUT/bench-boot.times" "$OUT/bench-boot.apply" "$OUT"/bench-boot-*.log "$OUT/boots.out"

TSV=$OUT/boots.tsv
printf 'boot\tstep\tbegin_s\tend_s\tstep_ms\tdriver\telapsed_us\tboot_s\tfirst_module_ms\tloaded_ms\tbound_ms\tmodules\theld_ms\n' >"$TSV"
# kmsg ERE: the printk time of the first kernel log line of the step that matches ERE
kmsg() {
	sed -n 's/^@bench kmsg=\([0-9.]*\) /\1 /p' "$E2E_LOG" | grep -E -m 1 "^[0-9.]+ $1" | cut -d' ' -f1
}
# since T0 T: the ms from T0 to T, "-" when either is missing
since() {
	if [ -z "$1" ] || [ -z "$2" ]; then
		echo -
	else
		awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) * 1000 }'
	fi
}
fails=0
i=1
while [ "$i" -le "$BOOTS" ]; do
	for s in $STEPS; do
		mode=gpuvm.mode=vm-passthrough
		[ "$s" != hold-decide ] || mode=''
		# shellcheck disable=SC2086 # ICOUNT: QEMU's words
		e2e_boot --iommu intel --gpu vga --log "$s-$i" \
			--append "$mode gpuvm.ids=$STANDIN bench.step=$s" \
			-- $ICOUNT >>"$OUT/boots.out"
		begin=$(kmsg "gpuvm-bench: begin $s\$")
		end=$(kmsg "gpuvm-bench: end $s rc=")
		# the breakdown: the first module's init (vfio.ko's banner), gpuvm's "loaded", and
		# the bind done (gpuvm's summary line; vfio-pci's "add" line, printed after its
		# driver registered and took the stand-in), each in ms after the begin marker
		first=$(since "$begin" "$(kmsg 'VFIO - User Level meta-driver')")
		loaded=$(since "$begin" "$(kmsg 'gpuvm: loaded ')")
		held=$(since "$begin" "$(kmsg 'gpuvm-bench: held rc=')")
		case $s in
		apply | hold-decide) done=$(since "$begin" "$(kmsg 'gpuvm: vm-passthrough: ')") ;;
		modprobe*) done=$(since "$begin" "$(kmsg 'vfio_pci: add ')") ;;
		*) done=- ;;
		esac
		drv=$(sed -n 's/^@bench driver=//p' "$E2E_LOG" | tail -n 1)
		mods=$(sed -n 's/^@bench modules=//p' "$E2E_LOG" | tail -n 1 | tr ' ' ,)
		us=$(sed -n 's/^@bench elapsed_us=//p' "$E2E_LOG" | tail -n 1)
		want=vfio-pci
		[ "$s" != version ] || want=none
		why=''
		if [ "$E2E_BOOT_END" != poweroff ]; then
			why="the boot ended in $E2E_BOOT_END"
		elif ! grep -q '^@bench end$' "$E2E_LOG"; then
			why="no '@bench end' on the console"
		elif [ -z "$begin" ] || [ -z "$end" ]; then
			why="a marker is missing (begin '$begin', end '$end')"
		elif [ "$drv" != "$want" ]; then
			why="the stand-in ended on '${drv:-?}', not $want"
		elif [ "$s" = hold-decide ] && [ "$held" = - ]; then
			why="no 'held' marker between the two calls"
		fi
		ms=$(awk -v a="${begin:-0}" -v b="${end:-0}" 'BEGIN { printf "%.3f", (b - a) * 1000 }')
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$i" "$s" "${begin:--}" "${end:--}" "$ms" \
			"${drv:--}" "${us:--}" "$E2E_BOOT_SECS" "$first" "$loaded" "$done" "${mods:--}" "$held" >>"$TSV"
		if [ -n "$why" ]; then
			log "boot $i $s: INVALID: $why (console: $E2E_LOG)"
			fails=$((fails + 1))
		else
			log "boot $i $s: step ${ms} ms (driver $drv, gpuvm elapsed_us ${us:--}, boot ${E2E_BOOT_SECS} s)"
		fi
	done
	i=$((i + 1))
done
[ "$fails" -eq 0 ] || die "$fails invalid boots: no result (see $TSV and the consoles in $OUT)"
# The same work: every apply, hold-decide and modprobe boot ended with the same modules loaded.
sets=$(awk -F '\t' 'NR > 1 && ($2 == "apply" || $2 == "hold-decide" || $2 == "modprobe") { print $12 }' "$TSV" | sort -u)
[ "$(printf '%s\n' "$sets" | grep -c .)" -le 1 ] ||
	die "apply, hold-decide and modprobe did not load the same modules: $(printf '%s\n' "$sets" | tr '\n' ' ')(see $TSV)"
MODS=$(printf '%s' "$sets" | tr , ' ')

# --- report --------------------------------------------------------------------------------
# stats STEP COLUMN: "median min max n" of COLUMN over STEP's boots (5: step ms, 7: elapsed_us,
# 9-11: the breakdown); "- - - 0" when no boot has it
stats() {
	awk -F '\t' -v s="$1" -v c="$2" 'NR > 1 && $2 == s && $c != "-" { print $c }' "$TSV" | sort -g |
		awk '{ v[NR] = $1 } END {
			if (NR == 0) { print "- - - 0"; exit }
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			print m, v[1], v[NR], NR }'
}
# med STEP COLUMN: the median alone
med() { stats "$1" "$2" | cut -d' ' -f1; }
# fmt STEP COLUMN [SCALE]: "median (min–max)" in ms with one decimal, "–" without data
fmt() {
	stats "$1" "$2" | awk -v k="${3:-1}" '$4 == 0 { print "–"; exit }
		{ printf "%.1f (%.1f–%.1f)\n", $1 / k, $2 / k, $3 / k }'
}
# diff A B: A - B in ms, "–" when either is missing
dif() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-") print "–"; else printf "%.1f\n", a - b }'; }

RES=$OUT/RESULTS-boot.md
{
	if [ -n "$ICOUNT" ]; then
		echo "## The boot ratio, instructions counted (QEMU \`$ICOUNT\`, bench/boot.sh)"
		echo
		echo "The method below, but with \`BOOT_ICOUNT=${BOOT_ICOUNT}\`: the guest's clock advances $((1 << BOOT_ICOUNT)) ns for each"
		echo "instruction it executes and jumps over its idle time, so the time between the markers"
		echo "no longer depends on what else this machine runs (the boots agree to about 0.1 ms):"
		echo "the figure to compare for an A/B of a change. It weighs the guest's instructions (and its"
		echo "timed waits), not what TCG makes dear on a real clock (translating code, page faults:"
		echo "process start looks cheap here)."
	else
		echo "## The boot ratio (QEMU, bench/boot.sh)"
	fi
	echo
	echo "The step between two kernel log markers that init's shell writes itself, in the same"
	echo "image (scripts/mkimage.sh's busybox image: the shipped init, its gpuvm line replaced by"
	echo "the step that \`bench.step=\` names), Debian's kernel $KVER, QEMU TCG as the e2e tests"
	echo "run it (q35, intel-iommu, the VGA stand-in $STANDIN with no driver of its own in the"
	echo "image), $BOOTS boots a path, interleaved, one at a time; the time of a step is the"
	echo "difference of the markers' printk timestamps. Every boot was checked: it powered off,"
	echo "both markers are in its kernel log, and the stand-in ended on vfio-pci (\`version\`:"
	echo "on no driver)."
	echo
	echo "- \`apply\`: the image's own gpuvm step, \`timeout -k 10 120 /sbin/gpuvm apply --defer\`"
	echo "  (busybox timeout as the backstop; gpuvm loads vfio-pci with libkmod, binds, verifies)"
	echo "- \`hold-decide\`: the boot's two calls when the mode comes from the host config (no"
	echo "  \`gpuvm.mode=\` on these boots' line): \`apply --defer\` holds the stand-in for the mode"
	echo "  (\`driver_override\` gpuvm-hold), then \`apply --resume --sysroot /\` reads the image's"
	echo "  /etc/gpuvm/gpuvm.conf (mode=vm-passthrough: without root= the image is the whole"
	echo "  system), loads vfio-pci and binds; both under the same backstop"
	echo "- \`modprobe\`: \`modprobe -a vfio_iommu_type1 vfio-pci\` with \`options vfio-pci ids=$STANDIN\`"
	echo "  in /etc/modprobe.d (busybox's modprobe; the kernel binds the stand-in when vfio-pci"
	echo "  loads, with no userspace): the physical floor of the boot path. vfio_iommu_type1 is"
	echo "  named because busybox's modprobe ignores modules.softdep, where vfio asks for it, and"
	echo "  kmod (what \`vfio-pci.ids=\` or a modprobe.d line gets at boot) and gpuvm's libkmod load"
	echo "  it: both paths ended every boot with the same modules loaded (checked): ${MODS:-?}"
	echo "- \`modprobe-nosoftdep\`: \`modprobe vfio-pci ids=$STANDIN\`, the command a VFIO guide gives for"
	echo "  the kernel's bind (busybox's modprobe: without vfio_iommu_type1, one module less than"
	echo "  gpuvm loads); the issue's first measurement said 242 ms against 110 ms, 2.19×"
	echo "- \`version\`: \`timeout -k 10 120 /sbin/gpuvm --version\`: the backstop and gpuvm's"
	echo "  process start alone"
	echo "- gpuvm: ${BOOT_BIN#"$TOP"/} ($(wc -c <"$BOOT_BIN") bytes, sha256 $(sha256sum "$BOOT_BIN" | cut -c1-12));" \
		"commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git status --porcelain -- src 2>/dev/null | head -n 1 | sed 's/..*/ + uncommitted changes in src\//')"
	echo "- host load average (1, 5, 15 min) at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	echo "| path | boots | step ms: median (min–max) | gpuvm's own elapsed_us, ms |"
	echo "|---|---|---|---|"
	for s in $STEPS; do
		echo "| \`$s\` | $(stats "$s" 5 | cut -d' ' -f4) | $(fmt "$s" 5) | $(fmt "$s" 7 1000) |"
	done
	echo
	a=$(med apply 5)
	m=$(med modprobe 5)
	h=$(med hold-decide 5)
	awk -v a="$a" -v m="$m" -v h="$h" -v hh="$(med hold-decide 13)" -v n="$(med modprobe-nosoftdep 5)" 'BEGIN {
		if (a != "-" && m != "-" && m > 0)
			printf "**Ratio of the medians, apply / modprobe: %.2f×** (goal ≤ 1.1×; %.1f ms over the kernel'"'"'s own bind).\n", a / m, a - m
		if (h != "-" && m != "-" && m > 0) {
			printf "**Ratio of the medians, hold-decide / modprobe: %.2f×** (goal ≤ 1.1×; %.1f ms over the kernel'"'"'s own bind", h / m, h - m
			if (hh != "-")
				printf "; the hold, the first call, %.1f ms of it", hh
			printf ").\n"
		}
		if (a != "-" && n != "-" && n > 0)
			printf "Against `modprobe-nosoftdep`, which loads one module less: %.2f×.\n", a / n
	}'
	echo
	echo "Where the step goes (ms after the begin marker, median (min–max) of each mark on its own,"
	echo "so the columns need not add up): the first module's init is vfio.ko's banner (\"VFIO -"
	echo "User Level meta-driver\"), \"loaded\" gpuvm's \`gpuvm: loaded vfio-pci\` line, \"bound\" gpuvm's"
	echo "summary line (after its bind and verify) or vfio-pci's \`vfio_pci: add\` line (printed once"
	echo "its driver has registered and taken the stand-in)."
	echo
	echo "| path | held (hold-decide: the first call's end) | first module's init | loaded | bound | end marker |"
	echo "|---|---|---|---|---|---|"
	for s in $STEPS; do
		echo "| \`$s\` | $(fmt "$s" 13) | $(fmt "$s" 9) | $(fmt "$s" 10) | $(fmt "$s" 11) | $(fmt "$s" 5) |"
	done
	echo
	if [ "$a" != - ] && [ "$m" != - ]; then
		v=$(awk -v v="$(med version 5)" 'BEGIN { if (v == "-") print "–"; else printf "%.1f\n", v }')
		echo "Over the kernel's own bind, apply spends (medians): $(dif "$(med apply 9)" "$(med modprobe 9)") ms more before the"
		echo "first module's init (modprobe: busybox's start and its modules.dep lookup; gpuvm: its start,"
		echo "scan, plan and libkmod's lookup; the \`version\` path alone, process start and backstop,"
		echo "takes ${v} ms), $(dif "$(dif "$(med apply 11)" "$(med apply 9)")" "$(dif "$(med modprobe 11)" "$(med modprobe 9)")") ms more from there to the stand-in bound (module loads,"
		echo "then gpuvm's writes and verify against the kernel binding as the module loads), and"
		echo "$(dif "$(dif "$a" "$(med apply 11)")" "$(dif "$m" "$(med modprobe 11)")") ms more from there to the end marker (gpuvm's state file and exit, the backstop's"
		echo "reap)."
		echo
	fi
	if [ -z "$ICOUNT" ]; then
		echo "TCG on a real clock exaggerates every exit and page fault, and a busy host stretches any"
		echo "step: compare the ratio, and only between runs of this script (\`BOOT_BIN=FILE sh"
		echo "bench/boot.sh\` for an A/B; \`BOOT_ICOUNT=1\` for instruction-counted boots)."
	fi
	echo "Each boot: \`${OUT#"$TOP"/}/boots.tsv\`."
} >"$RES"
cat "$RES"
log "written: $RES"
