#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# gpuvm apply --root: what it writes into the tree, the state file, the exit codes.

load helpers

@test "apply vm-passthrough writes the overrides, unbinds, probes and leaves a state file" {
	mkfx workstation
	gv --cmdline "gpuvm.mode=vm-passthrough" apply
	assert_success
	for f in 0 1 2 3; do
		[ "$(cat "$ROOT/sys/bus/pci/devices/0000:01:00.$f/driver_override")" = vfio-pci ]
	done
	[ "$(cat "$ROOT/sys/bus/pci/drivers/nouveau/unbind")" = 0000:01:00.0 ]
	[ "$(cat "$ROOT/sys/bus/pci/drivers/snd_hda_intel/unbind")" = 0000:01:00.1 ]
	[ -n "$(cat "$ROOT/sys/bus/pci/drivers_probe")" ]
	# Devices that are not ours are left exactly as they were.
	[ "$(cat "$ROOT/sys/bus/pci/devices/0000:00:02.0/driver_override")" = "(null)" ]
	assert_regex "$stderr" "gpuvm: 0000:01:00.0: nouveau -> vfio-pci \(bind, not verified: no kernel under --root\)"
	assert_regex "$stderr" "vm-passthrough: 1 GPU and 3 companion functions on vfio-pci, 0 failed"
}

