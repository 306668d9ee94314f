#!/bin/sh
# Build the static musl libraries gpuvm links against, from Debian bookworm's
# source packages:
#
#   OUTDIR/lib/libkmod.a   OUTDIR/include/libkmod.h        (kmod; .ko.xz/.ko.zst)
#   OUTDIR/lib/libblkid.a  OUTDIR/include/blkid/blkid.h    (util-linux)
#   OUTDIR/lib/liblzma.a   OUTDIR/include/lzma.h, lzma/    (xz-utils; decoder only)
#   OUTDIR/lib/libzstd.a   OUTDIR/include/zstd.h ...       (libzstd; decompressor only)
#   OUTDIR/uapi/           kernel UAPI headers (symlinks) for -isystem
#   OUTDIR/VERSIONS        "<source package> <Debian version>", one per line; a library
#                          built from an older source than the archive's newest (below) has
#                          a third word, "older-than=<the archive's newest version>"
#   OUTDIR/NOTICES         each library's licence as its source package (musl: musl-dev)
#                          carries it, with its version: the binary's third-party notices
#   OUTDIR/FLAGS           the flags the libraries were built with; others rebuild them
#
# The libraries are built with -ffile-prefix-map: no path of this machine (their __FILE__
# in libkmod's and libblkid's messages) reaches the binary, so a build in another
# directory gives the same bytes.
#
# Usage: sh scripts/deps.sh [--arch ARCH] [--allow-older] [--fetch SRCPKG] OUTDIR
#                                                    (e.g. build/deps)
#
# --arch arm64 cross-builds the same libraries for aarch64 (e.g. into build/arm64/deps):
# musl and its musl-gcc come from Debian's musl-dev:arm64 through scripts/sysroot.sh
# (into $(dirname OUTDIR)), the kernel headers from linux-libc-dev-arm64-cross, the
# toolchain is gcc-aarch64-linux-gnu. Without --arch: the host's (x86_64) musl-gcc.
#
# Sources are fetched with apt-get source through a private apt state under
# $(dirname OUTDIR)/deps-src/apt (deb-src lines mirroring the system's deb entries, or those of
# the file DEPS_APT_SOURCES names: a mirror or a snapshot of one's own); the system's apt
# configuration is not touched. Downloads, build trees and logs live in
# $(dirname OUTDIR)/deps-src. Re-running is cheap: finished libraries are skipped, and when
# everything is there the script prints "deps: up to date" and exits.
#
# Each library is built from the newest version of its source package the archive lists: a
# security update is in its -security suite the day it is out. When that version cannot be
# downloaded (a mirror that lags its index, a file gone), the build stops with an error that
# names it. --allow-older (or DEPS_ALLOW_OLDER=1 in the environment, which make passes on)
# builds from the newest older version that can be downloaded instead, and says so: the
# library's VERSIONS line carries "older-than=NEWEST", the build's last lines warn, and the
# SBOM the packages carry (packaging/sbom.sh) says it of that library. Such a source is not
# reused as it stands by a later run: that run asks the archive again.
#
# --fetch SRCPKG only resolves and fetches SRCPKG's source, as a build would, and prints the
# VERSIONS line it would get (nothing is built; OUTDIR names where deps-src/ is).
set -eu

usage() {
	echo "usage: sh scripts/deps.sh [--arch ARCH] [--allow-older] [--fetch SRCPKG] OUTDIR" >&2
	exit 2
}
ARCH=
ALLOW_OLDER=
FETCH_ONLY=
case ${DEPS_ALLOW_OLDER-} in
'' | 0) ;;
1) ALLOW_OLDER=1 ;;
*) echo "deps: DEPS_ALLOW_OLDER=$DEPS_ALLOW_OLDER: 1 or nothing" >&2; exit 2 ;;
esac
while [ $# -gt 1 ]; do
	case $1 in
	--arch) ARCH=$2; shift 2 ;;
	--allow-older) ALLOW_OLDER=1; shift ;;
	--fetch) FETCH_ONLY=$2; shift 2 ;;
	*) usage ;;
	esac
done
if [ $# -ne 1 ] || [ -z "$1" ]; then
	usage
fi
# The cross toolchain's triplet; empty for the host's own build.
case $ARCH in
'' | amd64 | x86_64) ARCH='' TRIPLET='' ;;
arm64 | aarch64) ARCH=arm64 TRIPLET=aarch64-linux-gnu ;;
*) echo "deps: unsupported --arch $ARCH (arm64)" >&2; exit 2 ;;
esac

