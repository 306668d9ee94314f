#!/usr/bin/env bats
# shellcheck disable=SC2154 # $output is set by bats' run
# The end-to-end harness's own helpers (tests/e2e/lib.sh) where a boot's console is read:
# what the scenarios assert on is only as true as the log they read.

load helpers

setup() {
	E2E_ROOT=$TOP E2E_OUT=$BATS_TEST_TMPDIR
	# shellcheck source=tests/e2e/lib.sh
	. "$TOP/tests/e2e/lib.sh"
}

@test "e2e_untangle: a kernel message written inside a line goes on its own, the line is made whole" {
	run e2e_untangle <<-'EOF'
	[    1.940511] gpuvm: vm-passthrough: 0 GPUs and 0 companion functions on vfio-pci, 1 failed
	gpuvm-init: warning: gpuvm apply failed (exit status 3); the boot goes on[    1.952380] tsc: Refined TSC
	[    1.952720] clocksource: tsc: mask: 0xffffffffffffffff

	Begin: Running /scripts/init-bottom ... [    5.184741] gpuvm: config: read from the root at /root
	done.
	gpuvm-init: switching to ro[   10.5] EXT4-fs (vda): mounted
	ot=/dev/vda (/dev/vda), init /sbin/init
	EOF
	assert_success
	assert_output "$(cat <<-'EOF'
	[    1.940511] gpuvm: vm-passthrough: 0 GPUs and 0 companion functions on vfio-pci, 1 failed
	[    1.952380] tsc: Refined TSC
	[    1.952720] clocksource: tsc: mask: 0xffffffffffffffff
	gpuvm-init: warning: gpuvm apply failed (exit status 3); the boot goes on
	[    5.184741] gpuvm: config: read from the root at /root
	Begin: Running /scripts/init-bottom ... done.
	[   10.5] EXT4-fs (vda): mounted
	gpuvm-init: switching to root=/dev/vda (/dev/vda), init /sbin/init
	EOF
	)"
}

@test "e2e_untangle: the guest's @dmesg copies and lines with no kernel message stay as they are" {
	in=$(printf '%s\n' '@dmesg [    1.93] gpuvm: held' '@e2e end' 'plain [not a stamp] line' '' \
		'@dmesg [    2.0] gpuvm: x[    2.1] tsc: y')
	run e2e_untangle <<<"$in"
	assert_success
	assert_output "$(printf '%s\n' '@dmesg [    1.93] gpuvm: held' '@e2e end' \
		'plain [not a stamp] line' '' '[    2.1] tsc: y' '@dmesg [    2.0] gpuvm: x')"
}

@test "e2e_untangle: a line cut at the console's end is kept" {
	run e2e_untangle <<<"gpuvm-init: no root= on the k[    2.43] reboot: Power down"
	assert_success
	assert_output "$(printf '%s\n' '[    2.43] reboot: Power down' 'gpuvm-init: no root= on the k')"
}
