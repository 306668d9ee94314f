#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/run.sh: the cost of gpuvm on the boot path (issue 8). `make bench` runs it.
#
# For each workload (a fixture tree built by tests/fixture/mkfixture, shaped like a real
# machine) and for `plan` and `apply --root`, it measures:
#   wall time    median, min and max of many runs (bench/timeit.c: fork to reaped exit,
#                output to /dev/null), and the median CPU time (user + system)
#   syscalls     every call of every process (strace -ff -y; the forked writer counts)
#   floor        the fewest syscalls that fetch what the run used and make the changes it
#                made (bench/floor.awk says how), and gpuvm's ratio to it
#   instructions callgrind's total Ir (all processes), repeatable on a busy machine
#   page faults  the median minor faults of a run (wait4), and its peak RSS (VmHWM at exit)
# Every measured command starts with descriptors 0-2 only, as at boot (timeit closes the
# rest; timeit -x runs strace and callgrind so).
# and the size of build/gpuvm; and the same for bench/floorprog.c, a program that does
# only the per-function part of the floor, to show what that costs on this machine. apply writes into its tree; before every apply run the
# files the previous run changed are put back as they were (outside the timed region),
# and run.sh checks that nothing else changed.
#
# Environment:
#   BENCH_QUICK=1    a smoke run for CI: fewer repetitions, no 10,000-function workload;
#                    writes build/bench/RESULTS-quick.md, never bench/RESULTS.md
#   BENCH_RUNS=N     timed runs per measurement (default 200, 100 at 1,000 functions,
#                    20 at 10,000; 20 / 10 with BENCH_QUICK)
#   BENCH_TREES=DIR  where the fixture trees go (about 1.3 GB with the 10,000-function
#                    tree). Default: /dev/shm/gpuvm-bench when /dev/shm is a tmpfs with
#                    room (removed at the end unless BENCH_KEEP), else build/bench/trees.
#                    sysfs lives in memory; on a disk file system each stand-in of a sysfs
#                    write (open O_TRUNC, write, close) also starts writeback at its close
#                    (ext4's auto_da_alloc), which no sysfs write does.
#   BENCH_KEEP=1     reuse trees already built there (the fixture build is then not timed)
#   BENCH_ONLY="W.." only these workloads (workstation hgx8 hgx8-sriov synthetic-1000
#                    synthetic-10000)
#   BENCH_BIN=FILE   measure FILE instead of build/gpuvm (an A/B comparison of a change):
#                    writes build/bench/RESULTS-bin.md; link FILE unstripped (make -f Makefile
#                    -f bench/syms.mk build/bench/gpuvm.syms) for Ir and profiles
# Needs: strace, valgrind (callgrind), a host C compiler, cpio (mkfixture), tar.
set -eu

