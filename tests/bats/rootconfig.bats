#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# The mode lives on the host: at boot the initramfs carries no host config. The first call
# (apply --defer, before udev) has the kernel command line alone: its gpuvm.mode= acts at
# once, else every device a VM mode would select is held; the last call (apply --resume
# --sysroot DIR, where the generator mounted the real root) reads DIR/etc/gpuvm/gpuvm.conf
# and decides. ROOT is the initramfs as gpuvm sees it (--root), SYSROOT the mounted root.
# The real boots are tests/e2e (the root-config cells).

load helpers

GPU=0000:01:00.0

setup() {
	mkfx workstation
	nodriver $GPU # before udev: nouveau not loaded yet
	mkdir -p "$ROOT/proc/sys/kernel/random"
	echo 6f1d9c1e-0b7a-4c55-9d8e-3a2b1c0d9e8f >"$ROOT/proc/sys/kernel/random/boot_id"
	SYSROOT="$BATS_TEST_TMPDIR/sysroot"
	mkdir -p "$SYSROOT/etc/gpuvm"
}

override() {
	cat "$ROOT/sys/bus/pci/devices/$1/driver_override"
}

# boot: the boot.json of the last boot call, as $output for jqr.
boot() {
	output=$(cat "$ROOT/run/gpuvm/boot.json")
}

@test "no mode on the line: the first call holds the GPU, records the wait for the root, exits 0" {
	gv --cmdline "quiet" apply --defer
	assert_success
	[ "$(override $GPU)" = gpuvm-hold ]
	[ "$(override 0000:01:00.1)" = "(null)" ] # what a VM mode would select, nothing more
	[ -e "$ROOT/run/gpuvm/root-pending" ]
	grep -qx "held=$GPU" "$ROOT/run/gpuvm/root-pending"
	[ ! -e "$ROOT/run/gpuvm/pending" ] # no config= disk: dracut's initqueue has nothing to wait for
	boot
	[ "$(jqr .result)" = waiting ]
	[ "$(jqr .boot.stage)" = first ]
	[ "$(jqr .boot.decided)" = false ]
	[ "$(jqr .boot.host_config)" = pending ]
	[ "$(jqr .boot.boot_id)" = 6f1d9c1e-0b7a-4c55-9d8e-3a2b1c0d9e8f ]
	[ "$(dev_field $GPU action)" = hold ]
	assert_regex "$stderr" "1 GPU held until the host config is read from the root at the end of the initramfs"
	cmp "$ROOT/run/gpuvm/boot.json" "$ROOT/run/gpuvm/state.json"
}

@test "a hold the first call cannot record is no hold: nothing held, an earlier hold released, exit 1" {
	# /run/gpuvm where no record can be written (a file in the directory's place)
	rm -rf "$ROOT/run/gpuvm"
	: >"$ROOT/run/gpuvm"
	gv --cmdline "quiet" apply --defer
	[ "$status" -eq 1 ]
	[ "$(override $GPU)" = "(null)" ]
	assert_regex "$stderr" "error: cannot write /run/gpuvm/root-pending: a component of its path is not a directory; nothing is held: the kernel command line and the defaults decide now"
	# the last call finds nothing pending, and no GPU is left on gpuvm-hold for the boot
	printf 'mode=container\n' >"$SYSROOT/etc/gpuvm/gpuvm.conf"
	gv --cmdline "quiet" apply --resume --sysroot "$SYSROOT"
	assert_success
	[ "$(override $GPU)" = "(null)" ]
	# a hold an earlier call made, whose record cannot be written now: released
	echo gpuvm-hold >"$ROOT/sys/bus/pci/devices/$GPU/driver_override"
	gv --cmdline "quiet" apply --defer
	[ "$status" -eq 1 ]
	[ "$(override $GPU)" = "" ]
}

@test "the hold takes nothing from a driver that has a device already (vfio-pci.ids=, built in)" {
	mkfx workstation # 01:00.0 on nouveau, as a built-in driver would have it
	gv --cmdline "quiet" apply --defer
	assert_success
	[ "$(override $GPU)" = "(null)" ]
	[ -z "$(cat "$ROOT/sys/bus/pci/drivers/nouveau/unbind")" ]
	output=$(cat "$ROOT/run/gpuvm/state.json")
	[ "$(dev_field $GPU action)" = keep ]
	assert_regex "$(dev_field $GPU reason)" "left on nouveau while gpuvm waits .*: the hold takes nothing from a driver"
	run ! grep -q held= "$ROOT/run/gpuvm/root-pending"
}

