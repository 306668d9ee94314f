#!/bin/sh
# layers.sh — the layers of src/, lowest first, and the check that no file includes a header
# of a layer above its own (make lint). A unit is a file's name without .c or .h, in
# src/boot/ or src/tools/; cmd/*.c and main.c are the command layer. A unit that is in no
# layer fails the check until it is placed: where a new file goes is a decision, not a
# default.
#
# And the tree's rule (doc/HACKING.md, "The tree"): the boot's path, every file of
# src/boot/ and main.c and cmd/apply.c, includes no header of src/tools/.
#
#   scripts/layers.sh [SRCDIR]      print each include that reaches up; exit 1 if any
#   scripts/layers.sh --list        the layers, one a line
set -u

# NAME: UNIT... (what each layer is: doc/HACKING.md, "Layers")
LAYERS='
base: util strpool log json writefile names
pure: pci cmdline tagspec mode vgpu iomem config tarw modindex
seams: rootio kmod blkdev
machine: iommu inventory pciproc hostdev inuse pciids
asked: settings kcmdline source pending confsource
decide: plan nextboot check kvsnippet
act: execute live
report: report state metrics pinned hostreport
prepare: prepare
collect: dumpcollect
command: cmd main bootrun
'

if [ "${1-}" = --list ]; then
	printf '%s\n' "$LAYERS" | sed '/^$/d'
	exit 0
fi
src=${1:-$(cd "$(dirname "$0")/.." && pwd)/src}

# Every file of src/ as "FILE UNIT PLACE" (boot: on the boot's path), every header of
# src/tools/ as "T UNIT", every include as "FILE UNIT"; awk knows the layers.
{
	printf '%s\n' "$LAYERS" | sed '/^$/d; s/^/L /'
	for f in "$src"/tools/*.h; do
		[ -f "$f" ] || continue
		unit=$(basename "$f" .h)
		echo "T $unit"
	done
	for f in "$src"/*.[ch] "$src"/boot/*.[ch] "$src"/tools/*.[ch] "$src"/cmd/*.[ch]; do
		[ -f "$f" ] || continue
		rel=${f#"$src"/}
		case $rel in
		cmd/*) unit=cmd ;;
		*) unit=$(basename "$rel") unit=${unit%.?} ;;
		esac
		case $rel in
		boot/* | main.c | cmd/apply.c) place=boot ;;
		*) place=- ;;
		esac
		echo "F $rel $unit $place"
		sed -n 's/^#include "\(.*\)\.h".*/\1/p' "$f" | while read -r inc; do
			echo "I $rel ${inc##*/}"
		done
	done
} | awk '
	$1 == "L" { n++; name[n] = $2; sub(":", "", name[n]); for (i = 3; i <= NF; i++) layer[$i] = n; next }
	$1 == "T" { tools[$2] = 1; next }
	$1 == "F" {
		unit[$2] = $3; place[$2] = $4
		if (!($3 in layer)) { printf "%s: unit %s is in no layer of scripts/layers.sh\n", $2, $3; bad++ }
		next
	}
	$1 == "I" {
		u = unit[$2]; h = $3
		if (place[$2] == "boot" && (h in tools)) {
			printf "%s: includes %s.h, a header of src/tools/: the boot'"'"'s path (src/boot/, main.c, cmd/apply.c) includes none\n", $2, h
			bad++
		}
		if (!(h in layer)) { printf "%s: includes %s.h, which is in no layer\n", $2, h; bad++; next }
		if ((u in layer) && layer[h] > layer[u]) {
			printf "%s: includes %s.h (layer %s) from layer %s: an include that reaches up\n",
			    $2, h, name[layer[h]], name[layer[u]]
			bad++
		}
	}
	END { exit bad > 0 }'