case $1 in
/*) OUT=$1 ;;
*) OUT=$(pwd)/$1 ;;
esac
OUT=${OUT%/}
SRC=$(dirname "$OUT")/deps-src

DEPLIBS="zstd lzma kmod blkid"
# Debian source package of each library, in the same order as DEPLIBS.
srcpkg() {
	case $1 in
	zstd) echo libzstd ;;
	lzma) echo xz-utils ;;
	kmod) echo kmod ;;
	blkid) echo util-linux ;;
	esac
}

FLAGS="-Os -ffunction-sections -fdata-sections -ffile-prefix-map=$SRC/="
# libzstd and liblzma are built for the binary's size (held under 512 KiB, the Makefile's
# SIZE_BUDGET). libzstd (its lib/README.md, "Modular build"): only the single-symbol Huffman
# decoder and the short-offset sequence decoder (8 KiB less, as fast on modules), and no
# forced inlining (16 KiB less). liblzma: the small build (CRC tables computed at the first
# use, the decoder's loops not unrolled) with the CRC32 and CRC64 checks only (28 KiB less
# with both). The price, measured with callgrind on libkmod
# reading trixie's four vfio modules (479 KiB unpacked): 4.1M more instructions for them as
# .ko.xz (39.5M, +12 %), 4.4M more as .ko.zst (14.1M, +45 %), about a millisecond of a real
# boot. The kernel's modules_install writes .ko.xz with --check=crc32; a stream with a
# SHA-256 check still decodes (libkmod does not ask liblzma to refuse an unsupported check),
# unverified: an integrity check only, the module's signature is the kernel's to check.
ZSTD_DEFS="-DHUF_FORCE_DECOMPRESS_X1 -DZSTD_FORCE_DECOMPRESS_SEQUENCES_SHORT -DZSTD_NO_INLINE"
LZMA_SMALL="--enable-small --enable-checks=crc32,crc64"
# The record of how the libraries were built: any change rebuilds every one.
RECORD="$FLAGS; zstd $ZSTD_DEFS; lzma $LZMA_SMALL"
uptodate=1
if [ -n "$FETCH_ONLY" ]; then
	uptodate=0 # and OUT is left as it is
else
	[ -f "$OUT/VERSIONS" ] || uptodate=0
	[ -f "$OUT/NOTICES" ] || uptodate=0
	if [ "$(cat "$OUT/FLAGS" 2>/dev/null)" != "$RECORD" ]; then
		uptodate=0
		rm -rf "$OUT/.done" # built otherwise: every library again
	fi
	[ -d "$OUT/uapi/linux" ] || uptodate=0
	for l in $DEPLIBS; do
		[ -f "$OUT/lib/lib$l.a" ] || uptodate=0
	done
fi
if [ "$uptodate" = 1 ]; then
	touch "$OUT/VERSIONS" # newer than this script: make asks no more
	echo "deps: up to date"
	# A library an earlier run built from an older source stays so until OUT goes.
	awk '$3 ~ /^older-than=/ { sub(/^older-than=/, "", $3)
		printf "deps: WARNING: %s %s is older than the archive'"'"'s newest, %s (%s)\n", $1, $2, $3, FILENAME }' \
		"$OUT/VERSIONS" >&2
	exit 0
fi

start=$(date +%s)

# Settings inherited from a calling make (command-line variables travel in
# MAKEFLAGS) or from the environment must not reach the libraries' builds.
unset MAKEFLAGS MFLAGS MAKEOVERRIDES MAKELEVEL GNUMAKEFLAGS \
	CC CPP CFLAGS CPPFLAGS LDFLAGS LIBS CROSS_COMPILE DESTDIR

tools="musl-gcc make ar apt-get apt-cache dpkg-source dpkg gcc"
[ -z "$TRIPLET" ] || tools="$TRIPLET-gcc $TRIPLET-ar $TRIPLET-ranlib make apt-get apt-cache dpkg-source dpkg"
[ -z "$FETCH_ONLY" ] || tools="apt-get apt-cache dpkg-source dpkg"
for tool in $tools; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "deps: '$tool' not found; run scripts/install-packages.sh first" >&2
		exit 1
	fi
done

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/apt-private.sh
. "$here/apt-private.sh"

CC=musl-gcc
AR='ar'
# Cross builds: configure's --host, and the archiver for the make-driven libraries.
HOSTARGS=
CROSSMAKE=
if [ -n "$TRIPLET" ] && [ -z "$FETCH_ONLY" ]; then
	sh "$here/sysroot.sh" "$ARCH" "$(dirname "$OUT")" || exit 1
	CC=$(dirname "$OUT")/bin/musl-gcc
	AR=$TRIPLET-ar
	HOSTARGS=--host=$TRIPLET
	CROSSMAKE="AR=$TRIPLET-ar RANLIB=$TRIPLET-ranlib"
fi
CFLAGS=$FLAGS
JOBS=2
UAPI=$OUT/uapi
LOGS=$SRC/logs
[ -n "$FETCH_ONLY" ] || mkdir -p "$OUT/lib" "$OUT/include" "$OUT/.done"
mkdir -p "$SRC" "$LOGS"

# say MESSAGE: one progress line.
say() {
	echo "deps: $*"
}

# run LOG STEP CMD...: run CMD with its output appended to LOG; on failure
# show the end of LOG and stop.
run() {
	run_log=$1
	run_step=$2
	shift 2
	say "$run_step"
	if ! "$@" >>"$run_log" 2>&1; then
		echo "deps: FAILED: $run_step; last lines of $run_log:" >&2
		tail -n 40 "$run_log" >&2
		exit 1
	fi
}

# ---------------------------------------------------------------------------
# Kernel UAPI headers. musl-gcc searches only musl's headers; adding
# -I/usr/include would pull in glibc's and break the build, so expose just the
# kernel's folders through a directory of symlinks.
# ---------------------------------------------------------------------------
if [ -n "$FETCH_ONLY" ]; then
	: # no headers: nothing is built
elif [ -n "$TRIPLET" ]; then
	# linux-libc-dev-ARCH-cross: the kernel's headers for that architecture only.
	incdir=/usr/$TRIPLET/include
	asmdir=$incdir/asm
else
	multiarch=$(gcc -print-multiarch 2>/dev/null || true)
	if [ -z "$multiarch" ]; then
		multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || true)
	fi
	incdir=/usr/include
	asmdir=/usr/include/$multiarch/asm
	[ -n "$multiarch" ] || asmdir=
fi
if [ -z "$FETCH_ONLY" ]; then
	if [ -z "$asmdir" ] || [ ! -d "$asmdir" ] || [ ! -d "$incdir/linux" ]; then
		echo "deps: kernel headers not found ($incdir/linux, $asmdir); install linux-libc-dev" >&2
		exit 1
	fi
	mkdir -p "$UAPI"
	for d in linux asm-generic mtd; do
		ln -sfn "$incdir/$d" "$UAPI/$d"
	done
	ln -sfn "$asmdir" "$UAPI/asm"
fi

# ---------------------------------------------------------------------------
# Sources: apt-get source through a private apt state.
# ---------------------------------------------------------------------------
APTDIR=$SRC/apt
DL=$SRC/dl

# apt_private (scripts/apt-private.sh) runs apt on the private state in $APTDIR, whose
# deb-src lines mirror the system's deb entries.

NL='
'

# versions_sort: sort the Debian versions on stdin (one a line), newest first.
versions_sort() {
	vn_rest=$(sort -u)
	while [ -n "$vn_rest" ]; do
		vn_best=
		for v in $vn_rest; do
			if [ -z "$vn_best" ] || dpkg --compare-versions "$v" gt "$vn_best"; then
				vn_best=$v
			fi
		done
		echo "$vn_best"
		vn_rest=$(printf '%s\n' "$vn_rest" | grep -vxF -e "$vn_best" || true)
	done
}

# Print the versions of source package $1 known to the private apt state,
# newest first.
versions_newest_first() {
	apt_private apt-cache showsrc --only-source "$1" 2>/dev/null |
		sed -n 's/^Version: //p' | versions_sort
}

apt_ready=0
apt_update() {
	[ "$apt_ready" = 1 ] && return 0
	mkdir -p "$DL"
	apt_private_init "$APTDIR" deb-src
	if [ -n "${DEPS_APT_SOURCES-}" ]; then
		[ -f "$DEPS_APT_SOURCES" ] || { echo "deps: DEPS_APT_SOURCES=$DEPS_APT_SOURCES: no such file" >&2; exit 1; }
		grep '^deb-src ' "$DEPS_APT_SOURCES" >"$APTDIR/sources.list" ||
			{ echo "deps: DEPS_APT_SOURCES=$DEPS_APT_SOURCES has no deb-src line" >&2; exit 1; }
	fi
	run "$LOGS/apt.log" "apt-get update (private lists in $APTDIR)" \
		apt_private apt-get update
	apt_ready=1
}

# fetch PKG: download and unpack (with Debian's patches applied) the newest
# version of source package PKG the archive lists; sets SRCDIR, SRCVER and SRCOLDER (empty, or
# the archive's newest version when SRCVER is an older one). A newest version the archive
# lists but does not serve stops the build, unless ALLOW_OLDER (--allow-older,
# DEPS_ALLOW_OLDER=1) lets the newest older one that it serves stand in.
fetch() {
	fetch_pkg=$1
	SRCOLDER=
	# Sources unpacked by an earlier run are reused as they are (newest first); remove $SRC
	# to fetch again. Not one that stood in for a newer version: the archive is asked again.
	fetch_have=
	for d in "$SRC/$fetch_pkg"-*/.deps-unpacked; do
		[ -f "$d" ] || continue
		d=${d%/.deps-unpacked}
		[ ! -f "$d/.deps-older-than" ] || continue
		fetch_have="$fetch_have$NL${d#"$SRC/$fetch_pkg"-}"
	done
	if [ -n "$fetch_have" ]; then
		SRCVER=$(printf '%s\n' "$fetch_have" | sed '/^$/d' | versions_sort)
		SRCVER=${SRCVER%%"$NL"*}
		SRCDIR=$SRC/$fetch_pkg-$SRCVER
		return 0
	fi
	apt_update
	fetch_vers=$(versions_newest_first "$fetch_pkg")
	if [ -z "$fetch_vers" ]; then
		echo "deps: no source package '$fetch_pkg' in $APTDIR/sources.list" >&2
		exit 1
	fi
	fetch_newest=${fetch_vers%%"$NL"*}
	for v in $fetch_vers; do
		SRCVER=$v
		SRCDIR=$SRC/$fetch_pkg-$v
		[ "$v" = "$fetch_newest" ] || SRCOLDER=$fetch_newest
		if [ -f "$SRCDIR/.deps-unpacked" ]; then
			fetch_older_mark
			return 0
		fi
		if ! (cd "$DL" && apt_private apt-get source --only-source \
			--download-only "$fetch_pkg=$v") >>"$LOGS/apt.log" 2>&1; then
			if [ -z "$ALLOW_OLDER" ]; then
				echo "deps: $fetch_pkg $v, the archive's newest, cannot be downloaded (apt-get source; $LOGS/apt.log):" >&2
				tail -n 5 "$LOGS/apt.log" >&2
				echo "deps: an older source would miss what $v fixes (a security update); try again later or from another mirror, or build from the newest older one that can be had, said so in VERSIONS and the SBOM: DEPS_ALLOW_OLDER=1 (or --allow-older)" >&2
				exit 1
			fi
			say "$fetch_pkg $v: not downloadable, trying an older version (DEPS_ALLOW_OLDER)"
			continue
		fi
		rm -rf "$SRCDIR" "$SRCDIR.tmp"
		run "$LOGS/apt.log" "unpack $fetch_pkg $v" \
			dpkg-source -x "$DL/${fetch_pkg}_${v#*:}.dsc" "$SRCDIR.tmp"
		mv "$SRCDIR.tmp" "$SRCDIR"
		# dpkg-source copies the upstream tarballs beside the target; dl/
		# has them already.
		rm -f "$SRC/${fetch_pkg}_"*.orig.tar.* "$SRC/${fetch_pkg}_"*.orig-*.tar.*
		touch "$SRCDIR/.deps-unpacked"
		fetch_older_mark
		return 0
	done
	echo "deps: could not download any version of $fetch_pkg ($(echo "$fetch_vers" | tr '\n' ' '))" >&2
	tail -n 20 "$LOGS/apt.log" >&2
	exit 1
}