@test "--resume without --sysroot leaves the wait for the root alone" {
	gv --cmdline "quiet" apply --defer
	state=$(cat "$ROOT/run/gpuvm/state.json")
	gv --cmdline "quiet" apply --resume
	assert_success
	[ -z "$stderr" ]
	[ "$(override $GPU)" = gpuvm-hold ]
	[ -e "$ROOT/run/gpuvm/root-pending" ]
	[ "$(cat "$ROOT/run/gpuvm/state.json")" = "$state" ]
}

@test "the root says vm-passthrough (the label line, verbatim): the last call binds the held GPU" {
	gv --cmdline "quiet" apply --defer
	printf 'nvidia.com/gpu.workload.config=vm-passthrough\n' >"$SYSROOT/etc/gpuvm/gpuvm.conf"
	gv --cmdline "quiet" apply --resume --sysroot "$SYSROOT"
	assert_success
	[ "$(override $GPU)" = vfio-pci ]
	[ "$(override 0000:01:00.1)" = vfio-pci ]
	[ ! -e "$ROOT/run/gpuvm/root-pending" ]
	boot
	[ "$(jqr .mode)" = vm-passthrough ]
	[ "$(jqr .mode_source)" = /etc/gpuvm/gpuvm.conf:1 ]
	[ "$(jqr .boot.stage)" = root ]
	[ "$(jqr .boot.decided)" = true ]
	[ "$(jqr .boot.host_config)" = read ]
	[ "$(jqr .boot.sysroot)" = "$SYSROOT" ]
	assert_regex "$stderr" "config: /etc/gpuvm/gpuvm.conf read from the root at $SYSROOT"
	# The same file read on the running host gives the same source.
	mkdir -p "$ROOT/etc/gpuvm"
	cp "$SYSROOT/etc/gpuvm/gpuvm.conf" "$ROOT/etc/gpuvm/gpuvm.conf"
	gv --cmdline "quiet" --json plan
	[ "$(jqr .mode_source)" = /etc/gpuvm/gpuvm.conf:1 ]
}

@test "the root says container: the held GPU goes to the host driver" {
	gv --cmdline "quiet" apply --defer
	printf 'mode=container\n' >"$SYSROOT/etc/gpuvm/gpuvm.conf"
	: >"$ROOT/sys/bus/pci/drivers_probe"
	gv --cmdline "quiet" apply --resume --sysroot "$SYSROOT"
	assert_success
	[ "$(override $GPU)" = "" ]
	[ "$(cat "$ROOT/sys/bus/pci/drivers_probe")" = $GPU ]
	boot
	[ "$(jqr .mode)" = container ]
	[ "$(dev_field $GPU action)" = unbind ]
}

@test "no config on the root: no mode set anywhere; the hold goes" {
	gv --cmdline "quiet" apply --defer
	gv --cmdline "quiet" apply --resume --sysroot "$SYSROOT"
	assert_success
	[ "$(override $GPU)" = "" ]
	boot
	[ "$(jqr .mode)" = container ]
	[ "$(jqr .mode_source)" = default ]
	[ "$(jqr .boot.host_config)" = missing ]
	assert_regex "$stderr" "config: no /etc/gpuvm/gpuvm.conf on the root at .*: no mode is set"
}

@test "a vfio bind made before gpuvm stays when no mode is set anywhere" {
	# vfio-pci built in with vfio-pci.ids= took the GPU before gpuvm ran (Ubuntu's kernels).
	printf 'DRIVER=vfio-pci\n' >>"$ROOT/sys/bus/pci/devices/$GPU/uevent"
	gv --cmdline "quiet" apply --defer
	[ "$(override $GPU)" = "(null)" ]
	gv --cmdline "quiet" apply --resume --sysroot "$SYSROOT"
	assert_success
	[ "$(override $GPU)" = "(null)" ]
	boot
	[ "$(dev_field $GPU action)" = keep ]
	assert_regex "$(dev_field $GPU reason)" "no mode is set"
}

@test "a config that cannot be read: a warning, and on_error decides (hold keeps, release gives back)" {
	secret
	ln -s "$SECRET" "$SYSROOT/etc/gpuvm/gpuvm.conf"
	gv --cmdline "quiet" apply --defer
	gv --cmdline "quiet" apply --resume --sysroot "$SYSROOT"
	[ "$status" -eq 1 ] # held by on_error: not the mode's state
	[ "$(override $GPU)" = gpuvm-hold ]
	[ ! -e "$ROOT/run/gpuvm/root-pending" ]
	boot
	[ "$(jqr .boot.host_config)" = unreadable ]
	[ "$(jqr .boot.decided)" = true ]
	assert_regex "$(jqr .boot.why)" "gpuvm.conf: a symlink on the way: not followed"
	assert_regex "$stderr" "warning: config: .*a symlink on the way: not followed; the GPUs stay held \(on_error=hold\)"
	refute_output --partial "s3cret"
	run ! grep -q s3cret "$ROOT/run/gpuvm/state.json" "$ROOT/run/gpuvm/boot.json"
	secret_intact

	gv --cmdline "gpuvm.on_error=release" apply --defer
	[ "$(override $GPU)" = gpuvm-hold ]
	gv --cmdline "gpuvm.on_error=release" apply --resume --sysroot "$SYSROOT"
	assert_success
	[ "$(override $GPU)" = "" ]
	assert_regex "$stderr" "the GPUs go to the host driver \(on_error=release\)"
}

