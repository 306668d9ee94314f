# shellcheck shell=sh
# packaging/stage.sh — what deb.sh and rpm.sh share, sourced by both:
#     . "$here/stage.sh"
#     pkg_stage VERSION ARCH DIR
# pkg_stage: `make install DESTDIR=DIR/root PCI_IDS=build/pciids/pci.ids` (the files of the
# package are whatever `make install` installs; the pci.ids of scripts/pciids-ship.sh, make
# pciids, becomes /usr/share/gpuvm/pci.ids as it is), with the gpuvm binary of ARCH (amd64:
# build/gpuvm, arm64: build/arm64/gpuvm, checked with file(1)) in place of the x86_64 one
# make install puts there, and /usr/share/doc/gpuvm/THIRD-PARTY-NOTICES and gpuvm.spdx.json
# (sbom.sh) beside it. Sets PKG_TOP (the repo), PKG_ROOT (DIR/root), PKG_BIN (the binary),
# PKG_DEPS (the VERSIONS file of the static libraries it was linked with), PKG_MUSL (the
# version of Debian's musl-dev it was built with) and PKG_PCIIDS (the pci.ids). Dies when
# VERSION is not the version of packaging/changelog's first entry. pkg_built_using (after
# pkg_vars) prints the .deb's Built-Using.

pkg_die() {
	echo "${0##*/}: $*" >&2
	exit 1
}

# The version of packaging/changelog's first entry.
pkg_changelog_version() {
	sed -n '1s/^gpuvm (\([^)]*\)).*/\1/p' "$PKG_TOP/packaging/changelog"
}

# pkg_vars ARCH: PKG_TOP, PKG_BIN, PKG_DEPS and PKG_MUSL for ARCH, each checked.
pkg_vars() {
	PKG_TOP=$(cd "$(dirname "$0")/.." && pwd)
	case $1 in
	amd64)
		PKG_BIN=$PKG_TOP/build/gpuvm PKG_DEPS=$PKG_TOP/build/deps/VERSIONS want='x86-64' hint=make
		PKG_MUSL=$(dpkg-query -W -f='${Version}' musl-dev 2>/dev/null) || PKG_MUSL=''
		;;
	arm64)
		PKG_BIN=$PKG_TOP/build/arm64/gpuvm PKG_DEPS=$PKG_TOP/build/arm64/deps/VERSIONS want='ARM aarch64'
		hint='make arm64'
		PKG_MUSL=$(awk '$1 == "musl-dev" { print $2 }' "$PKG_TOP/build/arm64/SYSROOT" 2>/dev/null) || PKG_MUSL=''
		;;
	*) pkg_die "ARCH: amd64 or arm64, not $1" ;;
	esac
	[ -x "$PKG_BIN" ] || pkg_die "no $PKG_BIN ($hint)"
	file -b "$PKG_BIN" | grep -q "$want.*statically linked" ||
		pkg_die "$PKG_BIN is not a static $want binary: $(file -b "$PKG_BIN")"
	[ -f "$PKG_DEPS" ] || pkg_die "no $PKG_DEPS (the static libraries' versions)"
	[ -f "${PKG_DEPS%/*}/NOTICES" ] || pkg_die "no ${PKG_DEPS%/*}/NOTICES (scripts/deps.sh writes it)"
	[ -n "$PKG_MUSL" ] || pkg_die "cannot tell the version of musl-dev ($1)"
	PKG_PCIIDS=$PKG_TOP/build/pciids/pci.ids
	if [ ! -f "$PKG_PCIIDS" ] || [ ! -f "${PKG_PCIIDS%/*}/SOURCES" ]; then
		pkg_die "no $PKG_PCIIDS or no ${PKG_PCIIDS%/*}/SOURCES (make pciids)"
	fi
}

# pkg_built_using: Debian's Built-Using field for the binary of pkg_vars: each source package
# of PKG_DEPS with the version it was built from (an older source's "older-than=" word is not
# the field's: the SBOM says that) and musl-dev's, sorted.
pkg_built_using() {
	{
		awk 'NF >= 2 { print $1, $2 }' "$PKG_DEPS"
		echo "musl $PKG_MUSL"
	} | LC_ALL=C sort | awk '{ printf "%s%s (= %s)", (NR > 1 ? ", " : ""), $1, $2 }'
}

# pkg_older_gate (after pkg_vars): a library built from an older source than the archive's
# newest (a security update it lists but did not serve) is shipped only where that was allowed
# for this build too: build/deps made by make test is not shipped by a later make packages
# without a word.
pkg_older_gate() {
	if [ "${DEPS_ALLOW_OLDER-}" != 1 ] && grep -q ' older-than=' "$PKG_DEPS"; then
		pkg_die "$PKG_DEPS: built from an older source than the archive's newest ($(awk '$3 ~ /^older-than=/ { printf "%s%s %s (%s)", s, $1, $2, $3; s = ", " }' "$PKG_DEPS")): rebuild the libraries (rm -r ${PKG_DEPS%/*}; make), or ship them as they are with DEPS_ALLOW_OLDER=1, which the SBOM then says"
	fi
}

pkg_stage() {
	pkg_vars "$2"
	pkg_older_gate
	[ "$(pkg_changelog_version)" = "$1" ] ||
		pkg_die "packaging/changelog begins with $(pkg_changelog_version), the Makefile says $1: add an entry"
	PKG_ROOT=$3/root
	rm -rf "$3"
	mkdir -p "$3"
	umask 022
	make -s -C "$PKG_TOP" install DESTDIR="$PKG_ROOT" PCI_IDS="$PKG_PCIIDS" >"$3/install.log" 2>&1 ||
		{ cat "$3/install.log" >&2; pkg_die "make install DESTDIR=$PKG_ROOT failed"; }
	[ -x "$PKG_ROOT/usr/sbin/gpuvm" ] || pkg_die "make install put no /usr/sbin/gpuvm"
	cmp -s "$PKG_PCIIDS" "$PKG_ROOT/usr/share/gpuvm/pci.ids" ||
		pkg_die "make install PCI_IDS=$PKG_PCIIDS put another /usr/share/gpuvm/pci.ids"
	install -m 0755 "$PKG_BIN" "$PKG_ROOT/usr/sbin/gpuvm"
	# What the binary holds of others, and a bill of materials naming each with its version.
	install -D -m 0644 "${PKG_DEPS%/*}/NOTICES" "$PKG_ROOT/usr/share/doc/gpuvm/THIRD-PARTY-NOTICES"
	sh "$PKG_TOP/packaging/sbom.sh" "$1" "$2" >"$PKG_ROOT/usr/share/doc/gpuvm/gpuvm.spdx.json" ||
		pkg_die "packaging/sbom.sh failed"
	chmod 0644 "$PKG_ROOT/usr/share/doc/gpuvm/gpuvm.spdx.json"
}