# fetch_older_mark: a source that stands in for a newer one says so in its folder (a later run
# does not take it as it stands); one that does not, has no such mark.
fetch_older_mark() {
	if [ -n "$SRCOLDER" ]; then
		echo "$SRCOLDER" >"$SRCDIR/.deps-older-than"
		say "WARNING: $fetch_pkg $SRCVER stands in for $SRCOLDER, the archive's newest"
	else
		rm -f "$SRCDIR/.deps-older-than"
	fi
}

# versions_line PKG: the VERSIONS line of source package PKG, built from SRCVER (SRCOLDER: the
# archive's newer version it stands in for).
versions_line() {
	echo "$1 $SRCVER${SRCOLDER:+ older-than=$SRCOLDER}"
}

if [ -n "$FETCH_ONLY" ]; then
	fetch "$FETCH_ONLY"
	versions_line "$FETCH_ONLY"
	exit 0
fi

# use_src LIB: set SRCDIR, SRCVER and SRCOLDER to the sources fetched for LIB.
use_src() {
	eval "SRCDIR=\$srcdir_$1 SRCVER=\$srcver_$1 SRCOLDER=\$srcolder_$1"
}

# done_lib LIB: record that LIB is installed in OUT, built from SRCVER.
done_lib() {
	versions_line "$(srcpkg "$1")" >"$OUT/.done/$1"
}