if [ -n "${BENCH_BIN:-}" ]; then
	case $BENCH_BIN in /*) ;; *) BENCH_BIN=$(pwd)/$BENCH_BIN ;; esac
fi
cd "$(dirname "$0")/.."
TOP=$(pwd)
OUT=build/bench
SRC_BIN=${BENCH_BIN:-build/gpuvm}
BIN=$OUT/gpuvm	# a copy: others may rebuild build/gpuvm while this runs
SYMS=$OUT/gpuvm.syms
TIMEIT=$OUT/timeit
QUICK=${BENCH_QUICK:-}
[ "$QUICK" = 0 ] && QUICK=
TREES_TMP=
if [ -n "${BENCH_TREES:-}" ]; then
	TREES=$BENCH_TREES
elif [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] &&
	[ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -gt 3000000 ]; then
	TREES=/dev/shm/gpuvm-bench
	TREES_TMP=1
else
	TREES=$OUT/trees
fi
KEEP=${BENCH_KEEP:-}
[ "$KEEP" = 0 ] && KEEP=
CMDLINE=gpuvm.mode=vm-passthrough
TSV=$OUT/results.tsv
FLOORS=$OUT/floors.tsv
FIXT=$OUT/fixtures.tsv
if [ -n "${BENCH_BIN:-}" ]; then
	REPORT=$OUT/RESULTS-bin.md
elif [ -n "$QUICK" ] || [ -n "${BENCH_ONLY:-}" ]; then
	REPORT=$OUT/RESULTS-quick.md
else
	REPORT=bench/RESULTS.md
fi

log() {
	printf 'bench: %s\n' "$*" >&2
}

die() {
	log "$*"
	exit 1
}

for t in strace valgrind callgrind_annotate tar cpio; do
	command -v "$t" >/dev/null 2>&1 || die "needs $t (scripts/install-packages.sh installs it)"
done

# key=value lines: the value of KEY in FILE
kv() {
	awk -v k="$2" '{ for (i = 1; i <= NF; i++) { n = index($i, "=");
		if (substr($i, 1, n - 1) == k) { print substr($i, n + 1); exit } } }' "$1"
}

now_ms() {
	# date +%s%N: GNU date; the fixture build takes seconds, ms are plenty.
	echo $(($(date +%s%N) / 1000000))
}

# --- build ---------------------------------------------------------------------------
mkdir -p "$OUT" "$TREES"
if [ -z "${BENCH_BIN:-}" ]; then
	make --no-print-directory -s all >&2
	make --no-print-directory -s -f Makefile -f bench/syms.mk "$SYMS" >&2
fi
[ -x "$SRC_BIN" ] || die "$SRC_BIN: not an executable"
cp "$SRC_BIN" "$BIN"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git status --porcelain -- src Makefile 2>/dev/null | head -n 1)
[ -z "$dirty" ] || commit="$commit + uncommitted changes in src/ or Makefile"
# static musl: the pages the launcher has when it forks count in the child's ru_maxrss
# (timeit.c reports VmHWM as the peak, but keeps ru_maxrss as small as it can be)
${MUSL_CC:-musl-gcc} -static -O2 -Wall -Wextra -o "$TIMEIT" bench/timeit.c
FLOORPROG=$OUT/floorprog
${MUSL_CC:-musl-gcc} -static -Os -s -Wall -Wextra -o "$FLOORPROG" bench/floorprog.c

# callgrind names functions only in the unstripped link; it must be the same code.
PROFBIN=$SYMS
strip -o "$OUT/gpuvm.syms.stripped" "$SYMS" 2>/dev/null || :
if [ -n "${BENCH_BIN:-}" ]; then
	PROFBIN=$BIN
	# without symbols --dump-before=fork cannot work: a forked child's Ir would include
	# its parent's costs up to the fork
	nm "$BIN" 2>/dev/null | grep -q ' fork$' ||
		log "$SRC_BIN has no symbols: Ir of runs that fork counts the parent's costs again; use an unstripped link"
elif ! cmp -s "$OUT/gpuvm.syms.stripped" "$BIN"; then
	log "stripped $SYMS differs from $SRC_BIN: instructions measured on it, no function names"
	PROFBIN=$BIN
fi
rm -f "$OUT/gpuvm.syms.stripped"
BIN_SIZE=$(wc -c <"$BIN")

runs_for() { # FUNCTIONS -> timed runs
	if [ -n "${BENCH_RUNS:-}" ]; then
		echo "$BENCH_RUNS"
	elif [ -n "$QUICK" ]; then
		if [ "$1" -ge 1000 ]; then echo 10; else echo 20; fi
	elif [ "$1" -ge 5000 ]; then
		echo 20
	elif [ "$1" -ge 1000 ]; then
		echo 100
	else
		echo 200
	fi
}

# Ir of all processes of one callgrind run: callgrind_ir OUTPREFIX CMD...
# A forked child starts with its parent's counters; --dump-before=fork writes the parent's
# costs out (and zeroes them) at each fork, so that each part counts once and the sum is
# the run's total.
callgrind_ir() {
	_pre=$1
	shift
	rm -f "$_pre".*
	"$TIMEIT" -x -- valgrind -q --tool=callgrind --dump-before=fork \
		--callgrind-out-file="$_pre.%p" "$@" >/dev/null 2>"$_pre.log" || :
	awk '/^totals:/ { s += $2 } END { print s + 0 }' "$_pre".[0-9]*
	rm -f "$_pre".[0-9]*
}

# the floor and syscall counts of one run: trace DIR CMD...
trace() {
	_dir=$1
	shift
	rm -rf "$_dir"
	mkdir -p "$_dir"
	"$TIMEIT" -x -- strace -ff -y -o "$_dir/t" "$@" >/dev/null 2>&1 || :
	awk -v list=1 -f bench/floor.awk "$_dir"/t.* >"$_dir.calls"
	head -n 1 "$_dir.calls"
}

# The top of a profile: profile OUT CMD... writes OUT.txt, the main process's costliest
# functions of gpuvm's own, inclusive. A run of its own, without --dump-before, so that the
# main process's file holds its whole run (the largest file: a child holds its parent's
# costs up to its fork and little more).
PROFILED="hgx8-plan hgx8-apply synthetic-10000-plan"
profile() {
	_pre=$1
	shift
	rm -f "$_pre".*
	nm "$PROFBIN" 2>/dev/null | grep -q ' fork$' || return 0
	"$TIMEIT" -x -- valgrind -q --tool=callgrind --callgrind-out-file="$_pre.%p" "$@" >/dev/null 2>&1 || :
	_f=$(awk '/^totals:/ { print $2, FILENAME }' "$_pre".[0-9]* | sort -nr |
		awk 'NR == 1 { print $2 }')
	callgrind_annotate --inclusive=yes "$_f" 2>/dev/null |
		awk '/^ *[0-9,]+ +\(/ && !/PROGRAM TOTALS|_start|below main|libc_start|:main |:run |0x0000/' |
		sed -n '1,14p' | sed 's/ \[[^]]*\]$//; s/???://; s/^ */    /' >"$_pre.txt"
	rm -f "$_pre".[0-9]*
}