@test "unreadable in each way: a link above it, a hard link, a directory, too large" {
	mkdir -p "$BATS_TEST_TMPDIR/elsewhere/gpuvm"
	printf 'mode=vm-passthrough\n' >"$BATS_TEST_TMPDIR/elsewhere/gpuvm/gpuvm.conf"
	rm -rf "$SYSROOT/etc/gpuvm"
	ln -s "$BATS_TEST_TMPDIR/elsewhere/gpuvm" "$SYSROOT/etc/gpuvm"
	try() {
		gv --cmdline "quiet" apply --defer
		gv --cmdline "quiet" apply --resume --sysroot "$SYSROOT"
		[ "$status" -eq 1 ]
		boot
		[ "$(jqr .boot.host_config)" = unreadable ]
		[ "$(override $GPU)" = gpuvm-hold ]
		assert_regex "$(jqr .boot.why)" "$1"
	}
	try "a symlink on the way: not followed"
	rm "$SYSROOT/etc/gpuvm"
	mkdir "$SYSROOT/etc/gpuvm"
	ln "$BATS_TEST_TMPDIR/elsewhere/gpuvm/gpuvm.conf" "$SYSROOT/etc/gpuvm/gpuvm.conf"
	try "has another hard link: not read"
	rm "$SYSROOT/etc/gpuvm/gpuvm.conf"
	mkdir "$SYSROOT/etc/gpuvm/gpuvm.conf"
	try "cannot read: Is a directory"
	rmdir "$SYSROOT/etc/gpuvm/gpuvm.conf"
	head -c 70000 /dev/zero | tr '\0' '#' >"$SYSROOT/etc/gpuvm/gpuvm.conf"
	try "larger than 65536 bytes"
}

@test "a root that never came: no such directory, or one with no /etc (not mounted)" {
	gv --cmdline "quiet" apply --defer
	gv --cmdline "quiet" apply --resume --sysroot "$BATS_TEST_TMPDIR/nothing"
	[ "$status" -eq 1 ]
	boot
	[ "$(jqr .boot.host_config)" = no-root ]
	assert_regex "$(jqr .boot.why)" "the root is not there: .*/nothing: No such file or directory"
	[ "$(override $GPU)" = gpuvm-hold ]
	mkdir "$BATS_TEST_TMPDIR/empty"
	gv --cmdline "quiet" apply --defer
	gv --cmdline "quiet" apply --resume --sysroot "$BATS_TEST_TMPDIR/empty"
	boot
	[ "$(jqr .boot.host_config)" = no-root ]
	assert_regex "$(jqr .boot.why)" "has no /etc \(not mounted\?\)"
}