is_done() {
	[ -f "$OUT/.done/$1" ] && [ -f "$OUT/lib/lib$1.a" ]
}

# configure_once LOG DIR ARGS...: run ./configure ARGS in DIR unless the last
# successful run there used the same arguments.
configure_once() {
	co_log=$1
	co_dir=$2
	shift 2
	set -- ${HOSTARGS:+"$HOSTARGS"} "$@"
	co_args="CC=$CC CFLAGS=$CFLAGS $*"
	if [ -f "$co_dir/.deps-configured" ] &&
		[ "$(cat "$co_dir/.deps-configured")" = "$co_args" ]; then
		return 0
	fi
	rm -f "$co_dir/.deps-configured"
	: >"$co_log"
	# configured before with other arguments: its objects were built for those (no
	# dependency tracking would tell make so)
	if [ -f "$co_dir/Makefile" ]; then
		run "$co_log" "clean $(basename "$co_dir")" make -C "$co_dir" clean
	fi
	run "$co_log" "configure $(basename "$co_dir")" \
		env -C "$co_dir" CC="$CC" CFLAGS="$CFLAGS" ./configure "$@"
	echo "$co_args" >"$co_dir/.deps-configured"
}

# warn_if_autotools_ran LOG: the touch trick below must keep make from
# regenerating configure/Makefile.in with the host's autotools.
warn_if_autotools_ran() {
	if grep -Eq '(^|[ /])(aclocal|automake|autoconf|autoheader)(-[0-9.]+)?( |$)' "$1"; then
		say "WARNING: make re-ran autotools, see $1"
	fi
}