# measure WORKLOAD COMMAND PREPARE CMD...: time, trace, count instructions (and profile)
# one command; PREPARE (a script, may be "") runs before each run. Appends to the tables.
measure() {
	_w=$1 _c=$2 _p=$3
	shift 3
	_k=$OUT/$_w-$_c
	if [ -n "$_p" ]; then
		"$TIMEIT" -n "$runs" -w 3 -p "sh $_p" -- "$@" >"$_k.time"
		sh "$_p"
	else
		"$TIMEIT" -n "$runs" -w 3 -- "$@" >"$_k.time"
	fi
	trace "$OUT/trace-$_w-$_c" "$@" >"$_k.floor"
	[ -z "$_p" ] || sh "$_p"
	# callgrind names functions in the unstripped twin of build/gpuvm
	_bin=$1
	shift
	[ "$_bin" != "$BIN" ] || _bin=$PROFBIN
	echo "ir=$(callgrind_ir "$OUT/cg-$_w-$_c" "$_bin" "$@")" >>"$_k.floor"
	[ -z "$_p" ] || sh "$_p"
	case " $PROFILED " in *" $_w-$_c "*)
		profile "$OUT/prof-$_w-$_c" "$_bin" "$@"
		[ -z "$_p" ] || sh "$_p" ;;
	esac
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$_w" "$fns" "$_c" \
		"$(kv "$_k.time" runs)" "$(kv "$_k.time" min_us)" "$(kv "$_k.time" median_us)" \
		"$(kv "$_k.time" max_us)" "$(kv "$_k.time" cpu_median_us)" \
		"$(kv "$_k.time" hwm_kib)" "$(kv "$_k.time" minflt)" "$(kv "$_k.floor" total)" \
		"$(kv "$_k.floor" floor)" "$(kv "$_k.floor" ir)" "$(kv "$_k.time" status)" >>"$TSV"
	# floor parts: per function (uevent 3), iommu_group links, listings, other reads,
	# writes (3 each + mkdir + rename), process and output
	awk -v w="$_w" -v c="$_c" -v n="$fns" '/^total=/ {
		for (i = 1; i <= NF; i++) { k = index($i, "="); v[substr($i, 1, k - 1)] = substr($i, k + 1) }
		other = 3 * (v["files"] - v["uevent"]) + v["absent"] + v["links"] - v["iommu_group"] + v["checks"]
		printf "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", w, c, n,
			3 * v["uevent"], v["iommu_group"], v["dir_calls"], other,
			3 * v["writes"] + v["mkdirs"] + v["renames"], v["fixed"] + v["streams"],
			v["floor"], v["total"], v["fork"] }' "$_k.floor" >>"$FLOORS"
}

# --- workloads -------------------------------------------------------------------------
WORKLOADS="workstation:workstation hgx8:hgx8 hgx8-sriov:hgx8-sriov synthetic-1000:synthetic,1000"
[ -n "$QUICK" ] || WORKLOADS="$WORKLOADS synthetic-10000:synthetic,10000"
if [ -n "${BENCH_ONLY:-}" ]; then
	_all=$WORKLOADS
	WORKLOADS=
	for w in $_all; do
		case " $BENCH_ONLY " in *" ${w%%:*} "*) WORKLOADS="$WORKLOADS $w" ;; esac
	done
	[ -n "$WORKLOADS" ] || die "BENCH_ONLY=$BENCH_ONLY: no such workload"
