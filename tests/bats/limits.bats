#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# Input at its limits: lists of 64 entries whole everywhere, a kernel command line
# past 4 KiB read whole, a flood of bad config lines bounded on the console.

load helpers

setup() {
	mkfx workstation
}

# 64 ids; 64 PCI addresses, all but the last with an 8-digit domain (1,095 bytes a line).
ids64() {
	for i in $(seq 0 63); do printf '10de:%04x\n' $((0x2200 + i)); done | paste -sd, -
}
ex64() {
	for i in $(seq 0 62); do printf '%08x:%02x:1f.7\n' $((0xfffffff0 - i)) "$i"; done
	printf '0000:41:00.0\n'
}

@test "64 ids= and 64 exclude= (8-digit domains): whole in config get, plan --json and the state file" {
	ids=$(ids64) ex=$(ex64 | paste -sd, -)
	[ "$(ex64 | wc -l)" = 64 ]
	fx_config "$ROOT" "ids=$ids
exclude=$ex"
	gv config get ids
	assert_success
	[ "$output" = "$ids" ]
	gv config get exclude
	assert_success
	[ "$output" = "$ex" ]
	gv --cmdline "" plan --json
	assert_success
	[ "$(jqr '.errors | length')" = 0 ]
	[ "$(jqr .settings.ids.value)" = "$ids" ]
	[ "$(jqr .settings.exclude.value)" = "$ex" ]
	gv --cmdline "" apply
	[ "$(jq -r .settings.ids.value "$ROOT/run/gpuvm/state.json")" = "$ids" ]
	[ "$(jq -r .settings.exclude.value "$ROOT/run/gpuvm/state.json")" = "$ex" ]
	# the same lists from the command line
	gv --cmdline "gpuvm.ids=$ids gpuvm.exclude=$ex" plan --json
	[ "$(jqr .settings.exclude.source)" = cmdline ]
	[ "$(jqr .settings.exclude.value)" = "$ex" ]
	[ "$(jqr .settings.ids.value)" = "$ids" ]
}

@test "65 entries: the error names file, line and key and says the maximum" {
	fx_config "$ROOT" "mode=vm-passthrough
exclude=$(ex64 | paste -sd, -),0000:7f:00.0"
	gv --cmdline "gpuvm.ids=$(ids64),10de:ffff" plan --json
	assert_success
	assert_regex "$(jqr '.errors | join("|")')" "/etc/gpuvm/gpuvm.conf:2: exclude: 65 entries, more than the 64 gpuvm takes; using the default value"
	assert_regex "$(jqr '.errors | join("|")')" "cmdline: ids: 65 entries, more than the 64 gpuvm takes; using the default value"
	assert_regex "$stderr" "gpuvm.conf:2: exclude: 65 entries, more than the 64"
}

# filler N: N bytes of harmless kernel parameters (bootconfig makes such lines easy).
filler() {
	i=0
	while [ "$i" -lt $(($1 / 32)) ]; do
		printf 'foo.bar_%06d=0123456789abcdef ' "$i"
		i=$((i + 1))
	done
}

@test "a kernel command line over 4 KiB is read whole: exclude= at its end holds" {
	printf 'BOOT_IMAGE=/vmlinuz ro gpuvm.mode=vm-passthrough %s gpuvm.exclude=0000:01:00.0\n' \
		"$(filler 6000)" >"$ROOT/proc/cmdline"
	[ "$(wc -c <"$ROOT/proc/cmdline")" -gt 4096 ]
	gv plan --json
	assert_success
	[ "$(jqr .mode)" = vm-passthrough ]
	[ "$(jqr .settings.exclude.value)" = 0000:01:00.0 ]
	[ "$(dev_field 0000:01:00.0 action)" != bind ]
	[ "$(dev_field 0000:01:00.0 role)" = excluded ]
	[ "$(jqr '.warnings | length')" = 0 ]
	# and the same from dracut's /etc/cmdline.d, over 4 KiB in one file
	printf 'BOOT_IMAGE=/vmlinuz ro\n' >"$ROOT/proc/cmdline"
	mkdir -p "$ROOT/etc/cmdline.d"
	printf 'rd.gpuvm.mode=vm-passthrough\n%s\nrd.gpuvm.exclude=0000:01:00.0\n' "$(filler 6000)" \
		>"$ROOT/etc/cmdline.d/50-big.conf"
	gv plan --json
	[ "$(jqr .mode)" = vm-passthrough ]
	[ "$(dev_field 0000:01:00.0 role)" = excluded ]
}

@test "a kernel command line past 128 KiB: the rest ignored at a word, and said" {
	printf 'gpuvm.mode=vm-passthrough %s gpuvm.exclude=0000:01:00.0\n' "$(filler 140000)" \
		>"$ROOT/proc/cmdline"
	gv plan --json
	assert_success
	[ "$(jqr .mode)" = vm-passthrough ]
	# the tail is not read, and no word is read cut in half
	[ "$(jqr .settings.exclude.source)" = default ]
	[ "$(jqr '.errors | length')" = 0 ]
	assert_regex "$(jqr '.warnings | join("|")')" "/proc/cmdline: longer than 131072 bytes; the last [0-9]+ bytes ignored, from 'foo.bar_[0-9]+="
	assert_regex "$stderr" "warning: /proc/cmdline: longer than 131072 bytes"
}