# ---------------------------------------------------------------------------
# libzstd: decompressor only, single-threaded, no legacy formats.
# ---------------------------------------------------------------------------
build_zstd() {
	use_src zstd
	log=$LOGS/zstd.log
	: >"$log"
	# shellcheck disable=SC2086 # CROSSMAKE: none, or several make variables
	run "$log" "build libzstd $SRCVER" \
		make -C "$SRCDIR/lib" -j"$JOBS" libzstd.a CC="$CC" CFLAGS="$CFLAGS $ZSTD_DEFS" $CROSSMAKE \
		ZSTD_LIB_COMPRESSION=0 ZSTD_LIB_DICTBUILDER=0 ZSTD_LIB_DEPRECATED=0 \
		ZSTD_LEGACY_SUPPORT=0
	cp "$SRCDIR/lib/zstd.h" "$SRCDIR/lib/zstd_errors.h" "$OUT/include/"
	cp "$SRCDIR/lib/libzstd.a" "$OUT/lib/libzstd.a.tmp"
	mv "$OUT/lib/libzstd.a.tmp" "$OUT/lib/libzstd.a"
	done_lib zstd
}

# ---------------------------------------------------------------------------
# liblzma: decoders only, no threads, no tools.
# ---------------------------------------------------------------------------
build_lzma() {
	use_src lzma
	log=$LOGS/lzma-make.log
	: >"$log"
	# shellcheck disable=SC2086 # LZMA_SMALL: two options
	configure_once "$LOGS/lzma-configure.log" "$SRCDIR" \
		--disable-shared --enable-static --disable-encoders \
		--disable-threads --disable-xz --disable-xzdec --disable-lzmadec \
		--disable-lzmainfo --disable-lzma-links --disable-scripts \
		--disable-doc --disable-nls --disable-rpath \
		--disable-dependency-tracking $LZMA_SMALL
	run "$log" "build liblzma $SRCVER" \
		make -C "$SRCDIR/src/liblzma" -j"$JOBS" liblzma.la
	warn_if_autotools_ran "$log"
	rm -rf "$OUT/include/lzma"
	cp "$SRCDIR/src/liblzma/api/lzma.h" "$OUT/include/"
	cp -R "$SRCDIR/src/liblzma/api/lzma" "$OUT/include/lzma"
	cp "$SRCDIR/src/liblzma/.libs/liblzma.a" "$OUT/lib/liblzma.a.tmp"
	mv "$OUT/lib/liblzma.a.tmp" "$OUT/lib/liblzma.a"
	done_lib lzma
}