fi

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
rm -f "$OUT/missed"
printf 'workload\tfunctions\tcommand\truns\tmin_us\tmedian_us\tmax_us\tcpu_us\trss_kib\tminflt\tsyscalls\tfloor\tir\tstatus\n' >"$TSV"
printf 'workload\tcommand\tfunctions\tuevent\tiommu_group\tdir_calls\tother_reads\twrites\tfixed\tfloor\tsyscalls\tfork\n' >"$FLOORS"
printf 'workload\tfunctions\tfiles\tMiB\tbuild_ms\n' >"$FIXT"

# The exec cost of this binary alone: what any program pays on this machine.
log "baseline: gpuvm --version"
"$TIMEIT" -n "$(runs_for 1)" -w 3 -- "$BIN" --version >"$OUT/baseline.time"

for w in $WORKLOADS; do
	name=${w%%:*}
	args=$(echo "${w#*:}" | tr , ' ')
	tree=$TREES/$name

	# The fixture: built fresh (and timed) unless BENCH_KEEP reuses it (not a tree that
	# an interrupted apply left changed: run/gpuvm is gone after every restore).
	if [ -n "$KEEP" ] && [ -d "$tree/sys/bus/pci/devices" ] && [ ! -e "$tree/run/gpuvm" ]; then
		build_ms=reused
	else
		log "$name: building the fixture ($args)"
		rm -rf "$tree" "$tree.apply"
		t0=$(now_ms)
		# shellcheck disable=SC2086 # args is "SCENARIO [N]"
		tests/fixture/mkfixture "$tree" $args >/dev/null
		build_ms=$(($(now_ms) - t0))
	fi
	fns=$(find "$tree/sys/bus/pci/devices" -mindepth 1 -maxdepth 1 | wc -l)
	files=$(find "$tree" | wc -l)
	mib=$(du -sm "$tree" | cut -f1)
	printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$fns" "$files" "$mib" "$build_ms" >>"$FIXT"
	runs=$(runs_for "$fns")

	# the floor program (reads only) and plan: the tree stays as it is
	log "$name: floor program, plan ($fns functions, $runs runs each)"
	measure "$name" floor "" "$FLOORPROG" "$tree"
	measure "$name" plan "" "$BIN" --root "$tree" --cmdline "$CMDLINE" plan

	# apply writes into the tree: learn what one run changes (the files it may write are
	# saved first), then put exactly that back before every run, outside the timed region.
	log "$name: apply (finding what a run changes)"
	cand=$OUT/$name.candidates
	(cd "$tree" && {
		find sys/bus -type f
		find sys/devices -name driver_override -type f
		if [ -d run ]; then find run -type f; fi
	}) | sort >"$cand"
	tar -C "$tree" -cf "$cand.tar" -T "$cand"
	(cd "$tree" && find . | sed 's|^\./||') >"$OUT/$name.before"
	marker=$OUT/$name.marker
	: >"$marker"
	# file times tick with the kernel's coarse clock: let one tick pass
	sleep 0.1 2>/dev/null || sleep 1
	"$BIN" --root "$tree" --cmdline "$CMDLINE" apply >/dev/null 2>&1 || :
	(cd "$tree" && find . -newer "$TOP/$marker" -printf '%y %p\n') | sed 's| \./| |' >"$OUT/$name.changed"
	: >"$OUT/$name.keep"
	: >"$OUT/$name.remove"
	: >"$OUT/$name.unsaved"
	awk -v keep="$OUT/$name.keep" -v remove="$OUT/$name.remove" -v unsaved="$OUT/$name.unsaved" '
		FILENAME == ARGV[1] { before[$0] = 1; next }
		FILENAME == ARGV[2] { cand[$0] = 1; next }
		{
			p = substr($0, 3)
			if (p == ".") next
			if (!(p in before)) print p >remove	# new: a file or directory
			else if ($1 == "d") next		# an entry added or removed in it
			else if (p in cand) print p >keep
			else print p >unsaved
		}' "$OUT/$name.before" "$cand" "$OUT/$name.changed"
	if [ -s "$OUT/$name.unsaved" ]; then
		rm -rf "$tree"
		die "$name: apply changed files that run.sh did not save (the tree is removed; run again): $(head -n 3 "$OUT/$name.unsaved" | tr '\n' ' ')"
	fi
	[ -s "$OUT/$name.keep" ] || die "$name: apply changed no file of the tree"
	rm -rf "$OUT/$name.saved"
	mkdir -p "$OUT/$name.saved"
	tar -C "$OUT/$name.saved" -xf "$cand.tar" -T "$OUT/$name.keep"
	tar -C "$OUT/$name.saved" -cf "$OUT/$name.saved.tar" -T "$OUT/$name.keep"
	rm -rf "$OUT/$name.saved" "$cand.tar"
	restore=$OUT/$name.restore.sh
	{
		echo "#!/bin/sh"
		echo "# put back what one gpuvm apply changes in $tree"
		echo "set -e"
		echo "cd '$(cd "$tree" && pwd)'"
		if [ -s "$OUT/$name.remove" ]; then
			printf 'rm -rf'
			while IFS= read -r f; do printf " '%s'" "$f"; done <"$OUT/$name.remove"
			echo
		fi
		echo "tar -xf '$TOP/$OUT/$name.saved.tar'"
	} >"$restore"
	sh "$restore"
	left=$(cd "$tree" && find . -newer "$TOP/$marker" ! -type d | wc -l)
	[ "$left" -eq 0 ] || die "$name: $left files still differ after the restore"
	rm -f "$OUT/$name.before"

	log "$name: apply ($(cat "$OUT/$name.keep" "$OUT/$name.remove" | wc -l) paths changed a run, $runs runs)"
	measure "$name" apply "$restore" "$BIN" --root "$tree" --cmdline "$CMDLINE" apply
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# --- report ------------------------------------------------------------------------------
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
if [ -e /dev/kvm ]; then kvm="/dev/kvm present"; else kvm="no KVM"; fi
virt=$(systemd-detect-virt 2>/dev/null || :)
fstype=$(df -PT "$TREES" | awk 'NR == 2 { print $2 }')

