#!/bin/sh
# packaging/deb.sh VERSION ARCH — build/deb/gpuvm_VERSION_ARCH.deb (make deb [ARCH=arm64]).
# The package's files are a staged `make install` (stage.sh) with what Debian adds: the man
# pages compressed (gzip -9n), /usr/share/doc/gpuvm/copyright and changelog.gz, the lintian
# overrides; DEBIAN/ holds the control file (deb/control.in filled in), conffiles (every file
# the stage has under /etc), md5sums, the triggers file and the maintainer scripts of deb/.
# dpkg-deb builds it, owned by root, with the changelog's date as SOURCE_DATE_EPOCH: the
# same tree gives the same package. packaging/README.md says why each piece is there.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 VERSION amd64|arm64" >&2; exit 2; }
version=$1 arch=$2
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=packaging/stage.sh
. "$here/stage.sh"
out=$(cd "$here/.." && pwd)/build/deb
pkg_stage "$version" "$arch" "$out/$arch"
r=$PKG_ROOT
changelog=$PKG_TOP/packaging/changelog

# What Debian's policy adds to the installed tree.
find "$r/usr/share/man" -type f ! -name '*.gz' -exec gzip -9n {} +
install -D -m 0644 "$here/deb/copyright" "$r/usr/share/doc/gpuvm/copyright"
gzip -9n <"$changelog" >"$r/usr/share/doc/gpuvm/changelog.gz"
chmod 0644 "$r/usr/share/doc/gpuvm/changelog.gz"
install -D -m 0644 "$here/deb/lintian-overrides" "$r/usr/share/lintian/overrides/gpuvm"

# DEBIAN/
d=$r/DEBIAN
mkdir -p "$d"
(cd "$r" && find etc -type f 2>/dev/null | LC_ALL=C sort | sed 's|^|/|') >"$d/conffiles"
[ -s "$d/conffiles" ] || rm -f "$d/conffiles"
(cd "$r" && find . -path ./DEBIAN -prune -o -type f -print | sed 's|^\./||' | LC_ALL=C sort |
	xargs md5sum) >"$d/md5sums"
install -m 0644 "$here/deb/triggers" "$d/triggers"
install -m 0755 "$here/deb/postinst" "$here/deb/postrm" "$d/"
# Installed-Size as dpkg-gencontrol counts it: KiB per file, rounded up, 1 per other entry.
size=$(cd "$r" && find . -path ./DEBIAN -prune -o ! -path . -printf '%y %s\n' |
	awk '{ n += ($1 == "f") ? int(($2 + 1023) / 1024) : 1 } END { print n + 0 }')
# Built-Using: the Debian source packages whose code the static binary holds.
built_using=$(pkg_built_using)
maintainer=$(sed -n 's/^ -- \(.*>\)  .*/\1/p' "$changelog" | head -n 1)
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@MAINTAINER@|$maintainer|" \
	-e "s|@INSTALLED_SIZE@|$size|" -e "s|@BUILT_USING@|$built_using|" \
	"$here/deb/control.in" >"$d/control"
if grep -n '@[A-Z_]*@' "$d/control" >&2; then pkg_die "DEBIAN/control: a field left unfilled"; fi

SOURCE_DATE_EPOCH=$(date -d "$(sed -n 's/^ -- .*>  //p' "$changelog" | head -n 1)" +%s)
export SOURCE_DATE_EPOCH
deb=$out/gpuvm_${version}_$arch.deb
rm -f "$deb"
dpkg-deb --root-owner-group -Zxz --build "$r" "$deb" >/dev/null
echo "deb: $deb ($(wc -c <"$deb") bytes, $(wc -l <"$d/md5sums") files)"