# ---------------------------------------------------------------------------
# libkmod: kmod's build system has no static library, so compile
# libkmod/*.c and shared/*.c directly against a config.h written here. The
# HAVE_* answers are probed with musl-gcc the way kmod's configure.ac would.
# ---------------------------------------------------------------------------

# probe NAME PROGRAM: 1 if PROGRAM compiles and links with musl-gcc, else 0.
probe() {
	printf '%s\n' "$2" >"$KB/probe-$1.c"
	if $CC -isystem "$UAPI" -o "$KB/probe-$1" "$KB/probe-$1.c" >>"$KB/probe.log" 2>&1; then
		echo 1
	else
		echo 0
	fi
}

# define NAME 0|1: a config.h line in autoconf's style for AC_CHECK_FUNCS /
# AC_CHECK_HEADERS results (defined or not).
define_if() {
	if [ "$2" = 1 ]; then
		echo "#define $1 1"
	else
		echo "/* #undef $1 */"
	fi
}

write_kmod_config() {
	p_secure_getenv=$(probe secure_getenv '#define _GNU_SOURCE 1
#include <stdlib.h>
int main(void) { return secure_getenv("X") != 0; }')
	p___secure_getenv=$(probe __secure_getenv '#define _GNU_SOURCE 1
#include <stdlib.h>
char *__secure_getenv(const char *);
int main(void) { return __secure_getenv("X") != 0; }')
	p_finit_module=$(probe finit_module '#define _GNU_SOURCE 1
#include <unistd.h>
int finit_module(int, const char *, int);
int main(void) { return finit_module(-1, "", 0); }')
	p_strndupa=$(probe strndupa '#define _GNU_SOURCE 1
#include <string.h>
int main(void) {
#ifndef strndupa
	(void)strndupa;
#endif
	return 0; }')
	p_be32toh=$(probe be32toh '#define _GNU_SOURCE 1
#include <endian.h>
int main(void) {
#ifndef be32toh
	(void)be32toh;
#endif
	return 0; }')
	p_module_h=$(probe module_h '#include <linux/module.h>
int main(void) { return MODULE_INIT_IGNORE_VERMAGIC; }')
	p_st_mtim=$(probe st_mtim '#define _GNU_SOURCE 1
#include <sys/stat.h>
int main(void) { struct stat st; return (int)sizeof(st.st_mtim); }')
	p_uaddl=$(probe uaddl 'int main(void) { unsigned long r; return __builtin_uaddl_overflow(1UL, 2UL, &r); }')
	p_uaddll=$(probe uaddll 'int main(void) { unsigned long long r; return __builtin_uaddll_overflow(1ULL, 2ULL, &r); }')
	p_static_assert=$(probe static_assert '_Static_assert(1, "x");
int main(void) { return 0; }')
	p_noreturn=$(probe noreturn '#include <stdlib.h>
_Noreturn static void f(void) { exit(0); }
int main(void) { f(); }')

	kver=${SRCVER%%+*}
	kver=${kver#*:}
	{
		echo "/* config.h for libkmod, written by scripts/deps.sh for musl-gcc */"
		echo "#define _GNU_SOURCE 1"
		echo "#define _ALL_SOURCE 1"
		echo "#define PACKAGE \"kmod\""
		echo "#define VERSION \"$kver\""
		echo "#define KMOD_FEATURES \"+ZSTD +XZ -ZLIB -LIBCRYPTO\""
		echo "#define SYSCONFDIR \"/etc\""
		echo "#define ENABLE_LOGGING 1"
		echo "#define ENABLE_XZ 1"
		echo "#define ENABLE_ZSTD 1"
		echo "/* #undef ENABLE_ZLIB */"
		echo "/* #undef ENABLE_OPENSSL */"
		echo "/* #undef ENABLE_DEBUG */"
		define_if HAVE_SECURE_GETENV "$p_secure_getenv"
		define_if HAVE___SECURE_GETENV "$p___secure_getenv"
		define_if HAVE_FINIT_MODULE "$p_finit_module"
		# AC_CHECK_DECLS always defines, to 0 or 1.
		echo "#define HAVE_DECL_STRNDUPA $p_strndupa"
		echo "#define HAVE_DECL_BE32TOH $p_be32toh"
		define_if HAVE_LINUX_MODULE_H "$p_module_h"
		define_if HAVE_STRUCT_STAT_ST_MTIM "$p_st_mtim"
		define_if HAVE___BUILTIN_UADDL_OVERFLOW "$p_uaddl"
		define_if HAVE___BUILTIN_UADDLL_OVERFLOW "$p_uaddll"
		define_if HAVE_STATIC_ASSERT "$p_static_assert"
		define_if HAVE_NORETURN "$p_noreturn"
	} >"$KB/config.h.new"
	mv "$KB/config.h.new" "$KB/config.h"
}

build_kmod() {
	use_src kmod
	log=$LOGS/kmod.log
	: >"$log"
	KB=$SRCDIR/deps-build
	mkdir -p "$KB"
	: >"$KB/probe.log"
	say "probe musl for libkmod's config.h"
	write_kmod_config
	cat "$KB/config.h" >>"$log"

	# A small makefile so the compile runs in parallel. The object names
	# are the sources' basenames (libkmod-*.c and shared/*.c do not clash).
	objs=
	for c in "$SRCDIR"/libkmod/*.c "$SRCDIR"/shared/*.c; do
		objs="$objs $(basename "$c" .c).o"
	done
	{
		echo "CC = $CC"
		echo "AR = $AR"
		echo "CFLAGS = $CFLAGS"
		echo "CPPFLAGS = -include config.h -I$SRCDIR -I$OUT/include -isystem $UAPI"
		echo "OBJS =$objs"
		echo "vpath %.c $SRCDIR/libkmod $SRCDIR/shared"
		# (<<- strips tabs, hence the recipe prefix.)
		cat <<-'EOF'
			.RECIPEPREFIX = >
			libkmod.a: $(OBJS)
			> rm -f $@ && $(AR) rcs $@ $(OBJS)
			%.o: %.c config.h
			> $(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<
		EOF
	} >"$KB/Makefile"
	run "$log" "build libkmod $SRCVER" make -C "$KB" -j"$JOBS" libkmod.a
	cp "$SRCDIR/libkmod/libkmod.h" "$OUT/include/"
	cp "$KB/libkmod.a" "$OUT/lib/libkmod.a.tmp"
	mv "$OUT/lib/libkmod.a.tmp" "$OUT/lib/libkmod.a"
	done_lib kmod
}

# ---------------------------------------------------------------------------
# libblkid from util-linux, with Debian's patches.
# ---------------------------------------------------------------------------
build_blkid() {
	use_src blkid
	log=$LOGS/blkid-make.log
	: >"$log"
	# Debian's patches touch configure.ac and some Makemodule.am files, which
	# would make make re-run aclocal/automake/autoconf. Their content changes
	# only concern programs we do not build, so date all autotools inputs back
	# to the tarball's Makefile.am (older than the generated files).
	if [ ! -f "$SRCDIR/.deps-touched" ]; then
		find "$SRCDIR" -path "$SRCDIR/debian" -prune -o -path "$SRCDIR/.pc" -prune -o \
			\( -name Makefile.am -o -name Makemodule.am -o -name configure.ac \
			-o -name '*.m4' \) -newer "$SRCDIR/configure" \
			-exec touch -r "$SRCDIR/Makefile.am" {} +
		touch "$SRCDIR/.deps-touched"
	fi
	configure_once "$LOGS/blkid-configure.log" "$SRCDIR" \
		CPPFLAGS="-isystem $UAPI" \
		--disable-all-programs --enable-libblkid \
		--disable-shared --enable-static \
		--disable-nls --disable-rpath --disable-asciidoc --disable-poman \
		--disable-bash-completion --disable-pylibmount \
		--disable-dependency-tracking --disable-makeinstall-chown \
		--disable-makeinstall-setuid \
		--without-python --without-systemd --without-udev \
		--without-ncursesw --without-ncurses --without-tinfo \
		--without-readline --without-slang --without-cap-ng \
		--without-selinux --without-audit --without-smack \
		--without-utempter --without-util --without-libz --without-libmagic \
		--without-user --without-btrfs --without-econf --without-cryptsetup
	run "$log" "build libblkid $SRCVER" make -C "$SRCDIR" -j"$JOBS" libblkid.la
	warn_if_autotools_ran "$log"
	mkdir -p "$OUT/include/blkid"
	cp "$SRCDIR/libblkid/src/blkid.h" "$OUT/include/blkid/"
	cp "$SRCDIR/.libs/libblkid.a" "$OUT/lib/libblkid.a.tmp"
	mv "$OUT/lib/libblkid.a.tmp" "$OUT/lib/libblkid.a"
	done_lib blkid
}

todo=
for l in $DEPLIBS; do
	if is_done "$l"; then
		say "lib$l.a already built"
	else
		todo="$todo $l"
	fi
done

# Every source first: one that cannot be had stops the build before anything is rebuilt (and
# VERSIONS still says what build/deps holds).
for l in $todo; do
	fetch "$(srcpkg "$l")"
	eval "srcdir_$l=\$SRCDIR srcver_$l=\$SRCVER srcolder_$l=\$SRCOLDER"
done
rm -f "$OUT/VERSIONS"

# util-linux's configure is the longest step and runs on one core: build
# libblkid in the background while the other libraries build.
bg_pid=
wait_bg() {
	if [ -n "$bg_pid" ]; then
		bg_status=0
		wait "$bg_pid" || bg_status=$?
		bg_pid=
		return "$bg_status"
	fi
}
trap 'wait_bg || true' EXIT
for l in $todo; do
	if [ "$l" = blkid ]; then
		build_blkid &
		bg_pid=$!
	fi
done
for l in $todo; do
	[ "$l" = blkid ] || "build_$l"
done
if ! wait_bg; then
	echo "deps: FAILED: libblkid (see above)" >&2
	exit 1
fi
trap - EXIT

rm -f "$OUT/VERSIONS.tmp"
for l in $DEPLIBS; do
	cat "$OUT/.done/$l" >>"$OUT/VERSIONS.tmp"
done
mv "$OUT/VERSIONS.tmp" "$OUT/VERSIONS"
printf '%s\n' "$RECORD" >"$OUT/FLAGS"

# ---------------------------------------------------------------------------
# NOTICES: what the static binary holds of each library, and its licence text.
# ---------------------------------------------------------------------------
# notice NAME PKG VERSION LICENCE FILE...: one section, the files as they are.
notice() {
	n_name=$1 n_pkg=$2 n_ver=$3 n_lic=$4
	shift 4
	printf '\n%s\n%s (Debian source package %s %s)\nLicence: %s\n' \
		"------------------------------------------------------------------------------" \
		"$n_name" "$n_pkg" "$n_ver" "$n_lic"
	for n_f in "$@"; do
		[ -f "$n_f" ] || { echo "deps: no $n_f for the notices" >&2; exit 1; }
		printf '\n[%s]\n\n' "${n_f#"$SRC/"}"
		cat "$n_f"
	done
}
src_of() {
	awk -v p="$1" '$1 == p { print $2 }' "$OUT/VERSIONS"
}
if [ -n "$TRIPLET" ]; then
	muslver=$(awk '$1 == "musl-dev" { print $2 }' "$(dirname "$OUT")/SYSROOT")
	muslcopy=$(dirname "$OUT")/musl/usr/share/doc/musl-dev/copyright
else
	muslver=$(dpkg-query -W -f='${Version}' musl-dev)
	muslcopy=/usr/share/doc/musl-dev/copyright
fi
zv=$(src_of libzstd) xv=$(src_of xz-utils) kv=$(src_of kmod) uv=$(src_of util-linux)
{
	printf '%s\n' "Third-party code in the static gpuvm binary" \
		"" \
		"gpuvm is under the MIT licence (LICENSE). Its static binary, /usr/sbin/gpuvm, also" \
		"holds code of the libraries below, built from Debian 12's source packages of the" \
		"versions named (scripts/deps.sh in gpuvm's tree fetches and builds them; the same" \
		"sources are in Debian's archive). Each section carries the licence as the source" \
		"package carries it."
	notice "musl (the C library)" musl "$muslver" MIT "$muslcopy"
	notice "libkmod" kmod "$kv" LGPL-2.1-or-later "$SRC/kmod-$kv/libkmod/COPYING"
	notice "libblkid" util-linux "$uv" LGPL-2.1-or-later "$SRC/util-linux-$uv/libblkid/COPYING" \
		"$SRC/util-linux-$uv/Documentation/licenses/COPYING.LGPL-2.1-or-later"
	notice "liblzma (decoder)" xz-utils "$xv" "public domain" "$SRC/xz-utils-$xv/COPYING"
	notice "libzstd (decompressor)" libzstd "$zv" "BSD-3-Clause OR GPL-2.0-only" \
		"$SRC/libzstd-$zv/LICENSE" "$SRC/libzstd-$zv/COPYING"
} >"$OUT/NOTICES.tmp"
mv "$OUT/NOTICES.tmp" "$OUT/NOTICES"

say "done in $(($(date +%s) - start)) s:"
sed 's/^/deps:   /' "$OUT/VERSIONS"
awk '$3 ~ /^older-than=/ { sub(/^older-than=/, "", $3)
	printf "deps: WARNING: %s %s is older than the archive'"'"'s newest, %s (DEPS_ALLOW_OLDER)\n", $1, $2, $3 }' \
	"$OUT/VERSIONS" >&2