# table rows; the headline is hgx8 apply
table() {
	awk -F '\t' 'NR > 1 {
		ratio = $12 ? $11 / $12 : 0
		c = $3 == "floor" ? "floor program" : "`" $3 "`"
		printf "| %s | %d | %s | %.2f (%.2f–%.2f) | %.2f | %d | %d | %.2f | %d | %.2f× | %.2fM | %d | %d |\n",
			$1, $2, c, $6 / 1000, $5 / 1000, $7 / 1000, $8 / 1000, $10, $11, $11 / $2, $12,
			ratio, $13 / 1e6, $13 / $2, $9
	}' "$TSV"
}

targets() {
	awk -F '\t' -v size="$BIN_SIZE" -v base="$base_med" -v missed="$OUT/missed" '
	function pm(ok) { return ok ? "**met**" : "**missed**" }
	function miss(ok, what) { if (!ok) print what >missed; return pm(ok) }
	NR == 1 { next }
	$3 == "floor" { fmed[$1] = $6; next }
	{
		key = $1 " " $3
		wl[key] = $1; cmd[key] = $3; fn[key] = $2; med[key] = $6; rss[key] = $9
		sc[key] = $11; fl[key] = $12; ir[key] = $13
		order[++n] = key
	}
	END {
		worst = 0; wk = ""; rss_max = 0; rk = ""
		for (i = 1; i <= n; i++) {
			k = order[i]; r = sc[k] / fl[k]
			if (r > worst) { worst = r; wk = k }
			if (rss[k] > rss_max) { rss_max = rss[k]; rk = k }
		}
		printf "| target | result | |\n|---|---|---|\n"
		line = ""
		for (i = 1; i <= n; i++) {
			k = order[i]; r = sc[k] / fl[k]
			if (r > 1.5) line = line sprintf("%s%s `%s` %.2f×", line == "" ? "" : "; ", wl[k], cmd[k], r)
		}
		printf "| syscalls ≤ 1.5× the floor | %s | worst: %s %.2f×%s |\n", miss(worst <= 1.5, "syscalls"), wk, worst,
			line == "" ? "" : "; over: " line
		for (c = 1; c <= 2; c++) {
			k = "hgx8 " (c == 1 ? "plan" : "apply")
			if (!(k in med)) {
				printf "| wall ≤ 5 ms, hgx8 (300 functions), `%s` | not measured | |\n", c == 1 ? "plan" : "apply"
				continue
			}
			printf "| wall ≤ 5 ms, hgx8 (300 functions), `%s` | %s | median %.2f ms; here the process start alone (`gpuvm --version`) takes %.2f ms, the floor program %.2f ms |\n",
				cmd[k], miss(med[k] <= 5000, "wall"), med[k] / 1000, base / 1000, fmed["hgx8"] / 1000
		}
		for (c = 1; c <= 2; c++) {
			cm = c == 1 ? "plan" : "apply"
			a = "synthetic-1000 " cm; b = "synthetic-10000 " cm
			if (!(b in sc)) {
				printf "| linear: 10,000 row within 10 %% of 10 × 1,000 row, `%s` | not measured | BENCH_QUICK skips 10,000 |\n", cm
				continue
			}
			ri = (ir[b] / fn[b]) / (ir[a] / fn[a]); rs = (sc[b] / fn[b]) / (sc[a] / fn[a])
			printf "| linear: 10,000 row within 10 %% of 10 × 1,000 row, `%s` | %s | per function: instructions %.3f×, syscalls %.3f× |\n",
				cm, miss(ri >= 0.9 && ri <= 1.1 && rs >= 0.9 && rs <= 1.1, "linear"), ri, rs
		}
		line = ""
		for (i = 1; i <= n; i++) {
			k = order[i]
			if (rss[k] > 2048) line = line sprintf("%s%s `%s` %d KiB", line == "" ? "" : "; ", wl[k], cmd[k], rss[k])
		}
		unmeasured = 0
		for (i = 1; i <= n; i++) if (rss[order[i]] < 0) unmeasured = 1
		if (unmeasured)
			printf "| peak RSS ≤ 2 MiB | not measured | tracing the command was not allowed (ptrace) |\n"
		else
			printf "| peak RSS ≤ 2 MiB | %s | largest: %s %d KiB%s |\n", miss(rss_max <= 2048, "rss"), rk, rss_max,
				line == "" ? "" : "; over: " line
		printf "| binary ≤ 512 KiB | %s | %d bytes (%.0f KiB) |\n", miss(size <= 524288, "size"), size, size / 1024
	}' "$TSV"
}

