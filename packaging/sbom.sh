#!/bin/sh
# packaging/sbom.sh VERSION ARCH — the software bill of materials of the static gpuvm binary
# of ARCH (amd64: build/gpuvm, arm64: build/arm64/gpuvm) on stdout, as an SPDX 2.3 JSON
# document: gpuvm itself (MIT), the file with its SHA-1 and SHA-256, and each library it
# holds (musl, libkmod, libblkid, liblzma, libzstd) with its Debian source package and
# version (the VERSIONS file scripts/deps.sh wrote, musl-dev's version), its licence and a
# package URL; each library is related to gpuvm by STATIC_LINK. A library built from an older
# source than the archive's newest (scripts/deps.sh --allow-older, DEPS_ALLOW_OLDER=1: its
# VERSIONS line says "older-than=NEWEST") says so in its sourceInfo and its comment, naming the
# newer version it lacks. Beside the binary, the pci.ids the packages ship
# (/usr/share/gpuvm/pci.ids, scripts/pciids-ship.sh: build/pciids/pci.ids and its SOURCES),
# a file of gpuvm's too, GENERATED_FROM Debian's binary package pci.ids whose NVIDIA block it
# is and the newer one it was compared with (GPL-2.0-or-later OR BSD-3-Clause, as its header
# says). The packages install it as
# /usr/share/doc/gpuvm/gpuvm.spdx.json; `make sbom` writes build/gpuvm.spdx.json. The date is
# packaging/changelog's (SOURCE_DATE_EPOCH), so the same tree gives the same document.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 VERSION amd64|arm64" >&2; exit 2; }
version=$1 arch=$2
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=packaging/stage.sh
. "$here/stage.sh"
pkg_vars "$arch"
command -v jq >/dev/null || pkg_die "no jq (scripts/install-packages.sh)"

changelog=$PKG_TOP/packaging/changelog
when=$(date -u -d "$(sed -n 's/^ -- .*>  //p' "$changelog" | head -n 1)" +%Y-%m-%dT%H:%M:%SZ)
sha1=$(sha1sum "$PKG_BIN" | cut -d' ' -f1)
sha256=$(sha256sum "$PKG_BIN" | cut -d' ' -f1)
# The pci.ids: the Debian version it was cut from and the one it was compared with.
ids_sha1=$(sha1sum "$PKG_PCIIDS" | cut -d' ' -f1)
ids_sha256=$(sha256sum "$PKG_PCIIDS" | cut -d' ' -f1)
ids_from=$(awk '$1 == "shipped" && $2 == "pci.ids" { print $3 }' "${PKG_PCIIDS%/*}/SOURCES")
ids_cmp=$(awk '$1 == "compared" && $2 == "pci.ids" { print $3 }' "${PKG_PCIIDS%/*}/SOURCES")
if [ -z "$ids_from" ] || [ -z "$ids_cmp" ]; then
	pkg_die "${PKG_PCIIDS%/*}/SOURCES names no shipped and compared pci.ids (make pciids)"
fi
# SPDX's verification code: the SHA-1 of the files' SHA-1s in hex, sorted, one after another.
vcode=$(printf '%s\n' "$sha1" "$ids_sha1" | LC_ALL=C sort | tr -d '\n' | sha1sum | cut -d' ' -f1)

# One line a library: NAME SOURCE-PACKAGE VERSION NEWEST LICENCE (NEWEST: the archive's newer
# version it was built without, or "-"; the licence last: it has blanks).
libs=$(
	awk '
		{ newer = "-"; if ($3 ~ /^older-than=./) { newer = $3; sub(/^older-than=/, "", newer) } }
		$1 == "kmod" { print "libkmod", $1, $2, newer, "LGPL-2.1-or-later" }
		$1 == "util-linux" { print "libblkid", $1, $2, newer, "LGPL-2.1-or-later" }
		$1 == "xz-utils" { print "liblzma", $1, $2, newer, "LicenseRef-public-domain" }
		$1 == "libzstd" { print "libzstd", $1, $2, newer, "BSD-3-Clause OR GPL-2.0-only" }
	' "$PKG_DEPS"
	echo "musl musl $PKG_MUSL - MIT"
)
[ "$(printf '%s\n' "$libs" | wc -l)" -eq 5 ] ||
	pkg_die "$PKG_DEPS does not name the four libraries: $(tr '\n' ' ' <"$PKG_DEPS")"

