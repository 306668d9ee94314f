#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# bench/sizemap.sh, what make bench says of the binary's size: the map of the unstripped link
# of build/gpuvm's objects and libraries (bench/syms.mk), read into each part's bytes, and the
# units apply reaches told from those only the host-side commands reach.

load helpers

@test "bench/sizemap.sh: the parts add up to the image, apply's units on the boot path, dump's host-side only" {
	built gpuvm
	run make --no-print-directory -s -C "$TOP" -f Makefile -f bench/syms.mk build/bench/gpuvm.syms
	assert_success
	[ -s "$TOP/build/bench/gpuvm.syms.map" ]
	run sh "$TOP/bench/sizemap.sh" "$TOP/build/bench/gpuvm.syms.map" "$TOP/build/obj"
	assert_success
	rows=$(printf '%s\n' "$output" | grep '^| ' | grep -v '^| part \|^| all ')
	# every library gpuvm links, and gpuvm's own two shares
	for p in 'gpuvm: the units the boot path' 'gpuvm: the units only the host-side' libblkid.a \
		libkmod.a libzstd.a liblzma.a 'musl libc and libgcc'; do
		printf '%s\n' "$rows" | grep -qF "| $p" || fail "no row for $p"
	done
	# the rows add up to the "all" row, which is the loaded image: at most the file's size
	# (headers, alignment and the symbol table besides), and most of the stripped binary
	sum=$(printf '%s\n' "$rows" | awk -F '|' '{ s += $3 } END { print s }')
	all=$(printf '%s\n' "$output" | awk -F '|' '/^\| all / { print $3 + 0 }')
	[ "$sum" -eq "$all" ]
	# gpuvm's objects are its own two rows, never taken for a library
	if printf '%s\n' "$rows" | grep -q '\.o |'; then fail "an object in a row of its own: $rows"; fi
	size=$(stat -c %s "$TOP/build/gpuvm")
	[ "$all" -le "$size" ]
	[ "$((all * 10))" -ge "$((size * 9))" ]
	# apply's own units are on the boot path; dump's tar writer and check are not
	boot=$(printf '%s\n' "$output" | sed -n "s/^The boot path's units, largest first (bytes): //p")
	host=$(printf '%s\n' "$output" | sed -n 's/^The host-side units, largest first (bytes): //p')
	for u in cmd/apply.o boot/execute.o boot/rootio.o boot/kmod.o boot/inventory.o boot/plan.o; do
		case ", $boot" in *", $u "*) ;; *) fail "$u is not on the boot path: $boot" ;; esac
	done
	for u in cmd/dump.o tools/tarw.o tools/check.o cmd/kubevirt.o tools/live.o tools/nextboot.o; do
		case ", $host" in *", $u "*) ;; *) fail "$u is not host-side only: $host" ;; esac
		case ", $boot" in *", $u "*) fail "$u is on the boot path" ;; esac
	done
	# and what the boot path reaches is boot/'s, but for the command it runs
	for u in $(printf '%s\n' "$boot" | tr ',' '\n' | awk '{ print $1 }'); do
		case $u in boot/*.o | cmd/apply.o | main.o) ;; *) fail "$u is on the boot path, not in src/boot/" ;; esac
	done
}

# bench/dra.sh, make bench's gpuvm-dra section: the real plugin, the API stand-in, the kubelet
# stand-in, strace. Its section replaces its own in the report, at the end, and keeps the rest
# (the boot path's sections before it, another's after it).
@test "bench/dra.sh: a prepare writes two files, a repeat none; no API request at rest; its section replaced, the others kept" {
	need "Debian's python3-grpcio and python3-grpc-tools" /usr/bin/python3 -c 'import grpc, grpc_tools'
	need strace command -v strace
	[ -x "$TOP/build/gpuvm-dra" ] || fail "no build/gpuvm-dra: make build/gpuvm-dra"
	local r=$BATS_TEST_TMPDIR/RESULTS.md
	printf '%s\n' '# Results' '' '## gpuvm-dra: prepare, unprepare, at rest' '' 'old figures' '' \
		'## the mirror' '' 'kept' >"$r"
	# fd 3 closed: a plugin the script left running must not hold the suite open
	DRA_BENCH_CLAIMS=2 DRA_BENCH_REST=2 run sh "$TOP/bench/dra.sh" "$r" 3>&-
	assert_success
	assert_line --regexp '^\| NodePrepareResources, first \| [0-9.]+ syscalls; 2\.0 files written \(renamed into place\), 2\.0 fsyncs \|$'
	assert_line --regexp '^\| the same claim prepared again \| [0-9.]+ syscalls; 0\.0 files written'
	assert_line --regexp '^\| API requests at rest, 2 s after the slices were published, the GPUs read every second \| 0 \|$'
	assert_line --regexp "^\| a prepare call's wall time, client start included \| median [0-9.]+ ms"
	run grep -c '^## ' "$r"
	assert_output 2
	run grep -n -e '^#' -e '^kept$' -e '^old figures$' "$r"
	assert_output "$(printf '%s\n' '1:# Results' '3:## the mirror' '5:kept' '7:## gpuvm-dra: prepare, unprepare, at rest')"
}