floors() {
	awk -F '\t' 'NR > 1 && $2 != "floor" {
		printf "| %s | `%s` | %d | %d | %d | %d | %d | %d | %d | **%d** | %d | %.2f× | %d |\n",
			$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11 / $10, $12 }' "$FLOORS"
}

fixtures() {
	awk -F '\t' 'NR > 1 {
		printf "| %s | %d | %d | %d | %s |\n", $1, $2, $3, $4,
			$5 == "reused" ? "reused (BENCH_KEEP)" : sprintf("%.1f s", $5 / 1000) }' "$FIXT"
}

calls() {
	tail -n +2 "$OUT/trace-$1.calls" | sort -k3,3nr -k2,2 | head -n 12 |
		awk '{ printf "%s %s, ", $2, $3 }' | sed 's/, $//'
}

# What stands in the way of each missed target, from the figures of this run.
missed_notes() {
	[ -s "$OUT/missed" ] || { echo "Every target is met."; return 0; }
	echo "Where a target is missed:"
	echo
	if grep -qx wall "$OUT/missed"; then
		awk -F '\t' -v base="$base_med" -v bcpu="$base_cpu" '
		$1 == "hgx8" { med[$3] = $6; cpu[$3] = $8; sc[$3] = $11; ir[$3] = $13; pf[$3] = $10 }
		END {
			printf "- Wall, hgx8: the floor program alone, which makes only the 3 syscalls a function\n"
			printf "  that reading sysfs needs (%d calls), takes %.2f ms (CPU %.2f ms), and starting a\n", sc["floor"], med["floor"] / 1000, cpu["floor"] / 1000
			printf "  process (`gpuvm --version`) %.2f ms (CPU %.2f ms): on this machine a syscall into\n", base / 1000, bcpu / 1000
			printf "  sysfs costs about %.1f µs", sc["floor"] ? (cpu["floor"] - bcpu) / sc["floor"] : 0
			if (med["floor"] >= 5000)
				printf ", so no program reading the tree this way gets under 5 ms.\n"
			else
				printf "; the floor program is under 5 ms, gpuvm is not.\n"
			d = sc["plan"] - sc["floor"]
			printf "  gpuvm over the floor program: plan +%.2f ms CPU (%d %s syscalls, %.2fM more\n", (cpu["plan"] - cpu["floor"]) / 1000, d < 0 ? -d : d, d < 0 ? "fewer" : "more", (ir["plan"] - ir["floor"]) / 1e6
			printf "  instructions, %d more page faults), apply +%.2f ms over plan: its %d writes, each sysfs\n", pf["plan"] - pf["floor"], (cpu["apply"] - cpu["plan"]) / 1000, w
			printf "  write a round trip to the writer process that bounds it in time, and the state file.\n"
		}' w="$(awk -F '\t' '$1 == "hgx8" && $2 == "apply" { print int(($8 - 2) / 3) }' "$FLOORS")" "$TSV"
	fi
	grep -qx rss "$OUT/missed" &&
		echo "- Peak RSS: over 2 MiB at the workloads named above; at 10,000 functions gpuvm keeps 72 bytes a function in its inventory, 40 in the plan and 32 in the execution results, and streams the state file (64 KiB buffer)."
	grep -qx syscalls "$OUT/missed" &&
		echo "- Syscalls: see the floor table below for the part over the floor."
	grep -qx linear "$OUT/missed" &&
		echo "- Linearity: see the instructions per function of the 1,000 and 10,000 rows."
	grep -qx size "$OUT/missed" &&
		echo "- Binary size: over 512 KiB."
	return 0
}

