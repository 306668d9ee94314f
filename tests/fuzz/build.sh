#!/bin/sh
# Build the libFuzzer harnesses: tests/fuzz/build.sh OUTDIR
#
# Each tests/fuzz/fuzz-NAME.c becomes OUTDIR/bin/NAME, linked against the parsers and the
# planner from src/ built with ASan, UBSan (every finding aborts) and libFuzzer's coverage.
# The sources go in as one archive, so a harness pulls in only what it calls; the fake
# kernel of the unit tests (tests/unit/fake-kernel.c) stands in for src/boot/rootio.c and
# src/boot/kmod.c where a parser's file also reads sysfs. A unit is found by its name in
# src/boot/ or src/tools/, and its includes by name, as the Makefile's SRC_INC has them.
#
# Environment: CC (default clang; clang 14 with libclang-rt-14-dev is what CI has),
# GPUVM_SRC (default src/: another tree, e.g. with a proposed fix applied).
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: tests/fuzz/build.sh OUTDIR}
src=${GPUVM_SRC:-$top/src}
# A CC inherited from make (cc, gcc) cannot build libFuzzer targets: only clang.
case ${CC:-} in
*clang*) cc=$CC ;;
*) cc=clang ;;
esac

# The parsers, the planner, JSON, and what they call (log, util; rootio via the fake kernel).
SRCS="util strpool log mode cmdline config writefile settings pci iommu iomem inventory pciproc plan vgpu json kvsnippet pciids tagspec nextboot names"

WARN="-Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-format-nonliteral"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
CFLAGS="-g -O1 -std=gnu11 -fno-omit-frame-pointer $WARN -D_GNU_SOURCE"

inc="-I$src -I$src/boot -I$src/tools"

mkdir -p "$out/obj" "$out/bin"
rm -f "$out/obj/"*.o "$out/libgpuvm-fuzz.a"

for f in $SRCS; do
	c=$src/boot/$f.c
	[ -f "$c" ] || c=$src/tools/$f.c
	# shellcheck disable=SC2086 # the flag lists split on purpose
	$cc $CFLAGS $SAN -fsanitize=fuzzer-no-link $inc -c -o "$out/obj/$f.o" "$c"
done
# shellcheck disable=SC2086
$cc $CFLAGS $SAN -fsanitize=fuzzer-no-link $inc -I"$top/tests/unit" \
	-c -o "$out/obj/fake-kernel.o" "$top/tests/unit/fake-kernel.c"
ar rcs "$out/libgpuvm-fuzz.a" "$out/obj/"*.o

n=0
for h in "$top"/tests/fuzz/fuzz-*.c; do
	name=$(basename "$h" .c)
	name=${name#fuzz-}
	# shellcheck disable=SC2086
	$cc $CFLAGS $SAN -fsanitize=fuzzer $inc -I"$top/tests/fuzz" \
		-o "$out/bin/$name" "$h" "$out/libgpuvm-fuzz.a"
	n=$((n + 1))
done
echo "fuzz: $n harnesses in $out/bin ($($cc --version | head -n 1))"
