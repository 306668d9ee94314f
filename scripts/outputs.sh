#!/bin/sh
# Every command's output over every fixture, for a before/after diff of a change that must
# keep behaviour (a refactor, a speed-up):
#
#   scripts/outputs.sh BIN OUTDIR     one file a run: stdout, stderr and exit status, and for
#                                     apply the state file, with elapsed time taken out; the
#                                     boot path too (apply --defer, then --resume --sysroot
#                                     with the root's config saying each mode, or none)
#   diff -r OUTDIR.before OUTDIR.after
#
# The fixture trees are built once under $OUTPUTS_TREES (default build/outputs-trees) and
# copied for each apply, which writes into its tree. OUTPUTS_PROC says how much of
# /proc/bus/pci the trees keep, for a diff that shows each way the scan learns the
# functions decides alike: all (the default: the bus directories and the devices file),
# devices (the file alone: the listing of /sys/bus/pci/devices says where each function
# is), none (the uevents say what each is).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:?usage: scripts/outputs.sh BIN OUTDIR}
out=${2:?usage: scripts/outputs.sh BIN OUTDIR}
trees=${OUTPUTS_TREES:-$top/build/outputs-trees}
fixtures="workstation hgx8 gpu-nic two-gpus sriov domain2 noiommu vfio-stale hgx8-sriov arm64-smmu hgx8-pairs"

mkdir -p "$trees" "$out"
for f in $fixtures; do
	[ -d "$trees/$f" ] || "$top/tests/fixture/mkfixture" "$trees/$f" "$f" >/dev/null
done
proc=${OUTPUTS_PROC:-all}
case $proc in
all) ;;
devices | none)
	for f in $fixtures; do
		[ -d "$trees/$proc/$f" ] && continue
		mkdir -p "$trees/$proc"
		cp -a "$trees/$f" "$trees/$proc/$f"
		find "$trees/$proc/$f/proc/bus/pci" -mindepth 1 -maxdepth 1 -type d -exec rm -r {} +
		[ "$proc" = devices ] || rm "$trees/$proc/$f/proc/bus/pci/devices"
	done
	trees=$trees/$proc
	;;
*) echo "outputs.sh: OUTPUTS_PROC is all, devices or none" >&2 && exit 2 ;;
esac

# Elapsed times, and the NFD file's expiry (three hours from now), differ from run to run;
# nothing else may.
clean() {
	sed -e 's/"elapsed_us": [0-9]*/"elapsed_us": N/' -e 's/ in [0-9.]* ms/ in N ms/' \
		-e 's/^# +expiry-time=.*/# +expiry-time=T/'
}

# one NAME ROOT ARGS...: a run of BIN into OUTDIR/NAME.
one() {
	name=$1 root=$2
	shift 2
	rc=0
	"$bin" --root "$root" "$@" >"$out/$name.stdout" 2>"$out/$name.stderr" || rc=$?
	echo "exit $rc" >>"$out/$name.stdout"
	clean <"$out/$name.stdout" >"$out/$name.tmp" && mv "$out/$name.tmp" "$out/$name.stdout"
	clean <"$out/$name.stderr" >"$out/$name.tmp" && mv "$out/$name.tmp" "$out/$name.stderr"
}

n=0
for f in $fixtures; do
	i=0
	for set in "gpuvm.mode=container" "gpuvm.mode=vm-passthrough" "gpuvm.mode=vm-vgpu" \
		"gpuvm.mode=vm-passthrough gpuvm.on_error=release gpuvm.nvswitch=vm" \
		"gpuvm.mode=vm-passthrough gpuvm.ids=10de:*,8086:* gpuvm.exclude=0000:01:00.1" \
		"gpuvm.mode=container gpuvm.host_driver=nvidia" "gpuvm.mode=vm-passthru gpuvm.bogus=1"; do
		i=$((i + 1))
		r=$trees/$f
		for cmd in "plan" "plan --json" "status" "status --json" "status --nfd" "check" \
			"check --json" "check --mode vm-passthrough" "kubevirt" "kubevirt --json" \
			"kubevirt --external-provider" "cmdline" "cmdline --json" "cmdline --cpu amd" \
			"config get mode" "apply --dry-run"; do
			# shellcheck disable=SC2086 # the command's words split on purpose
			one "$f.$i.$(echo "$cmd" | tr ' ' '_')" "$r" --cmdline "$set" $cmd
			n=$((n + 1))
		done
		rm -rf "$out/tree"
		cp -a "$r" "$out/tree"
		one "$f.$i.apply" "$out/tree" --cmdline "$set" apply
		clean <"$out/tree/run/gpuvm/state.json" >"$out/$f.$i.apply.state" 2>/dev/null || :
		n=$((n + 1))
	done
	# The boot path: the first call with and without a mode on the line, then the last
	# call with the root's config saying each mode, or nothing.
	for line in "quiet" "gpuvm.mode=vm-passthrough"; do
		for conf in container vm-passthrough vm-vgpu none; do
			i=$((i + 1))
			rm -rf "$out/tree" "$out/sysroot"
			cp -a "$trees/$f" "$out/tree"
			mkdir -p "$out/sysroot/etc/gpuvm"
			[ "$conf" = none ] || echo "mode=$conf" >"$out/sysroot/etc/gpuvm/gpuvm.conf"
			one "$f.$i.defer" "$out/tree" --cmdline "$line" apply --defer
			clean <"$out/tree/run/gpuvm/state.json" >"$out/$f.$i.defer.state" 2>/dev/null || :
			one "$f.$i.resume" "$out/tree" --cmdline "$line" apply --resume --sysroot "$out/sysroot"
			sed "s|$out/sysroot|SYSROOT|g" "$out/$f.$i.resume.stderr" >"$out/$f.$i.tmp" &&
				mv "$out/$f.$i.tmp" "$out/$f.$i.resume.stderr"
			clean <"$out/tree/run/gpuvm/state.json" | sed "s|$out/sysroot|SYSROOT|g" \
				>"$out/$f.$i.resume.state" 2>/dev/null || :
			n=$((n + 2))
		done
	done
done
rm -rf "$out/tree" "$out/sysroot"
echo "outputs: $n runs of $bin in $out"