@test "the state file is valid JSON with the fields the issue asks for" {
	mkfx workstation
	gv --cmdline "gpuvm.mode=vm-passthrough" apply
	output=$(cat "$ROOT/run/gpuvm/state.json")
	printf '%s' "$output" | jq -e . >/dev/null
	[ "$(jqr .command)" = apply ]
	[ "$(jqr .result)" = ok ]
	[ "$(jqr .version)" = "$("$GPUVM" --version | cut -d' ' -f2)" ]
	[ "$(jqr .kernel)" = 6.1.0-99-amd64 ]
	[ "$(jqr '.elapsed_us | type')" = number ]
	[ "$(jqr '.modules[0].name')" = vfio-pci ]
	[ "$(jqr '.modules[0].loaded')" = false ]
	[ "$(dev_field 0000:01:00.0 driver_before)" = nouveau ]
	[ "$(dev_field 0000:01:00.0 verified)" = false ]
	[ "$(dev_field 0000:01:00.0 result)" = unverified ]
	[ "$(jqr '.groups[0].viable')" = true ]
	for k in mode mode_source iommu devices groups warnings errors settings; do
		[ "$(jqr "has(\"$k\")")" = true ]
	done
	[ "$(stat -c %a "$ROOT/run/gpuvm/state.json")" = 644 ]
	[ -z "$(find "$ROOT/run/gpuvm" -name '.*')" ]	# no temporary file left
}

@test "apply --json prints the state it wrote" {
	mkfx workstation
	gv --cmdline "gpuvm.mode=vm-passthrough" apply --json
	assert_success
	[ "$output" = "$(cat "$ROOT/run/gpuvm/state.json")" ]
}

@test "apply without an IOMMU: exit 3, GPU held, the error in the state file" {
	mkfx noiommu
	gv --cmdline "gpuvm.mode=vm-passthrough" apply
	assert_failure 3
	[ "$(cat "$ROOT/sys/bus/pci/devices/0000:01:00.0/driver_override")" = vfio-pci ]
	[ "$(cat "$ROOT/sys/bus/pci/drivers/nouveau/unbind")" = 0000:01:00.0 ]
	output=$(cat "$ROOT/run/gpuvm/state.json")
	[ "$(dev_field 0000:01:00.0 action)" = hold ]
	[ "$(jqr .result)" = failed ]
	assert_regex "$(jqr '.errors[0]')" "vm-passthrough needs an active IOMMU and none is active"
	assert_regex "$(jqr '.errors[1]')" "0000:01:00.0: the IOMMU is not active"
}

@test "apply on a non-viable group: exit 1, the NIC untouched" {
	mkfx gpu-nic
	gv --cmdline "gpuvm.mode=vm-passthrough" apply
	assert_failure 1
	[ "$(cat "$ROOT/sys/bus/pci/devices/0000:02:00.0/driver_override")" = "(null)" ]
	[ ! -s "$ROOT/sys/bus/pci/drivers/igb/unbind" ]
	assert_regex "$stderr" "0000:02:00.0 \(8086:1533, igb\) is neither selected"
}

@test "apply container on a stale vfio bind clears the override and unbinds" {
	mkfx vfio-stale
	gv --cmdline "gpuvm.mode=container" apply
	assert_success
	[ "$(cat "$ROOT/sys/bus/pci/devices/0000:01:00.0/driver_override")" = "" ]
	[ -n "$(cat "$ROOT/sys/bus/pci/drivers/vfio-pci/unbind")" ]
}

@test "apply vm-vgpu reserves the GPUs for nvidia, or for host_driver" {
	mkfx workstation
	gv --cmdline "gpuvm.mode=vm-vgpu" apply
	assert_success
	[ "$(cat "$ROOT/sys/bus/pci/devices/0000:01:00.0/driver_override")" = nvidia ]
	[ "$(cat "$ROOT/sys/bus/pci/devices/0000:01:00.1/driver_override")" = "(null)" ]
	mkfx workstation
	gv --cmdline "gpuvm.mode=vm-vgpu gpuvm.host_driver=nvidia_vgpu_vfio" apply
	[ "$(cat "$ROOT/sys/bus/pci/devices/0000:01:00.0/driver_override")" = nvidia_vgpu_vfio ]
}

@test "apply with nothing to do: exit 0, result noop, nothing written" {
	mkfx workstation
	gv --cmdline "gpuvm.mode=container" apply
	assert_success
	[ "$(jq -r .result "$ROOT/run/gpuvm/state.json")" = noop ]
	[ ! -s "$ROOT/sys/bus/pci/drivers_probe" ]
}

@test "a /run that cannot be written is reported and the exit status stands" {
	mkfx workstation
	rm -rf "$ROOT/run"
	printf 'not a directory' >"$ROOT/run"
	gv --cmdline "gpuvm.mode=vm-passthrough" apply
	assert_success
	assert_regex "$stderr" "cannot write /run/gpuvm/state.json"
}

@test "a state file that does not fit: the error is told, the last state stays whole" {
	need "root (to mount a small tmpfs on the tree's /run)" [ "$(id -u)" -eq 0 ]
	mkfx workstation
	mkdir -p "$ROOT/run"
	need "a tmpfs mount" mount -t tmpfs -o size=8k tmpfs "$ROOT/run"
	mkdir -p "$ROOT/run/gpuvm"
	printf '{"last": true}\n' >"$ROOT/run/gpuvm/state.json"
	# what the tmpfs still holds: less than the state of a workstation apply
	head -c 4000 /dev/zero >"$ROOT/run/filler"
	gv --cmdline "gpuvm.mode=vm-passthrough" apply
	st=$status
	umount_err=
	left=$(ls -A "$ROOT/run/gpuvm" "$ROOT/run/gpuvm/metrics" "$ROOT/run/gpuvm/pinned")
	last=$(cat "$ROOT/run/gpuvm/state.json")
	umount "$ROOT/run" || umount_err=1
	[ -z "$umount_err" ]
	[ "$st" -eq 0 ]
	assert_regex "$stderr" "cannot write /run/gpuvm/state.json: No space left on device"
	assert_regex "$stderr" "cannot write /run/gpuvm/metrics/gpuvm.prom: No space left on device"
	assert_regex "$stderr" "cannot write /run/gpuvm/pinned/0000:01:00.0: No space left on device"
	[ "$last" = '{"last": true}' ]
	# no temporary file left behind, here or in the metrics file's or the pinned records' directory
	[ "$left" = "$(printf '%s\n' "$ROOT/run/gpuvm:" metrics pinned state.json "" "$ROOT/run/gpuvm/metrics:" "" "$ROOT/run/gpuvm/pinned:")" ]
}

@test "a writer slow to start: the first write's bound counts from when it begins" {
	need strace command -v strace
	mkfx workstation
	# the writer's first call after fork (musl's gettid) held 1.5 s, past the 1 s bound: no
	# write is under way then, so nothing is abandoned. Only gettid stops (--seccomp-bpf):
	# a trace that stopped every call would slow the writes themselves towards the bound
	# on a loaded machine, the more so under qemu-user.
	ASAN_OPTIONS=detect_leaks=0 run --separate-stderr strace -f --seccomp-bpf -o /dev/null \
		-e trace=gettid -e inject=gettid:delay_exit=1500000 "$GPUVM" --root "$ROOT" \
		--cmdline "gpuvm.mode=vm-passthrough gpuvm.write_timeout_ms=1000" apply
	assert_success
	refute_regex "$stderr" "no answer in time"
	[ "$(jq -r '.devices[] | select(.address == "0000:01:00.0") | .result' "$ROOT/run/gpuvm/state.json")" = unverified ]
}

@test "a write that blocks is abandoned after write_timeout_ms and the boot goes on" {
	mkfx workstation
	# A FIFO with no reader blocks the writer's open(), as a driver stuck in remove()
	# blocks an unbind: the real time bound in rootio.c is what is tested here.
	unbind="$ROOT/sys/bus/pci/drivers/nouveau/unbind"
	rm -f "$unbind"
	mkfifo "$unbind"
	start=$(date +%s%N)
	# timeout: a gpuvm that waited for the blocked writer fails here instead of hanging
	run --separate-stderr timeout 60 "$GPUVM" --root "$ROOT" \
		--cmdline "gpuvm.mode=vm-passthrough gpuvm.write_timeout_ms=300" apply
	took=$((($(date +%s%N) - start) / 1000000))
	# Release the abandoned writer.
	timeout 5 cat "$unbind" >/dev/null || true
	assert_failure 1
	assert_regex "$stderr" "unbind from nouveau: no answer in time \(write still blocked\)"
	[ "$took" -lt 20000 ]	# not a performance test: only that it did not wait for the writer
	[ "$(jq -r '.devices[] | select(.address == "0000:01:00.0") | .result' "$ROOT/run/gpuvm/state.json")" = held ]
}

@test "a sender slow after its request: the write that blocks is the one named, in its bound" {
	need strace command -v strace
	mkfx workstation
	unbind="$ROOT/sys/bus/pci/drivers/nouveau/unbind"
	rm -f "$unbind"
	mkfifo "$unbind"
	# gpuvm held 1 s after each request it sends: its writer meanwhile writes the override
	# and blocks on the unbind. Counted from after the send, those writes would look not
	# begun: the hang then waits out the writer's start-up allowance and is put on the
	# override. Only sendto stops (--seccomp-bpf), as in the slow-writer case above; strace
	# runs detached (-D) so that it does not wait with the abandoned writer for the FIFO.
	start=$(date +%s%N)
	ASAN_OPTIONS=detect_leaks=0 run --separate-stderr timeout 60 strace -D -f --seccomp-bpf \
		-o /dev/null -e trace=sendto -e inject=sendto:delay_exit=1000000 "$GPUVM" \
		--root "$ROOT" --cmdline "gpuvm.mode=vm-passthrough gpuvm.write_timeout_ms=300" apply
	took=$((($(date +%s%N) - start) / 1000000))
	timeout 5 cat "$unbind" >/dev/null || true
	assert_failure 1
	assert_regex "$stderr" "unbind from nouveau: no answer in time \(write still blocked\)"
	refute_regex "$stderr" "to driver_override: no answer in time"
	[ "$took" -lt 10000 ] # the writer's start-up allowance (10 s) was not waited out
	writers_gone
}

# gpuvm_procs: the processes (gpuvm and its writers) whose command line names $ROOT. pgrep's
# 1 is "none"; any other failure (no pgrep, a bad pattern) fails here rather than read as none.
gpuvm_procs() {
	local r=0
	pgrep -f -- "--root $ROOT " || r=$?
	[ "$r" -le 1 ]
}

# writers_gone: every writer of $ROOT has exited within 2 s (abandoned ones once released).
writers_gone() {
	local procs
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		procs=$(gpuvm_procs)
		[ -n "$procs" ] || break
		sleep 0.2
	done
	procs=$(gpuvm_procs)
	[ -z "$procs" ]
}

@test "writes after an abandoned one go to a new writer and succeed" {
	mkfx domain2
	# The first GPU's driver_override blocks (twice: the write, then on_error=hold's);
	# the second GPU, in another group, must still be bound by the writes that follow.
	ovr="$ROOT/sys/bus/pci/devices/0000:01:00.0/driver_override"
	rm -f "$ovr"
	mkfifo "$ovr"
	# timeout: a gpuvm that waited for a blocked writer fails here instead of hanging
	run --separate-stderr timeout 60 "$GPUVM" --root "$ROOT" \
		--cmdline "gpuvm.mode=vm-passthrough gpuvm.write_timeout_ms=200" apply
	# Release the abandoned writers (a reader's open lets every blocked writer through).
	timeout 5 cat "$ovr" >/dev/null || true
	assert_failure 4
	assert_regex "$stderr" "0000:01:00.0: group [0-9]+ failed: write 'vfio-pci' to driver_override: no answer in time"
	state="$ROOT/run/gpuvm/state.json"
	[ "$(jq -r '.devices[] | select(.address == "10000:01:00.0") | .result' "$state")" = unverified ]
	[ "$(jq -r '.devices[] | select(.address == "10000:01:00.1") | .result' "$state")" = unverified ]
	[ "$(cat "$ROOT/sys/bus/pci/devices/10000:01:00.0/driver_override")" = vfio-pci ]
	[ "$(cat "$ROOT/sys/bus/pci/drivers/nouveau/unbind")" = 10000:01:00.0 ]
	# The first GPU's audio function, after both abandoned writes: held with its override.
	[ "$(cat "$ROOT/sys/bus/pci/devices/0000:01:00.1/driver_override")" = vfio-pci ]
	# Released, the abandoned writers finish their write and exit.
	writers_gone
}

@test "a device's writes go to the writer as one sequence, each with its own time bound" {
	mkfx workstation
	# The GPU's override and its unbind from nouveau each block for 1.2 s, under a bound of
	# 2 s: the sequence takes 2.4 s, and each of its writes stays within the bound. A bound
	# on the sequence as a whole would abandon the unbind.
	ovr="$ROOT/sys/bus/pci/devices/0000:01:00.0/driver_override"
	unbind="$ROOT/sys/bus/pci/drivers/nouveau/unbind"
	rm -f "$ovr" "$unbind"
	mkfifo "$ovr" "$unbind"
	(
		sleep 1.2
		timeout 10 cat "$ovr" >"$BATS_TEST_TMPDIR/ovr"
		sleep 1.2
		timeout 10 cat "$unbind" >"$BATS_TEST_TMPDIR/unbind"
	) 3>&- &
	reader=$!
	start=$(date +%s%N)
	run --separate-stderr timeout 60 "$GPUVM" --root "$ROOT" \
		--cmdline "gpuvm.mode=vm-passthrough gpuvm.write_timeout_ms=2000" apply
	took=$((($(date +%s%N) - start) / 1000000))
	wait "$reader"
	assert_success
	[ "$took" -ge 2000 ] # both writes were waited for, one after the other
	[ "$(cat "$BATS_TEST_TMPDIR/ovr")" = vfio-pci ]
	[ "$(cat "$BATS_TEST_TMPDIR/unbind")" = 0000:01:00.0 ]
	[ "$(jq -r '.devices[] | select(.address == "0000:01:00.0") | .result' "$ROOT/run/gpuvm/state.json")" = unverified ]
}

@test "an abandoned writer does none of the rest of its sequence" {
	mkfx workstation
	# The GPU's override blocks past the bound; once released, its writer must not go on
	# to the unbind and the probe it was given with it.
	ovr="$ROOT/sys/bus/pci/devices/0000:01:00.0/driver_override"
	rm -f "$ovr"
	mkfifo "$ovr"
	run --separate-stderr timeout 60 "$GPUVM" --root "$ROOT" \
		--cmdline "gpuvm.mode=vm-passthrough gpuvm.write_timeout_ms=200" apply
	assert_failure 1
	assert_regex "$stderr" "0000:01:00.0: .*write 'vfio-pci' to driver_override: no answer in time"
	# Release the abandoned writers (the write, then on_error=hold's), and let them exit.
	timeout 5 cat "$ovr" >/dev/null || true
	writers_gone
	[ -z "$(cat "$ROOT/sys/bus/pci/drivers/nouveau/unbind")" ]
	run grep -x 0000:01:00.0 "$ROOT/sys/bus/pci/drivers_probe"
	assert_failure
}

@test "the writer exits with gpuvm" {
	mkfx workstation
	gv --cmdline "gpuvm.mode=vm-passthrough" apply
	assert_success
	[ "$(cat "$ROOT/sys/bus/pci/drivers_probe")" = 0000:01:00.3 ]
	procs=$(gpuvm_procs)
	[ -z "$procs" ]
}