base_med=$(kv "$OUT/baseline.time" median_us)
base_min=$(kv "$OUT/baseline.time" min_us)
base_cpu=$(kv "$OUT/baseline.time" cpu_median_us)
base_rss=$(kv "$OUT/baseline.time" hwm_kib)
if [ -n "$QUICK" ]; then mode="BENCH_QUICK=1 (smoke run: fewer repetitions, no 10,000)"; else mode="full"; fi
[ -z "${BENCH_ONLY:-}" ] || mode="$mode, BENCH_ONLY=$BENCH_ONLY"
[ -z "${BENCH_BIN:-}" ] || mode="$mode, BENCH_BIN=$BENCH_BIN"

{
	echo "# gpuvm benchmark results"
	echo
	echo "Generated by \`make bench\` (bench/run.sh, $mode). Do not edit: run it again."
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- gpuvm: commit $commit (when the run began); $SRC_BIN $BIN_SIZE bytes"
	echo "- machine: $(nproc) CPUs, $cpu_model; kernel $(uname -r); $kvm${virt:+, virtualization: $virt};" \
		"$(awk '/MemTotal/ { printf "%.0f GiB RAM", $2 / 1048576 }' /proc/meminfo)"
	echo "- load average (1, 5, 15 min): $LOAD0 at the start, $LOAD1 at the end;" \
		"the machine is shared (QEMU runs), so wall times are noisy: trust the counts"
	if [ "$fstype" = tmpfs ]; then
		treefs="tmpfs: in memory, as sysfs is"
	else
		treefs="$fstype: on a disk, so each stand-in of a sysfs write also starts writeback when it is closed, which no sysfs write does"
	fi
	echo "- trees: $TREES ($treefs); mode \`$CMDLINE\` (\`--cmdline\`, so /proc/cmdline is not read)"
	echo "- tools: $(strace -V | head -n 1), $(valgrind --version)"
	echo
	echo "## Results"
	echo
	echo "Wall: median (min–max) of the timed runs, from fork to exit. CPU: median user + system."
	echo "Page faults: median minor faults of a run (exec included). Syscalls: every call of"
	echo "every process (the writer process \`apply\` forks included); ratio: syscalls / floor. Ir:"
	echo "instructions (callgrind, all processes). Peak RSS: VmHWM of the command's process, read"
	echo "at its exit (bench/timeit.c traces one more run to stop it there). The floor program"
	echo "(bench/floorprog.c, static musl) does only the per-function part of the floor: the"
	echo "listing and each uevent read; its wall time is what"
	echo "reading sysfs costs on this machine before any planning."
	echo
	echo "| workload | functions | command | wall ms | CPU ms | page faults | syscalls | per function | floor | ratio | Ir | Ir per function | peak RSS KiB |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	table
	awk -F '\t' 'NR > 1 && $14 != 0 { printf "\n%s `%s` exited with status %s.\n", $1, $3, $14 }' "$TSV"
	echo
	echo "Process start alone (\`gpuvm --version\`, same binary): median $(awk -v x="$base_med" 'BEGIN { printf "%.2f", x / 1000 }') ms" \
		"(min $(awk -v x="$base_min" 'BEGIN { printf "%.2f", x / 1000 }') ms), CPU $(awk -v x="$base_cpu" 'BEGIN { printf "%.2f", x / 1000 }') ms," \
		"peak RSS $base_rss KiB: exec and page faults cost this much on this machine before gpuvm does any work."
	echo
	echo "## Targets"
	echo
	targets
	echo
	missed_notes
	echo
	echo "## The syscall floor"
	echo
	echo "The fewest plain synchronous syscalls that fetch every piece of information the run"
	echo "used, each once, and make every change it made (bench/floor.awk, from the run's"
	echo "\`strace -ff -y\` trace): a file read is open + read + close (3); an absent path or an"
	echo "existence test 1; a symlink read 1; a directory listing open + getdents with a 64 KiB"
	echo "buffer + the final empty getdents + close; a write open + write + close (3), not"
	echo "deduplicated; a rename or a created directory 1; one write per output stream; the"
	echo "process execve + arch_prctl + set_tid_address + exit_group (4). Not in the floor: memory"
	echo "(brk, mmap, munmap), fcntl, fstat, repeated reads, fsync (a no-op on /run's tmpfs at"
	echo "boot) and the writer process that bounds each write in time (socketpair, fork, its"
	echo "stdio and close_range, the request and the answer on its socket: 4 calls a write, wait4)."
	echo "The part that grows with the machine is 3 per function: the uevent (open, read, close)."
	echo "IOMMU groups are read only for the devices a plan can touch: their iommu_group links"
	echo "and each of their groups' listing (/sys/kernel/iommu_groups/N/devices). The floor takes"
	echo "the set of files gpuvm reads as needed: it measures how dearly gpuvm reads, not whether"
	echo "it reads too much. It closes each file on its own; gpuvm closes its uevent descriptors"
	echo "64 at a time with close_range(2) (one call a run of consecutive ones), so a run"
	echo "that is mostly reads can come in under it (a ratio below 1)."
	echo
	echo "| workload | command | functions | per function: uevent | iommu_group links | listings | other reads | writes | process + output | floor | gpuvm | ratio | forks |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	floors
	echo
	echo "## Where the cost is (generated)"
	echo
	for k in $PROFILED; do
		[ -f "$OUT/trace-$k.calls" ] || continue
		echo "\`${k%-*} ${k##*-}\` syscalls, most frequent: $(calls "$k")."
		echo
		if [ -s "$OUT/prof-$k.txt" ]; then
			echo "\`${k%-*} ${k##*-}\` instructions, inclusive (callgrind, main process):"
			echo
			cat "$OUT/prof-$k.txt"
			echo
		fi
	done
	echo "## Fixture build (not part of gpuvm's cost)"
	echo
	echo "| workload | functions | files and links | MiB | mkfixture time |"
	echo "|---|---|---|---|---|"
	fixtures
	echo
	echo "Apply writes into its tree. run.sh saves every file apply may write (sys/bus, each"
	echo "driver_override, run/), makes one probe run, finds what it changed (driver_override,"
	echo "the drivers' unbind, drivers_probe, run/gpuvm/state.json) and puts exactly that back"
	echo "before each timed run, untimed; it stops if apply changed anything it did not save, and"
	echo "checks that nothing differs after a restore. Under \`--root\` apply loads no module and"
	echo "verifies no binding, so it measures reading, planning and writing only."
} >"$REPORT.tmp"
mv "$REPORT.tmp" "$REPORT"
[ "$REPORT" = "$OUT/RESULTS.md" ] || cp "$REPORT" "$OUT/RESULTS.md"

# the same on the terminal
sed -n '/^## Results/,/^## The syscall floor/p' "$REPORT" | sed '$d'
log "written: $REPORT"
if [ -n "$TREES_TMP" ] && [ -z "$KEEP" ]; then
	rm -rf "$TREES"	# memory: keep it with BENCH_KEEP=1
fi
