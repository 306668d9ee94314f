#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/sizemap.sh MAP OBJDIR: what each part of the static binary costs, from the linker's
# map of the unstripped link (bench/syms.mk writes it beside build/bench/gpuvm.syms) and
# the objects it linked (build/obj). Prints a Markdown section for bench/RESULTS.md:
#   - the bytes each library and gpuvm's own objects put in the image: every input section
#     the link kept (code, read-only data, data; .bss takes no file space and is left out),
#     so the parts add up to the loaded image, not to the file (headers and alignment)
#   - each gpuvm unit, and whether the boot path needs it: a unit is on the boot path when
#     `gpuvm apply` reaches it through the symbols the objects define and use (cmd/apply.o
#     and main.o, main.o's table of the other commands left out); the others are there only
#     for the host-side commands (plan, status, check, cmdline, config, kubevirt, dump)
set -eu
[ $# -eq 2 ] || { echo "usage: bench/sizemap.sh MAP OBJDIR" >&2; exit 2; }
map=$1
objdir=${2%/}
[ -f "$map" ] || { echo "sizemap: no map $map" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sizemap.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Bytes per input file (FILE or ARCHIVE(MEMBER)), from the map's "Linker script and memory
# map" part: an input section is " .name ADDR SIZE FILE", or " .name" on its own line with
# "ADDR SIZE FILE" on the next when the name is long. Sections at address 0 were dropped.
awk '
function num(h,    i, c, v) { # 0x-prefixed hex: mawk has no strtonum
	v = 0
	for (i = 3; i <= length(h); i++) {
		c = index("0123456789abcdef", tolower(substr(h, i, 1))) - 1
		if (c < 0) return -1
		v = v * 16 + c
	}
	return v
}
/^Linker script and memory map/ { on = 1; next }
!on { next }
/^ \.[^ ]+$/ { pend = $1; next }
{
	sec = ""; addr = ""; size = ""; file = ""
	if (pend != "" && $1 ~ /^0x/ && NF == 3) {
		sec = pend; addr = $1; size = $2; file = $3
	} else if ($0 ~ /^ \./ && NF == 4 && $2 ~ /^0x/ && $3 ~ /^0x/) {
		sec = $1; addr = $2; size = $3; file = $4
	}
	pend = ""
	if (file == "" || sec ~ /^\.(debug|comment|note|bss|tbss)/ || sec ~ /^COMMON/) next
	if (num(addr) <= 0) next
	bytes[file] += num(size)
}
END { for (f in bytes) if (bytes[f]) print bytes[f], f }
' "$map" >"$tmp/bytes"

# gpuvm's objects: which defines what, and what each uses.
# Only those the link was given (the map's LOAD lines, OBJDIR as given or relative to here): a
# build folder can hold objects of units since moved or gone, which the binary does not have.
objrel=${objdir#"$(pwd)"/}
awk -v a="$objdir/" -v b="$objrel/" '$1 == "LOAD" && $2 ~ /\.o$/ {
		if (index($2, a) == 1) print substr($2, length(a) + 1)
		else if (index($2, b) == 1) print substr($2, length(b) + 1)
	}' "$map" | LC_ALL=C sort -u >"$tmp/objs"
[ -s "$tmp/objs" ] || { echo "sizemap: the map $map loads no object of $objdir" >&2; exit 1; }
while read -r o; do
	nm --defined-only -g "$objdir/$o" | awk -v o="$o" 'NF == 3 { print $3, o }'
done <"$tmp/objs" >"$tmp/defs"
while read -r o; do
	nm -u "$objdir/$o" | awk -v o="$o" '{ print o, $NF }'
done <"$tmp/objs" >"$tmp/uses"

# The units the boot path reaches: from main.o and cmd/apply.o, main.o's uses of the other
# commands' entry points (cmd_*) left out, and cmd/apply.o's of a running host's apply
# (apply_host_run, cmd/applyhost.c) and of plan (plan_run, apply --dry-run), which the
# boot's calls (--defer, --resume) never take.
awk '
FNR == 1 { part++ }
part == 1 { def[$1] = $2; next }
part == 2 {
	if ($1 == "main.o" && $2 ~ /^cmd_/ && $2 != "cmd_apply") next
	if ($1 == "cmd/apply.o" && ($2 == "apply_host_run" || $2 == "plan_run")) next
	n[$1]++; use[$1, n[$1]] = $2; next
}
END {
	reach["main.o"] = 1; reach["cmd/apply.o"] = 1
	q[1] = "main.o"; q[2] = "cmd/apply.o"; qn = 2
	for (i = 1; i <= qn; i++) {
		o = q[i]
		for (k = 1; k <= n[o]; k++) {
			d = def[use[o, k]]
			if (d != "" && !(d in reach)) { reach[d] = 1; q[++qn] = d }
		}
	}
	for (o in reach) print o
}
' "$tmp/defs" "$tmp/uses" >"$tmp/boot"

# One line a part: "unit BYTES NAME boot|host" for gpuvm's objects, "lib BYTES NAME".
awk -v objdir="$objdir/" -v objrel="${objdir#"$(pwd)"/}/" '
FNR == 1 { part++ }
part == 1 { boot[$1] = 1; next }
{
	# the map names an object as the link was given it: OBJDIR as given, or relative to here
	o = index($2, objdir) == 1 ? objdir : index($2, objrel) == 1 ? objrel : ""
	if (o != "") {
		u = substr($2, length(o) + 1)
		print "unit", $1, u, (u in boot) ? "boot" : "host"
		next
	}
	lib = $2
	sub(/\(.*/, "", lib)
	n = split(lib, p, "/")
	lib = p[n]
	if (lib ~ /^(libc\.a|crt.*\.o|Scrt1\.o|libgcc.*\.a)$/) lib = "musl"
	libs[lib] += $1
}
END { for (l in libs) print "lib", libs[l], l }
' "$tmp/boot" "$tmp/bytes" >"$tmp/parts"

total=$(awk '{ t += $2 } END { print t }' "$tmp/parts")
# row NAME BYTES
row() {
	awk -v n="$1" -v b="$2" -v t="$total" \
		'BEGIN { printf "| %s | %d | %.1f | %.0f %% |\n", n, b, b / 1024, 100 * b / t }'
}
sum() { awk -v k="$1" -v w="$2" '$1 == k && (w == "" || $4 == w) { t += $2 } END { print t + 0 }' "$tmp/parts"; }
# units KIND: "name bytes, ..." largest first
units() {
	awk -v w="$1" '$1 == "unit" && $4 == w { print $2, $3 }' "$tmp/parts" | sort -rn |
		awk '{ printf "%s%s %d", (NR > 1 ? ", " : ""), $2, $1 } END { print "" }'
}
echo "| part | bytes | KiB | share |"
echo "|---|---|---|---|"
row "gpuvm: the units the boot path (\`apply\`) reaches" "$(sum unit boot)"
row "gpuvm: the units only the host-side commands reach" "$(sum unit host)"
awk '$1 == "lib" { print $2, $3 }' "$tmp/parts" | sort -rn | while read -r b n; do
	[ "$n" = musl ] && n="musl libc and libgcc"
	row "$n" "$b"
done
awk -v t="$total" 'BEGIN { printf "| all (the loaded image; the file adds headers and alignment) | %d | %.1f | |\n", t, t / 1024 }'
echo
echo "The host-side units, largest first (bytes): $(units host)."
echo
echo "The boot path's units, largest first (bytes): $(units boot)."
