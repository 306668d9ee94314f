#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# The files apply writes under /run/gpuvm (state.json, pending) and the state file read back:
# no symlink followed, no planted temporary opened, the state read as JSON.

load helpers

setup() {
	mkfx workstation
	secret
}

@test "a symlinked /run/gpuvm is not followed: no state file written elsewhere" {
	mkdir -p "$ROOT/run" "$BATS_TEST_TMPDIR/elsewhere"
	rm -rf "$ROOT/run/gpuvm"
	ln -s "$BATS_TEST_TMPDIR/elsewhere" "$ROOT/run/gpuvm"
	gv --cmdline "" apply
	assert_success
	assert_regex "$stderr" "cannot write /run/gpuvm/state.json: a directory on its path is a symbolic link \(not followed\)"
	[ -z "$(ls -A "$BATS_TEST_TMPDIR/elsewhere")" ]
	[ -L "$ROOT/run/gpuvm" ]
}

@test "a symlinked /run/gpuvm is not followed: no pending record written or removed elsewhere" {
	mkdir -p "$ROOT/run" "$BATS_TEST_TMPDIR/elsewhere"
	rm -rf "$ROOT/run/gpuvm"
	ln -s "$BATS_TEST_TMPDIR/elsewhere" "$ROOT/run/gpuvm"
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" apply --defer
	[ "$status" -eq 5 ]
	assert_regex "$stderr" "cannot write /run/gpuvm/pending: a directory on its path is a symbolic link \(not followed\)"
	[ -z "$(ls -A "$BATS_TEST_TMPDIR/elsewhere")" ]
	printf 'deadline_ms=0\n' >"$BATS_TEST_TMPDIR/elsewhere/pending"
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" apply --resume
	assert_regex "$stderr" "cannot remove /run/gpuvm/pending: a directory on its path is a symbolic link"
	[ -e "$BATS_TEST_TMPDIR/elsewhere/pending" ]
}

@test "a planted temporary of the state file is neither followed nor truncated" {
	mkdir -p "$ROOT/run/gpuvm"
	# Hard links at the temporary's names, old and new; the PID is the shell's, which execs.
	# shellcheck disable=SC2016 # expanded by the inner shell
	run --separate-stderr sh -c 'ln "$1" "$2/.state.json.$$" && ln "$1" "$2/.state.json.$$.tmp" &&
		exec "$3" --root "$4" --cmdline "" apply' sh "$SECRET" "$ROOT/run/gpuvm" "$GPUVM" "$ROOT"
	assert_success
	secret_intact
	[ "$(jq -r .mode "$ROOT/run/gpuvm/state.json")" = container ]
	[ "$(stat -c %h "$ROOT/run/gpuvm/state.json")" = 1 ]
	[ -z "$(find "$ROOT/run/gpuvm" -name '.*tmp')" ]
}

@test "status --nfd reads the state file as JSON, not by its layout" {
	mkdir -p "$ROOT/run/gpuvm"
	# Compact, as another writer (jq -c) would leave it; a key inside a string is not a key.
	printf '{"reason":"x \\"mode\\": \\"vm-vgpu\\"","mode":"vm-passthrough","result":"partial"}' \
		>"$ROOT/run/gpuvm/state.json"
	gv --cmdline "" status --nfd
	assert_success
	assert_line feature.node.kubernetes.io/gpuvm-mode=vm-passthrough
	assert_line feature.node.kubernetes.io/gpuvm-result=partial
	# A key twice is ambiguous: not believed.
	printf '{"mode":"container","mode":"vm-passthrough"}' >"$ROOT/run/gpuvm/state.json"
	gv --cmdline "" status --nfd
	assert_line feature.node.kubernetes.io/gpuvm-mode=none
}
