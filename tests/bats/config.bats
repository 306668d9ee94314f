#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# gpuvm config get|set: validated, atomic, keeps the file's shape, says when it takes effect.

load helpers

setup() {
	mkfx workstation
	CONF="$ROOT/etc/gpuvm/gpuvm.conf"
	mkdir -p "$ROOT/etc/gpuvm"
}

@test "set creates the directory and the file with sane modes" {
	rm -rf "$ROOT/etc/gpuvm"
	gv config set mode=vm-passthrough
	assert_success
	assert_output --partial "/etc/gpuvm/gpuvm.conf: mode=vm-passthrough"
	[ "$(cat "$CONF")" = "mode=vm-passthrough" ]
	[ "$(stat -c %a "$CONF")" = 644 ]
	[ "$(stat -c %a "$ROOT/etc/gpuvm")" = 755 ]
	gv config get mode
	assert_success
	[ "$output" = vm-passthrough ]
}

@test "set keeps comments, order, other keys and the label spelling" {
	printf '# mirrored from the node label\nexclude=0000:41:00.0\nnvidia.com/gpu.workload.config=container\n\n# end\non_error=hold\n' >"$CONF"
	gv config set mode=vm-vgpu
	assert_success
	[ "$(cat "$CONF")" = "$(printf '# mirrored from the node label\nexclude=0000:41:00.0\nnvidia.com/gpu.workload.config=vm-vgpu\n\n# end\non_error=hold')" ]
	gv config set on-error=release
	assert_success
	grep -qx "on_error=release" "$CONF"
	gv config set nvswitch=vm
	[ "$(tail -n 1 "$CONF")" = "nvswitch=vm" ]
	gv config set nvswitch=vm
	assert_output --partial "(unchanged)"
}

@test "set refuses bad keys and values: exit 2, the file untouched" {
	printf 'mode=container\n' >"$CONF"
	gv config set mode=vm-passthru
	assert_failure 2
	assert_regex "$stderr" "mode: invalid value 'vm-passthru' \(expected container, vm-passthrough or vm-vgpu\)"
	gv config set colour=blue
	assert_failure 2
	gv config set mode
	assert_failure 2
	gv config frob mode
	assert_failure 2
	gv config set
	assert_failure 2
	[ "$(cat "$CONF")" = mode=container ]
}

@test "get of an unset key exits 1; of an unknown key 2" {
	printf 'mode=container\n' >"$CONF"
	gv config get exclude
	assert_failure 1
	assert_regex "$stderr" "exclude is not set"
	gv config get colour
	assert_failure 2
}

@test "set says a reboot is needed when the running boot is in another mode" {
	gv --cmdline "" apply
	[ "$(jq -r .mode "$ROOT/run/gpuvm/state.json")" = container ]
	gv --cmdline "" config set mode=vm-passthrough
	assert_output --partial "reboot needed: this boot runs container, the next one vm-passthrough"
	gv --cmdline "" config set mode=container
	assert_output --partial "the running boot is already in container"
	gv --cmdline "gpuvm.mode=vm-vgpu" config set mode=vm-passthrough
	assert_output --partial "the kernel command line sets mode, which overrides the file"
	mkdir -p "$ROOT/usr/lib/dracut/modules.d/90gpuvm"
	gv --cmdline "" config set mode=vm-vgpu
	assert_output --partial "run dracut -f before rebooting"
}

@test "--file edits another file" {
	gv config set --file "$BATS_TEST_TMPDIR/x/other.conf" ids=10de:2204
	assert_success
	[ "$(cat "$BATS_TEST_TMPDIR/x/other.conf")" = ids=10de:2204 ]
}

@test "32 concurrent writers of different keys lose none and leave no partial file" {
	printf '# start\n' >"$CONF"
	for i in $(seq 1 8); do
		"$GPUVM" --root "$ROOT" config set mode=vm-vgpu >/dev/null &
		"$GPUVM" --root "$ROOT" config set on_error=release >/dev/null &
		"$GPUVM" --root "$ROOT" config set nvswitch=vm >/dev/null &
		"$GPUVM" --root "$ROOT" config set "exclude=0000:0$i:00.0" >/dev/null &
	done
	wait
	grep -qx "mode=vm-vgpu" "$CONF"
	grep -qx "on_error=release" "$CONF"
	grep -qx "nvswitch=vm" "$CONF"
	[ "$(grep -c '^exclude=0000:0[1-8]:00.0$' "$CONF")" = 1 ]
	[ "$(wc -l <"$CONF")" = 5 ]
	[ -z "$(find "$ROOT/etc/gpuvm" -name '.*tmp')" ]
}