printf '%s\n' "$libs" | jq -R -s --arg version "$version" --arg arch "$arch" --arg when "$when" \
	--arg sha1 "$sha1" --arg sha256 "$sha256" --arg vcode "$vcode" --arg ids_sha1 "$ids_sha1" \
	--arg ids_sha256 "$ids_sha256" --arg ids_from "$ids_from" --arg ids_cmp "$ids_cmp" '
	[split("\n")[] | select(length > 0) | split(" ") |
	 { name: .[0], src: .[1], ver: .[2], newer: (if .[3] == "-" then null else .[3] end),
	   lic: (.[4:] | join(" ")) }] as $libs |
	(["MIT"] + ($libs | map(.lic)) | unique |
	 map(if test(" OR ") then "(\(.))" else . end) | join(" AND ")) as $all |
	"GPL-2.0-or-later OR BSD-3-Clause" as $ids_lic |
	[{ id: "pci.ids", ver: $ids_from,
	   info: "the Debian binary package pci.ids \($ids_from): /usr/share/gpuvm/pci.ids is its header and NVIDIA block" },
	 { id: "pci.ids-compared", ver: $ids_cmp,
	   info: "the Debian binary package pci.ids \($ids_cmp): compared with, for the IDs /usr/share/gpuvm/pci.ids lists as #gpuvm-uncertain" }] as $ids |
	{
		spdxVersion: "SPDX-2.3",
		dataLicense: "CC0-1.0",
		SPDXID: "SPDXRef-DOCUMENT",
		name: "gpuvm-\($version)-\($arch)",
		documentNamespace: "urn:gpuvm:sbom:\($version):\($arch):\($sha256)",
		creationInfo: { created: $when, creators: ["Tool: gpuvm packaging/sbom.sh"] },
		packages: ([{
			SPDXID: "SPDXRef-Package-gpuvm",
			name: "gpuvm",
			versionInfo: $version,
			downloadLocation: "NOASSERTION",
			filesAnalyzed: true,
			packageVerificationCode: { packageVerificationCodeValue: $vcode },
			licenseConcluded: "\($all) AND (\($ids_lic))",
			licenseDeclared: "MIT",
			licenseInfoFromFiles: ["NOASSERTION"],
			copyrightText: "Copyright (c) 2026 gpuvm maintainers",
			hasFiles: ["SPDXRef-File-gpuvm", "SPDXRef-File-pci.ids"]
		}] + ($libs | map({
			SPDXID: "SPDXRef-Package-\(.name)",
			name: .name,
			versionInfo: .ver,
			supplier: "Organization: Debian",
			downloadLocation: "NOASSERTION",
			filesAnalyzed: false,
			licenseConcluded: .lic,
			licenseDeclared: .lic,
			copyrightText: "NOASSERTION",
			sourceInfo: ("built from the Debian source package \(.src) \(.ver)" +
				(if .newer then ", older than the archive'"'"'s newest, \(.newer)" else "" end)),
			externalRefs: [{
				referenceCategory: "PACKAGE-MANAGER",
				referenceType: "purl",
				referenceLocator: "pkg:deb/debian/\(.src)@\(.ver | @uri)?arch=source"
			}]
		} + (if .newer then { comment: ("OLDER SOURCE: built from \(.src) \(.ver); the Debian " +
			"archive'"'"'s newest, \(.newer), could not be downloaded when it was built and " +
			"DEPS_ALLOW_OLDER=1 let the older one stand in: what \(.newer) fixes is not in " +
			"this binary") } else {} end))) + ($ids | map({
			SPDXID: "SPDXRef-Package-\(.id)",
			name: "pci.ids",
			versionInfo: .ver,
			supplier: "Organization: Debian",
			downloadLocation: "NOASSERTION",
			filesAnalyzed: false,
			licenseConcluded: $ids_lic,
			licenseDeclared: $ids_lic,
			copyrightText: "Copyright Martin Mares and Albert Pool",
			sourceInfo: .info,
			externalRefs: [{
				referenceCategory: "PACKAGE-MANAGER",
				referenceType: "purl",
				referenceLocator: "pkg:deb/debian/pci.ids@\(.ver | @uri)?arch=all"
			}]
		}))),
		files: [{
			SPDXID: "SPDXRef-File-gpuvm",
			fileName: "./usr/sbin/gpuvm",
			fileTypes: ["BINARY"],
			checksums: [
				{ algorithm: "SHA1", checksumValue: $sha1 },
				{ algorithm: "SHA256", checksumValue: $sha256 }
			],
			licenseConcluded: $all,
			licenseInfoInFiles: ["NOASSERTION"],
			copyrightText: "NOASSERTION"
		}, {
			SPDXID: "SPDXRef-File-pci.ids",
			fileName: "./usr/share/gpuvm/pci.ids",
			fileTypes: ["TEXT"],
			checksums: [
				{ algorithm: "SHA1", checksumValue: $ids_sha1 },
				{ algorithm: "SHA256", checksumValue: $ids_sha256 }
			],
			licenseConcluded: $ids_lic,
			licenseInfoInFiles: ["NOASSERTION"],
			copyrightText: "Copyright Martin Mares and Albert Pool"
		}],
		hasExtractedLicensingInfos: [{
			licenseId: "LicenseRef-public-domain",
			name: "public domain",
			extractedText: "liblzma has been put in the public domain (xz-utils COPYING)."
		}],
		relationships: ([
			{ spdxElementId: "SPDXRef-DOCUMENT", relationshipType: "DESCRIBES",
			  relatedSpdxElement: "SPDXRef-Package-gpuvm" },
			{ spdxElementId: "SPDXRef-Package-gpuvm", relationshipType: "CONTAINS",
			  relatedSpdxElement: "SPDXRef-File-gpuvm" },
			{ spdxElementId: "SPDXRef-Package-gpuvm", relationshipType: "CONTAINS",
			  relatedSpdxElement: "SPDXRef-File-pci.ids" }
		] + ($libs | map({
			spdxElementId: "SPDXRef-Package-\(.name)",
			relationshipType: "STATIC_LINK",
			relatedSpdxElement: "SPDXRef-File-gpuvm"
		})) + ($ids | map({
			spdxElementId: "SPDXRef-File-pci.ids",
			relationshipType: "GENERATED_FROM",
			relatedSpdxElement: "SPDXRef-Package-\(.id)"
		})))
	}'
