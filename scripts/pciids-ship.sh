#!/bin/sh
# scripts/pciids-ship.sh — the pci.ids gpuvm ships as /usr/share/gpuvm/pci.ids (the packages,
# through `make install PCI_IDS=`, and the label mirror's image), so that gpuvm kubevirt names
# devices as NVIDIA's sandbox device plugin does. The plugin v1.4.0 to v1.6.0 names from the
# pci.ids in its image, version 2025.07.11, which no Debian release carries; Debian's trixie
# carries 2025.06.09, from before it, and sid 2026.10.24, from after it:
#
#   sh scripts/pciids-ship.sh [DIR]             DIR/pci.ids (default build/pciids: make pciids)
#                                               from Debian's pci.ids packages, and DIR/SOURCES
#   sh scripts/pciids-ship.sh --compare OLD NEW
#                                               the same from two pci.ids files, on stdout: OLD
#                                               from before the plugin's, NEW from after it
#
# The file is OLD's header (version, date, licence) and NVIDIA block, as scripts/pciids-nvidia.sh
# cuts them: an ID whose device line is the same in both files has that name in the plugin's
# too. After the header, one comment line "#gpuvm-uncertain DDDD" (the device ID in lower case)
# for each ID whose name the plugin's may have otherwise, which gpuvm kubevirt warns about
# (gpuvm(8), kubevirt): an ID whose first device line differs between OLD's and NEW's blocks
# (renamed between the two: the plugin may have either name), or that only one of them has
# (added or removed between the two: the plugin may name it or not; one only NEW has is named
# by its ID, as the plugin does when it lacks it). Each file's "Version:" must be on its side of
# the plugin's, and OLD's header must grant what the SBOM and packaging/deb/copyright say
# (GPL-2.0-or-later OR BSD-3-Clause).
#
# DIR: the Debian packages pinned below, downloaded with apt-get download through a private
# apt state (scripts/apt-private.sh: trixie's and sid's main suites on the system's Debian
# mirror) and unpacked with dpkg-deb -x: nothing is installed. They are kept in DIR/debs, and
# once both are there nothing is asked of the network again: the file is made from them. The
# trixie package must be the pinned version (an older or newer pci.ids would move the
# boundary): one the archive does not list is an error that names it. Debian keeps only the
# newest version in sid: where sid has moved past the pin, its newest is taken instead, said
# on stderr and in DIR/SOURCES (any pci.ids after the plugin's bounds it; the list may grow
# by the IDs renamed or added since), and one kept in DIR/debs stays in use until the pin
# moves past it; sid with none at or after the pin is an error that names the pin.
# DIR/SOURCES: "shipped pci.ids VERSION trixie" and "compared pci.ids VERSION sid" (the Debian
# versions; packaging/sbom.sh reads it). PCIIDS_APT_SOURCES=FILE: the deb lines of FILE (a
# mirror, a snapshot, a test's archive) in place of the system mirror's trixie and sid.
set -eu

# The pci.ids of NVIDIA's sandbox device plugin v1.4.0 to v1.6.0 (its image's /usr/pci.ids).
PLUGIN_IDS=2025.07.11
# Debian's pci.ids from before it (shipped) and from after it (compared).
OLD_REL=trixie OLD_VER=0.0~2025.06.09-1
NEW_REL=sid NEW_VER=0.0~2026.10.24-1

here=$(cd "$(dirname "$0")" && pwd)

die() {
	echo "pciids-ship: $*" >&2
	exit 1
}

# ids_label FILE: the Version of FILE's header (2025.06.09).
ids_label() {
	awk '!/^#/ { exit } sub(/^#[ \t]*Version:[ \t]*/, "") { print; exit }' "$1"
}

# ids_version FILE: the same as a number (20250609), checked.
ids_version() {
	iv=$(ids_label "$1")
	case $iv in
	[0-9][0-9][0-9][0-9].[0-9][0-9].[0-9][0-9]) echo "$iv" | tr -d . ;;
	*) die "$1: no \"Version: YYYY.MM.DD\" in its header" ;;
	esac
}

