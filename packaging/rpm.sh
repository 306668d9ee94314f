#!/bin/sh
# packaging/rpm.sh VERSION ARCH — build/rpm/gpuvm-VERSION-RELEASE.RPMARCH.rpm (make rpm
# [ARCH=arm64]; amd64 is x86_64, arm64 aarch64) with rpmbuild from gpuvm.spec. The files are
# a staged `make install` (stage.sh) but the initramfs-tools hook and script: no RPM
# distribution builds its initramfs with initramfs-tools (dracut does, and the dracut module is
# in). The %files list is made from the stage: every file, /etc's as %config(noreplace), the
# man pages with whatever suffix rpm's compression gives them, and the directories gpuvm owns
# (those with gpuvm in their path). packaging/README.md says why each piece is there.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 VERSION amd64|arm64" >&2; exit 2; }
version=$1 arch=$2
RELEASE=1
case $arch in
amd64) rpmarch=x86_64 ;;
arm64) rpmarch=aarch64 ;;
*) echo "$0: ARCH: amd64 or arm64, not $arch" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=packaging/stage.sh
. "$here/stage.sh"
command -v rpmbuild >/dev/null || pkg_die "no rpmbuild (apt-get install rpm)"
out=$(cd "$here/.." && pwd)/build/rpm
w=$out/$arch
pkg_stage "$version" "$arch" "$w"
r=$PKG_ROOT
changelog=$PKG_TOP/packaging/changelog
rm -rf "$r/usr/share/initramfs-tools"
# The stage is final: the binary was stripped when it was linked, and the man pages are
# compressed here (rpm's own brp-compress is written for bash, and Debian's /bin/sh is dash),
# so rpmbuild's post-install steps (__os_install_post) are left out.
find "$r/usr/share/man" -type f ! -name '*.gz' -exec gzip -9n {} +

# The %files list.
{
	echo '%defattr(-,root,root,-)'
	(cd "$r" && find . -mindepth 1 \( -type d -o -type f -o -type l \) -printf '%y %P\n') |
		LC_ALL=C sort -k2 | awk '
		$1 == "d" { if ($2 ~ /gpuvm/) print "%dir /" $2; next }
		$2 ~ /^etc\// { print "%config(noreplace) /" $2; next }
		$2 ~ /^usr\/share\/man\// { print "/" $2 "*"; next }
		{ print "/" $2 }'
} >"$w/files.list"

# packaging/changelog (Debian's form) in RPM's: "* DAY MON DD YYYY NAME <MAIL> - VERSION-1".
awk -v rel="$RELEASE" '
	/^gpuvm \(/ { v = $2; gsub(/[()]/, "", v); n = 0; next }
	/^  \* / { sub(/^  \* /, ""); items[++n] = $0; next }
	/^    / && n { sub(/^ +/, ""); items[n] = items[n] " " $0; next }
	/^ -- / {
		line = $0; sub(/^ -- /, "", line)
		who = line; sub(/>  .*/, ">", who)
		when = line; sub(/.*>  /, "", when)
		cmd = "LC_ALL=C date -d \"" when "\" \"+%a %b %d %Y\""
		cmd | getline day; close(cmd)
		printf "%s* %s %s - %s-%s\n", (entries++ ? "\n" : ""), day, who, v, rel
		for (i = 1; i <= n; i++) print "- " items[i]
	}' "$changelog" >"$w/changelog"

top=$w/rpmbuild
mkdir -p "$top/BUILD"
cp "$here/deb/copyright" "$top/BUILD/copyright"
cp "$PKG_TOP/LICENSE" "$top/BUILD/LICENSE"
SOURCE_DATE_EPOCH=$(date -d "$(sed -n 's/^ -- .*>  //p' "$changelog" | head -n 1)" +%s)
export SOURCE_DATE_EPOCH
rpmbuild -bb --quiet --nodeps --target "$rpmarch" \
	--define "_topdir $top" \
	--define "gpuvm_version $version" \
	--define "gpuvm_release $RELEASE" \
	--define "gpuvm_stage $r" \
	--define "gpuvm_filelist $w/files.list" \
	--define "gpuvm_changelog $w/changelog" \
	--define "use_source_date_epoch_as_buildtime 1" \
	--define "clamp_mtime_to_source_date_epoch 1" \
	--define "_buildhost gpuvm" \
	--define "__os_install_post %{nil}" \
	"$here/gpuvm.spec" >"$w/rpmbuild.log" 2>&1 ||
	{ tail -n 30 "$w/rpmbuild.log" >&2; pkg_die "rpmbuild failed: see $w/rpmbuild.log"; }
name=gpuvm-$version-$RELEASE.$rpmarch.rpm
[ -f "$top/RPMS/$rpmarch/$name" ] || pkg_die "rpmbuild made no $top/RPMS/$rpmarch/$name"
mv "$top/RPMS/$rpmarch/$name" "$out/$name"
echo "rpm: $out/$name ($(wc -c <"$out/$name") bytes, $(grep -c '^/' "$w/files.list") files)"