@test "gpuvm.mode= on the line acts at once, no hold; the root's config counts where it changes something" {
	gv --cmdline "gpuvm.mode=vm-passthrough" apply --defer
	assert_success
	[ "$(override $GPU)" = vfio-pci ]
	[ -e "$ROOT/run/gpuvm/root-pending" ]
	run ! grep -q held= "$ROOT/run/gpuvm/root-pending"
	boot
	[ "$(jqr .result)" = ok ]
	[ "$(jqr .boot.decided)" = true ]
	[ "$(jqr .mode_source)" = cmdline ]
	[ "$(jqr .boot.host_config)" = pinned ]
	grep -qx first_result=ok "$ROOT/run/gpuvm/root-pending"
	# No config on the root: the last call changes nothing, and the records stay the first
	# call's (what this boot did: bound, verified), not a run that found all in place.
	cp -a "$ROOT/run/gpuvm/root-pending" "$BATS_TEST_TMPDIR/rp"
	# --root has no kernel to bind: the tree says what the first call's binds did.
	for f in 0 1 2 3; do
		u=$ROOT/sys/bus/pci/devices/0000:01:00.$f/uevent
		sed -i '/^DRIVER=/d' "$u"
		echo DRIVER=vfio-pci >>"$u"
	done
	before=$(cat "$ROOT/run/gpuvm/boot.json")
	gv --cmdline "gpuvm.mode=vm-passthrough" apply --resume --sysroot "$SYSROOT"
	assert_success
	assert_regex "$stderr" "the root's config changes nothing over the kernel command line"
	[ "$(cat "$ROOT/run/gpuvm/boot.json")" = "$before" ]
	[ "$(cat "$ROOT/run/gpuvm/state.json")" = "$before" ]
	[ ! -e "$ROOT/run/gpuvm/root-pending" ]
	cp -a "$BATS_TEST_TMPDIR/rp" "$ROOT/run/gpuvm/root-pending"
	# A last call that does change something (the GPU is not on vfio-pci: its first bind did
	# not take) writes the records, with the root's keys under the line's: the line's mode
	# wins over the file's, the file's on_error counts.
	sed -i '/^DRIVER=/d' "$ROOT/sys/bus/pci/devices/$GPU/uevent"
	printf 'mode=container\non_error=release\n' >"$SYSROOT/etc/gpuvm/gpuvm.conf"
	gv --cmdline "gpuvm.mode=vm-passthrough" apply --resume --sysroot "$SYSROOT"
	assert_success
	boot
	[ "$(jqr .mode)" = vm-passthrough ]
	[ "$(jqr .mode_source)" = cmdline ]
	[ "$(jqr .settings.on_error.source)" = /etc/gpuvm/gpuvm.conf:2 ]
	[ "$(jqr .boot.stage)" = root ]
	[ "$(jqr .boot.host_config)" = read ]
	[ "$(dev_field $GPU action)" = bind ]
	[ ! -e "$ROOT/run/gpuvm/root-pending" ]
}

@test "a host config baked into the image by an earlier gpuvm is ignored, and said so" {
	mkdir -p "$ROOT/etc/gpuvm"
	printf 'mode=vm-passthrough\n' >"$ROOT/etc/gpuvm/gpuvm.conf"
	gv --cmdline "quiet" apply --defer
	assert_success
	[ "$(override $GPU)" = gpuvm-hold ]
	boot
	[ "$(jqr .mode_source)" = default ]
	gv --cmdline "quiet" apply --resume --sysroot "$SYSROOT"
	assert_regex "$stderr" "warning: /etc/gpuvm/gpuvm.conf in this initramfs is ignored: the host config is the root's"
	boot
	[ "$(jqr .boot.baked_config)" = ignored ]
	[ "$(jqr .mode)" = container ]
	[ "$(override $GPU)" = "" ]
	# Without root= the image is the root (--sysroot /): its file is the host's, no warning.
	gv --cmdline "quiet" apply --defer
	gv --cmdline "quiet" apply --resume --sysroot "$ROOT"
	refute_output --partial "is ignored"
	run ! grep -q 'is ignored' <<<"$stderr"
	boot
	[ "$(jqr .mode)" = vm-passthrough ]
	[ "$(jqr .boot.baked_config)" = null ]
}

@test "config= in the root's config is ignored, and said so: the root is read already" {
	printf 'config=LABEL=elsewhere\nmode=vm-passthrough\n' >"$SYSROOT/etc/gpuvm/gpuvm.conf"
	gv --cmdline "quiet" apply --defer
	gv --cmdline "quiet" apply --resume --sysroot "$SYSROOT"
	assert_success
	assert_regex "$stderr" "/etc/gpuvm/gpuvm.conf:1: config= in the root's config is ignored"
	boot
	[ "$(jqr .settings.config.source)" = default ]
	[ "$(jqr .mode)" = vm-passthrough ]
}

@test "boot.json is the boot's: a later apply rewrites state.json only" {
	gv --cmdline "quiet" apply --defer
	gv --cmdline "quiet" apply --resume --sysroot "$SYSROOT"
	before=$(cat "$ROOT/run/gpuvm/boot.json")
	gv --cmdline "gpuvm.mode=vm-passthrough" apply
	assert_success
	[ "$(cat "$ROOT/run/gpuvm/boot.json")" = "$before" ]
	output=$(cat "$ROOT/run/gpuvm/state.json")
	[ "$(jqr .mode)" = vm-passthrough ]
	[ "$(jqr .boot)" = null ]
}

@test "--sysroot goes with --resume, and names a directory" {
	gv apply --sysroot /sysroot
	[ "$status" -eq 2 ]
	assert_regex "$stderr" "--sysroot DIR goes with --resume"
	gv apply --defer --sysroot /sysroot
	[ "$status" -eq 2 ]
	gv apply --resume --sysroot ""
	[ "$status" -eq 2 ]
	gv plan --sysroot /sysroot
	[ "$status" -eq 2 ]
	assert_regex "$stderr" "--sysroot is not an option of this command"
}