# compare OLD NEW OLD-NAME NEW-NAME: the file on stdout (the names say where each came from).
compare() {
	plugin=$(echo "$PLUGIN_IDS" | tr -d .)
	ov=$(ids_version "$1")
	nv=$(ids_version "$2")
	[ "$ov" -le "$plugin" ] || die "$1: pci.ids $(ids_label "$1") is not from before the plugin's $PLUGIN_IDS"
	[ "$nv" -ge "$plugin" ] || die "$2: pci.ids $(ids_label "$2") is not from after the plugin's $PLUGIN_IDS"
	awk '!/^#/ { exit } { sub(/^#[ \t]*/, ""); printf "%s ", $0 }' "$1" | tr -s ' \t' '  ' |
		grep -q 'distributed under either the GNU General Public License (version 2 or higher) or the 3-clause BSD License' ||
		die "$1: its header does not grant the GNU GPL version 2 or higher or the 3-clause BSD licence"
	ct=$(mktemp -d)
	# shellcheck disable=SC2064 # the directory made now
	trap "rm -rf '$ct'" EXIT
	# Each block as the plugin reads it, without the header pciids-nvidia.sh keeps.
	sh "$here/pciids-nvidia.sh" "$1" >"$ct/old.cut" || exit 1
	sh "$here/pciids-nvidia.sh" "$2" >"$ct/new.cut" || exit 1
	sed '1,/^$/d' "$ct/old.cut" >"$ct/old"
	sed '1,/^$/d' "$ct/new.cut" >"$ct/new"
	# The first device line of each ID in each block (gpuvm's and the plugin's reading).
	awk '
		FNR == 1 { f++ }
		{ sub(/\r$/, "") }
		/^\t[0-9a-f][0-9a-f][0-9a-f][0-9a-f]/ {
			id = substr($0, 2, 4)
			if (!((f, id) in name)) { name[f, id] = substr($0, 6); ids[id] = 1 }
		}
		END {
			for (id in ids)
				if (!((1, id) in name) || !((2, id) in name) || name[1, id] != name[2, id])
					print "#gpuvm-uncertain " id
		}' "$ct/old" "$ct/new" | LC_ALL=C sort >"$ct/uncertain"
	awk '!/^#/ { exit } { print }' "$1"
	printf '#\n#\tThe NVIDIA block only, by gpuvm'"'"'s scripts/pciids-ship.sh from %s.\n' "$3"
	printf '#\tNVIDIA'"'"'s sandbox device plugin v1.4.0 to v1.6.0 names from pci.ids %s: it may name\n' "$PLUGIN_IDS"
	printf '#\tthe ID of each #gpuvm-uncertain line below otherwise, or not at all, as that ID is\n'
	printf '#\tnamed otherwise in, or is in only one of, this and %s.\n' "$4"
	cat "$ct/uncertain"
	echo
	cat "$ct/old"
	rm -rf "$ct"
	trap - EXIT
}

# deb_of VERSION: the .deb of that version of pci.ids kept in $debs.
deb_of() {
	printf '%s/pci.ids_%s_all.deb\n' "$debs" "$(printf '%s' "$1" | sed 's/:/%3a/')"
}