@test "40 files in /etc/cmdline.d: every one read, in name order, none dropped" {
	printf 'BOOT_IMAGE=/vmlinuz ro\n' >"$ROOT/proc/cmdline"
	d=$ROOT/etc/cmdline.d
	mkdir -p "$d"
	f=$(filler 3584)
	# 40 files of 3.5 KiB: 140 KiB in all, past the 128 KiB that /etc/cmdline.d may hold, so
	# the cut falls in the 37th by name only when every one of them is read. Created in an
	# order that is not the name order.
	for i in 39 38 37 36 05 04 03 02 01 00 35 34 33 32 31 30 29 28 27 26 25 24 23 22 21 20 19 18 17 16 15 14 13 12 11 10 09 08 07 06; do
		case $i in
		35) m='rd.gpuvm.mode=vm-vgpu ' ;;
		3[6-9]) m='' ;;
		*) m='rd.gpuvm.mode=container ' ;;
		esac
		printf '%s%s\n' "$m" "$f" >"$d/$i.conf"
	done
	gv plan --json
	assert_success
	[ "$(jqr .mode)" = vm-vgpu ]
	[ "$(jqr .settings.mode.source)" = cmdline ]
	assert_regex "$stderr" "warning: /etc/cmdline.d/36.conf: past 131072 bytes of /etc/cmdline.d in all; the last [0-9]+ bytes ignored"
	refute_output --partial "more than 4096 .conf files"
}

@test "past 4096 files in /etc/cmdline.d: the first 4096 by name read, the rest counted in a warning" {
	printf 'BOOT_IMAGE=/vmlinuz ro\n' >"$ROOT/proc/cmdline"
	d=$ROOT/etc/cmdline.d
	mkdir -p "$d"
	# zz.conf sorts after the 4096 others: it is the one left out, whatever readdir says.
	printf 'rd.gpuvm.mode=vm-vgpu\n' >"$d/zz.conf"
	printf 'rd.gpuvm.mode=container\n' >"$d/0000.conf"
	for i in $(seq 1 4095); do
		: >"$d/$i.conf"
	done
	gv plan --json
	assert_success
	[ "$(jqr .mode)" = container ]
	assert_regex "$stderr" "warning: /etc/cmdline.d: more than 4096 .conf files: the first 4096 in name order read, 1 ignored"
}

@test "a 64 KiB config of garbage lines: a bounded stderr, what was not shown said, the outcome still there" {
	mkdir -p "$ROOT/etc/gpuvm"
	yes x | head -c 65536 >"$ROOT/etc/gpuvm/gpuvm.conf"
	[ "$(wc -l <"$ROOT/etc/gpuvm/gpuvm.conf")" = 32768 ]
	gv --cmdline "gpuvm.mode=vm-passthrough" apply
	[ "$(printf '%s\n' "$stderr" | wc -l)" -le 30 ]
	assert_regex "$stderr" "gpuvm.conf: 32758 more lines with errors not shown"
	# the per-device outcome lines and the summary are there
	assert_regex "$stderr" "0000:01:00.0: nouveau -> vfio-pci \(bind"
	assert_regex "$stderr" "0000:01:00.3: nvidia-gpu -> vfio-pci \(bind"
	assert_regex "$stderr" "vm-passthrough: 1 GPU and 3 companion functions on vfio-pci, 0 failed"
	# the state file says the same, and how many it did not keep
	state="$ROOT/run/gpuvm/state.json"
	[ "$(jq '.errors | length' "$state")" = 11 ]
	[ "$(jq -r '.errors[10]' "$state")" = "/etc/gpuvm/gpuvm.conf: 32758 more lines with errors not shown" ]
	[ "$(jq .errors_dropped "$state")" = 0 ]
	# unknown keys the same way
	yes a=b | head -c 65536 >"$ROOT/etc/gpuvm/gpuvm.conf"
	gv --cmdline "gpuvm.mode=vm-passthrough" plan
	[ "$(printf '%s\n' "$stderr" | wc -l)" -le 30 ]
	assert_regex "$stderr" "gpuvm.conf: 16374 more lines with unknown keys not shown"
}

@test "a command line full of unknown gpuvm. keys: bounded too" {
	gv --cmdline "gpuvm.mode=vm-passthrough $(seq -f 'gpuvm.k%g=1' 1 5000 | paste -sd' ' -)" plan
	assert_success
	[ "$(printf '%s\n' "$stderr" | wc -l)" -le 30 ]
	assert_regex "$stderr" "cmdline: 4990 more words with unknown keys not shown"
}
