#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# Every bad input: a clear message naming source, line and key; never a crash; a safe outcome.

load helpers

setup() {
	mkfx workstation
}

@test "no arguments: usage on stderr, exit 2" {
	run --separate-stderr "$GPUVM"
	assert_failure 2
	[ -z "$output" ]
	assert_regex "$stderr" "^Usage: gpuvm"
}

@test "--help and --version exit 0 on stdout" {
	run "$GPUVM" --help
	assert_success
	assert_output --partial "Exit status:"
	run "$GPUVM" --version
	assert_success
	assert_output --regexp "^gpuvm [0-9]+\.[0-9]+\.[0-9]+$"
}

@test "--help: the commands people run first, apply last in a group of its own, every command" {
	run "$GPUVM" --help
	assert_success
	cmds=$(printf '%s\n' "$output" | sed -n '/^Commands:$/,/^Options:$/s/^  \([a-z][a-z]*\).*/\1/p' | uniq | tr '\n' ' ')
	[ "$cmds" = "status check plan config kubevirt cmdline dump apply " ]
	# ... and that is main.c's commands[], in its order: none left out
	[ "$cmds" = "$(sed -n '/^static const struct command \*const commands\[\] = {$/,/^};$/p' "$TOP/src/main.c" |
		grep -o 'cmd_[a-z]*' | sed 's/^cmd_//' | tr '\n' ' ')" ]
	# apply's forms: a blank line and the group's heading, by hand first, the boot's calls last
	forms=$(printf '%s\n' "$output" | sed -n '/^  dump /,/^Options:$/p' | grep -v '^   ' | grep -v '^Options:$')
	[ "$forms" = "  dump [--out FILE]   what gpuvm reads to decide, as a --root tree in one tar (a

Apply the mode (the boot's hooks run apply --defer, then apply --resume):
  apply [--dry-run]   bind the GPUs as the mode asks (the boot hook's command);
  apply --live [--wait SECONDS]
  apply --defer       the boot's first call, before udev: the kernel command line
  apply --resume [--sysroot DIR]" ]
}

@test "--help and --version take no operand: options are parsed first, a stray word is usage" {
	for opt in --version -V --help -h; do
		for args in "$opt extra" "extra $opt" "plan $opt" "$opt -- plan" "$opt --frob" "--frob $opt" \
			"$opt --wait=x"; do
			# shellcheck disable=SC2086 # split on purpose
			run --separate-stderr "$GPUVM" $args
			assert_failure 2
			[ -z "$output" ]
			assert_regex "$stderr" "Try 'gpuvm --help'\.$"
		done
		long=$opt
		[ "$opt" = -V ] && long=--version
		[ "$opt" = -h ] && long=--help
		run --separate-stderr "$GPUVM" "$opt" extra
		assert_regex "$stderr" "^gpuvm: ${long}: unexpected argument 'extra'"
		# Options beside it are parsed and then ignored.
		run --separate-stderr "$GPUVM" -q --root /nonexistent "$opt"
		assert_success
		[ -n "$output" ]
		[ -z "$stderr" ]
	done
	# Both: the first one given answers.
	run "$GPUVM" --version --help
	assert_success
	assert_output --regexp "^gpuvm [0-9]+\.[0-9]+\.[0-9]+$"
	run "$GPUVM" -h -V
	assert_success
	assert_output --partial "Exit status:"
}

@test "unknown command, unknown option, extra argument, misplaced option: exit 2" {
	gv frobnicate
	assert_failure 2
	assert_regex "$stderr" "unknown command 'frobnicate'"
	gv --frob plan
	assert_failure 2
	gv plan extra
	assert_failure 2
	assert_regex "$stderr" "unexpected argument 'extra'"
	gv plan --dry-run
	assert_failure 2
	gv cmdline --mode bogus
	assert_failure 2
	assert_regex "$stderr" "unknown mode 'bogus'"
	gv cmdline --cpu sparc
	assert_failure 2
}

@test "an unknown option or command: gpuvm:, the word, the nearest one; exit 2" {
	gv --cmdline "" check --vgpu-relase 17
	assert_failure 2
	[ -z "$output" ]
	[ "$stderr" = "gpuvm: check: unknown option '--vgpu-relase' (nearest: --vgpu-release)
Try 'gpuvm --help'." ]
	# the nearest of the options the command takes, else of all
	gv apply --dry-rnu
	assert_failure 2
	[ "${stderr%%$'\n'*}" = "gpuvm: apply: unknown option '--dry-rnu' (nearest: --dry-run)" ]
	gv plan --dry-rnu
	assert_failure 2
	assert_regex "$stderr" "^gpuvm: plan: unknown option '--dry-rnu' \(nearest: --"
	refute_regex "$stderr" "nearest: --dry-run"
	gv --dry-rnu
	assert_failure 2
	[ "${stderr%%$'\n'*}" = "gpuvm: unknown option '--dry-rnu' (nearest: --dry-run)" ]
	# its name without a value; a short one; an abbreviation of several
	gv --frob=1 status
	assert_regex "$stderr" "^gpuvm: status: unknown option '--frob' \(nearest: --"
	gv status --nfdd
	[ "${stderr%%$'\n'*}" = "gpuvm: status: unknown option '--nfdd' (nearest: --nfd)" ]
	gv -x plan
	assert_failure 2
	assert_regex "$stderr" "^gpuvm: plan: unknown option '-x' \(nearest: --"
	gv plan -json
	[ "${stderr%%$'\n'*}" = "gpuvm: plan: unknown option '-j' (nearest: --json)" ]
	gv --c plan
	assert_failure 2
	[ "${stderr%%$'\n'*}" = "gpuvm: plan: unknown option '--c' (nearest: --cmdline)" ]
	# a value missing, or given to an option that takes none
	gv plan --mode
	assert_failure 2
	[ "${stderr%%$'\n'*}" = "gpuvm: plan: --mode needs a value" ]
	gv --json=yes plan
	assert_failure 2
	[ "${stderr%%$'\n'*}" = "gpuvm: plan: --json takes no value" ]
	gv --help=yes
	assert_failure 2
	[ "${stderr%%$'\n'*}" = "gpuvm: --help takes no value" ]
	# never the program's path, as getopt's own messages had it
	gv plan --frob
	[[ "$stderr" != *"$GPUVM"* ]]
	# the nearest command
	gv stauts
	assert_failure 2
	[ "${stderr%%$'\n'*}" = "gpuvm: unknown command 'stauts' (nearest: status)" ]
	gv aply --dry-run
	[ "${stderr%%$'\n'*}" = "gpuvm: unknown command 'aply' (nearest: apply)" ]
}

@test "--root that does not exist: exit 2" {
	run --separate-stderr "$GPUVM" --root "$BATS_TEST_TMPDIR/nowhere" plan
	assert_failure 2
	assert_regex "$stderr" "nowhere: No such file or directory"
}

@test "garbage gpuvm.mode= on the cmdline: error names the source, config value used" {
	fx_config "$ROOT" "mode=vm-vgpu"
	gv --cmdline "gpuvm.mode=vm-passthru" plan --json
	assert_success
	[ "$(jqr .mode)" = vm-vgpu ]
	[ "$(jqr .mode_source)" = "/etc/gpuvm/gpuvm.conf:1" ]
	assert_regex "$(jqr '.errors[0]')" "^cmdline: mode: invalid value 'vm-passthru'"
	assert_regex "$stderr" "cmdline: mode: invalid value 'vm-passthru'"
}

@test "the label line, rd.gpuvm., dashes and the last occurrence" {
	fx_config "$ROOT" "# mirrored from the node label
nvidia.com/gpu.workload.config=vm-passthrough"
	gv --cmdline "" plan --json
	[ "$(jqr .mode)" = vm-passthrough ]
	[ "$(jqr .mode_source)" = "/etc/gpuvm/gpuvm.conf:2" ]
	gv --cmdline "rd.gpuvm.mode=vm-vgpu gpuvm.on-error=release gpuvm.mode=container" plan --json
	[ "$(jqr .mode)" = container ]
	[ "$(jqr .settings.on_error.value)" = release ]
	gv --cmdline 'gpuvm.ids="10de:1e87, 10de:10f8" gpuvm.mode=vm-passthrough' plan --json
	[ "$(jqr .settings.ids.value)" = "10de:1e87,10de:10f8" ]
}

@test "the host config's bad lines are named by file and line, and the rest is read" {
	fx_config "$ROOT" "colour=blue
just words
ids=10de:zzzz
mode=vm-passthrough
on_error="
	gv --cmdline "" plan --json
	[ "$(jqr .mode)" = vm-passthrough ]
	assert_regex "$(jqr '.warnings[0]')" "gpuvm.conf:1: unknown key 'colour' ignored"
	assert_regex "$(jqr '.errors | join("|")')" "gpuvm.conf:2: expected KEY=VALUE"
	assert_regex "$(jqr '.errors | join("|")')" "gpuvm.conf:3: ids: invalid value '10de:zzzz'"
	assert_regex "$(jqr '.errors | join("|")')" "gpuvm.conf:5: on_error: invalid value ''"
}

@test "NUL bytes, invalid UTF-8 and an overlong line: named, skipped, JSON stays valid" {
	mkdir -p "$ROOT/etc/gpuvm"
	{
		printf 'mode=vm-\000passthrough\n'
		printf 'host_driver=nv\377\376idia\n'
		head -c 5000 /dev/zero | tr '\0' x
		printf '\nnvswitch=vm\n'
	} >"$ROOT/etc/gpuvm/gpuvm.conf"
	gv --cmdline "" plan --json
	assert_success
	printf '%s' "$output" | jq -e . >/dev/null
	[ "$(jqr .mode)" = container ]
	[ "$(jqr .settings.nvswitch.value)" = vm ]
	assert_regex "$(jqr '.errors | join("|")')" "gpuvm.conf:1: NUL byte in line"
	assert_regex "$(jqr '.errors | join("|")')" "gpuvm.conf:2: host_driver: invalid value 'nv\?\?idia'"
	assert_regex "$(jqr '.errors | join("|")')" "gpuvm.conf:3: line too long"
}

@test "a 1 MiB config, a directory, an unreadable file: named, ignored" {
	mkdir -p "$ROOT/etc/gpuvm"
	head -c 1048576 /dev/zero >"$ROOT/etc/gpuvm/gpuvm.conf"
	gv --cmdline "gpuvm.mode=vm-passthrough" plan
	assert_success
	assert_regex "$stderr" "/etc/gpuvm/gpuvm.conf: larger than 65536 bytes; file ignored"
	# told once: the config is read once a run, though the settings are taken from it twice
	[ "$(printf '%s\n' "$stderr" | grep -c 'larger than 65536')" -eq 1 ]
	rm "$ROOT/etc/gpuvm/gpuvm.conf"
	mkdir "$ROOT/etc/gpuvm/gpuvm.conf"
	gv --cmdline "" plan
	assert_success
	assert_regex "$stderr" "gpuvm.conf: cannot read: Is a directory"
	gv --config "$BATS_TEST_TMPDIR/absent.conf" --cmdline "" plan
	assert_success
	assert_regex "$stderr" "absent.conf: cannot read: No such file or directory"
	[ "$(printf '%s\n' "$stderr" | grep -c 'absent.conf: cannot read')" -eq 1 ]
}

@test "the host config is opened once a run" {
	need strace command -v strace
	fx_config "$ROOT" "mode=vm-passthrough"
	# LeakSanitizer cannot run under ptrace (make sanitize runs this on an ASan build)
	ASAN_OPTIONS=detect_leaks=0 run strace -f -e trace=open,openat,openat2 \
		-o "$BATS_TEST_TMPDIR/trace" "$GPUVM" --root "$ROOT" --cmdline "" plan
	assert_success
	# opened by name under /etc/gpuvm, by whole path (openat2 beneath the root) or below a
	# directory descriptor (the walk of a kernel without openat2)
	[ "$(grep -cE 'open(at2?)?\(.*"([^"]*/)?gpuvm\.conf"' "$BATS_TEST_TMPDIR/trace")" -eq 1 ]
}

@test "--config replaces the host config" {
	printf 'mode=vm-vgpu\n' >"$BATS_TEST_TMPDIR/other.conf"
	fx_config "$ROOT" "mode=vm-passthrough"
	gv --config "$BATS_TEST_TMPDIR/other.conf" --cmdline "" plan --json
	[ "$(jqr .mode)" = vm-vgpu ]
	[ "$(jqr .mode_source)" = "$BATS_TEST_TMPDIR/other.conf:1" ]
}

@test "a hostile sysfs: garbage uevent, bad links, a non-address entry" {
	printf 'garbage\n\377\n' >"$ROOT/sys/bus/pci/devices/0000:01:00.1/uevent"
	ln -s ../../../devices/nowhere "$ROOT/sys/bus/pci/devices/not-an-address"
	rm "$ROOT/sys/bus/pci/devices/0000:01:00.2/iommu_group"
	ln -s ../../../kernel/iommu_groups/notanumber "$ROOT/sys/bus/pci/devices/0000:01:00.2/iommu_group"
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	printf '%s' "$output" | jq -e . >/dev/null
	# The function whose uevent cannot be parsed is kept, unidentified (its IDs from its
	# vendor and device files), and never taken: its group (the GPU's) is not viable, and
	# the GPU is not bound without it.
	[ "$(dev_field 0000:01:00.1 vendor)" = 10de ]
	[ "$(dev_field 0000:01:00.1 role)" = unidentified ]
	[ "$(dev_field 0000:01:00.1 action)" = skip ]
	[ "$(dev_field 0000:01:00.0 action)" = hold ]
	assert_regex "$(dev_field 0000:01:00.0 reason)" "0000:01:00.1 could not be identified \(Invalid argument\)"
}

@test "status and plan without any PCI device" {
	rm -rf "$ROOT/sys/bus/pci/devices"
	gv plan
	assert_failure 1
	assert_regex "$stderr" "cannot read the PCI devices"
	mkdir "$ROOT/sys/bus/pci/devices"
	gv --cmdline "gpuvm.mode=vm-passthrough" plan
	assert_success
	assert_output --partial "(none)"
}

@test "dracut's /etc/cmdline.d/*.conf count as command line, /proc/cmdline wins" {
	mkdir -p "$ROOT/etc/cmdline.d"
	printf 'rd.gpuvm.mode=vm-vgpu\nrd.gpuvm.on_error=release\n' >"$ROOT/etc/cmdline.d/01-default.conf"
	printf 'rd.gpuvm.nvswitch=vm' >"$ROOT/etc/cmdline.d/90-gpuvm.conf"
	printf 'BOOT_IMAGE=/vmlinuz ro\n' >"$ROOT/proc/cmdline"
	gv plan --json
	[ "$(jqr .mode)" = vm-vgpu ]
	[ "$(jqr .settings.on_error.value)" = release ]
	[ "$(jqr .settings.nvswitch.value)" = vm ]
	printf 'BOOT_IMAGE=/vmlinuz ro gpuvm.mode=container\n' >"$ROOT/proc/cmdline"
	gv plan --json
	[ "$(jqr .mode)" = container ]
}

@test "a driver name that would climb out of sysfs is refused (no path traversal)" {
	# Unchecked, the unbind would go to sys/bus/pci/drivers/../../../../etc/unbind = ROOT/etc/unbind.
	printf 'DRIVER=../../../../etc\nPCI_CLASS=30000\nPCI_ID=10DE:1E87\nPCI_SUBSYS_ID=1458:403B\nPCI_SLOT_NAME=0000:01:00.0\n' \
		>"$ROOT/sys/bus/pci/devices/0000:01:00.0/uevent"
	: >"$ROOT/etc/unbind"
	gv --cmdline "gpuvm.mode=vm-passthrough" apply
	[ ! -s "$ROOT/etc/unbind" ]
	[ "$(cat "$ROOT/sys/bus/pci/devices/0000:01:00.0/driver_override")" = "(null)" ]
}