# kept_new: the version of the .deb kept for sid: the pin's, else the newest after it.
kept_new() {
	kn=
	for f in "$debs"/pci.ids_*_all.deb; do
		[ -f "$f" ] || continue
		v=${f##*/pci.ids_}
		v=$(printf '%s' "${v%_all.deb}" | sed 's/%3a/:/')
		dpkg --compare-versions "$v" ge "$NEW_VER" || continue
		if [ -z "$kn" ] || dpkg --compare-versions "$v" gt "$kn"; then
			kn=$v
		fi
	done
	if [ -f "$(deb_of "$NEW_VER")" ]; then
		kn=$NEW_VER
	fi
	printf '%s\n' "$kn"
}

# listed REL: the versions of pci.ids the private state lists in REL's main suite.
listed() {
	apt_private apt-cache madison pci.ids | awk -F ' *[|] *' -v rel="$1" '$3 ~ (" " rel "/main ") { print $2 }'
}

# fetch DIR: DIR/pci.ids and DIR/SOURCES from the Debian packages.
fetch() {
	mkdir -p "$1/debs"
	dir=$(cd "$1" && pwd) # apt takes a relative path as one under /etc/apt
	debs=$dir/debs
	new_ver=$(kept_new)
	if [ ! -f "$(deb_of "$OLD_VER")" ] || [ -z "$new_ver" ]; then
		for tool in apt-get apt-cache dpkg-deb dpkg; do
			command -v "$tool" >/dev/null || die "no $tool (scripts/install-packages.sh)"
		done
		# shellcheck source=scripts/apt-private.sh
		. "$here/apt-private.sh"
		state=$dir/apt
		apt_private_init "$state" deb amd64 "$OLD_REL"
		if [ -n "${PCIIDS_APT_SOURCES-}" ]; then
			grep '^deb ' "$PCIIDS_APT_SOURCES" >"$state/sources.list.new" ||
				die "PCIIDS_APT_SOURCES=$PCIIDS_APT_SOURCES: no deb line"
		else
			{
				grep -v -e '-security ' "$state/sources.list"
				apt_private_release_sources deb amd64 "$NEW_REL"
			} >"$state/sources.list.new"
		fi
		mv "$state/sources.list.new" "$state/sources.list"
		echo "pciids-ship: apt-get update ($state: $OLD_REL, $NEW_REL)" >&2
		apt_private apt-get update >"$state/update.log" 2>&1 ||
			{ cat "$state/update.log" >&2; die "apt-get update failed"; }
		if [ ! -f "$(deb_of "$OLD_VER")" ]; then
			listed "$OLD_REL" | grep -qxF "$OLD_VER" ||
				die "Debian's pci.ids $OLD_VER, pinned for $OLD_REL, is not in its archive (it lists: $(listed "$OLD_REL" | tr '\n' ' ' | sed 's/ $//' | grep . || echo none)): pin the version that is, if it is from before $PLUGIN_IDS"
			get "$OLD_VER"
		fi
		if [ -z "$new_ver" ]; then
			new_ver=$(listed "$NEW_REL" | head -n 1)
			if [ -z "$new_ver" ] || dpkg --compare-versions "$new_ver" lt "$NEW_VER"; then
				die "Debian's pci.ids $NEW_VER, pinned for $NEW_REL, is not in its archive (it lists: ${new_ver:-none})"
			fi
			[ "$new_ver" = "$NEW_VER" ] ||
				echo "pciids-ship: $NEW_REL has pci.ids $new_ver, past the pinned $NEW_VER: $new_ver is compared (pin it in scripts/pciids-ship.sh)" >&2
			get "$new_ver"
		fi
		# The lists (some 45 MB) are not needed again until a pin moves.
		rm -rf "$state/lists"
	fi
	x=$dir/x
	rm -rf "$x"
	for v in "$OLD_VER" "$new_ver"; do
		mkdir -p "$x/$v"
		dpkg-deb -x "$(deb_of "$v")" "$x/$v" || die "cannot unpack $(deb_of "$v")"
		[ -f "$x/$v/usr/share/misc/pci.ids" ] || die "$(deb_of "$v") has no usr/share/misc/pci.ids"
	done
	compare "$x/$OLD_VER/usr/share/misc/pci.ids" "$x/$new_ver/usr/share/misc/pci.ids" \
		"Debian's pci.ids $OLD_VER" "Debian's pci.ids $new_ver" >"$dir/pci.ids.tmp"
	printf 'shipped pci.ids %s %s\ncompared pci.ids %s %s\n' "$OLD_VER" "$OLD_REL" "$new_ver" \
		"$NEW_REL" >"$dir/SOURCES.tmp"
	rm -rf "$x"
	mv "$dir/SOURCES.tmp" "$dir/SOURCES"
	mv "$dir/pci.ids.tmp" "$dir/pci.ids"
	echo "pciids-ship: $dir/pci.ids: NVIDIA's block of pci.ids $OLD_VER, $(grep -c '^#gpuvm-uncertain ' "$dir/pci.ids") IDs uncertain against $new_ver" >&2
}

# get VERSION: that pci.ids .deb into $debs.
get() {
	(cd "$debs" && apt_private apt-get download -q "pci.ids=$1") >"$state/download.log" 2>&1 ||
		{ cat "$state/download.log" >&2; die "pci.ids $1: download failed"; }
	[ -f "$(deb_of "$1")" ] || die "apt-get download left no $(deb_of "$1")"
}

case ${1-} in
--compare)
	[ $# -eq 3 ] || die "usage: $0 --compare OLD.ids NEW.ids"
	compare "$2" "$3" "pci.ids $(ids_label "$2")" "pci.ids $(ids_label "$3")"
	;;
-*) die "usage: $0 [DIR] | --compare OLD.ids NEW.ids" ;;
*)
	[ $# -le 1 ] || die "usage: $0 [DIR] | --compare OLD.ids NEW.ids"
	fetch "${1:-build/pciids}"
	;;
esac
