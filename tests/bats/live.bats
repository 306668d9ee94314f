#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# gpuvm apply --live --root: in use means refuse. The holders are /proc/PID/fd
# links in the fixture tree, matched by their text (a fixture has no device nodes).

load helpers

GPU=0000:01:00.0

# holder PID COMM NODE: a process of the tree with descriptor 5 on NODE (and 0 on /dev/null).
holder() {
	mkdir -p "$ROOT/proc/$1/fd"
	printf '%s\n' "$2" >"$ROOT/proc/$1/comm"
	ln -s /dev/null "$ROOT/proc/$1/fd/0"
	ln -s "$3" "$ROOT/proc/$1/fd/5"
}

# drm ADDR NAME MINOR: a DRM node of the function, as sysfs lists it.
drm() {
	mkdir -p "$ROOT/sys/bus/pci/devices/$1/drm/$2"
	printf '226:%s\n' "$3" >"$ROOT/sys/bus/pci/devices/$1/drm/$2/dev"
}

# untouched ADDR DRIVER: no write reached the function or its driver.
untouched() {
	[ "$(cat "$ROOT/sys/bus/pci/devices/$1/driver_override")" = "${3:-(null)}" ]
	[ ! -s "$ROOT/sys/bus/pci/drivers/$2/unbind" ]
	[ ! -s "$ROOT/sys/bus/pci/drivers_probe" ]
}

state() {
	output=$(cat "$ROOT/run/gpuvm/state.json")
}

@test "free: apply --live switches as apply does, and the state file records it" {
	mkfx workstation
	drm $GPU card1 1
	holder 300 Xorg /dev/dri/card0 # another card: not ours
	gv --cmdline "gpuvm.mode=vm-passthrough" apply --live
	assert_success
	[ "$(cat "$ROOT/sys/bus/pci/devices/$GPU/driver_override")" = vfio-pci ]
	[ "$(cat "$ROOT/sys/bus/pci/drivers/nouveau/unbind")" = $GPU ]
	state
	[ "$(jqr .result)" = ok ]
	[ "$(jqr .mode)" = vm-passthrough ]
	[ "$(jqr .live.mode_requested)" = vm-passthrough ]
	[ "$(jqr .live.mode_before)" = null ]
	[ "$(jqr .live.refused)" = 0 ]
	[ "$(dev_field $GPU driver_before)" = nouveau ]
	[ "$(dev_field $GPU holders_total)" = 0 ]
}

@test "a process holding the GPU's /dev/dri node: exit 7, the group untouched, the culprit named" {
	mkfx workstation
	drm $GPU card1 1
	drm $GPU renderD129 129
	holder 4242 Xorg /dev/dri/card1
	gv --cmdline "gpuvm.mode=vm-passthrough" apply --live
	assert_failure 7
	untouched $GPU nouveau
	untouched 0000:01:00.1 snd_hda_intel
	assert_regex "$stderr" "gpuvm: error: $GPU: in use: /dev/dri/card1 \\($GPU\\) held by pid 4242 \\(Xorg\\); its IOMMU group left as it is"
	assert_regex "$stderr" "gpuvm: error: 0000:01:00.1: in use: /dev/dri/card1 \\($GPU\\) held by pid 4242"
	assert_regex "$stderr" "live switch to vm-passthrough: 1 selected device in use, left as it was"
	state
	[ "$(jqr .result)" = refused ]
	[ "$(jqr .live.refused)" = 1 ]
	[ "$(dev_field $GPU result)" = refused ]
	[ "$(dev_field 0000:01:00.1 result)" = refused ]
	[ "$(dev_field $GPU 'holders[0].pid')" = 4242 ]
	[ "$(dev_field $GPU 'holders[0].comm')" = Xorg ]
	[ "$(dev_field $GPU 'holders[0].node')" = /dev/dri/card1 ]
	# The render node too; two holders are counted.
	holder 4243 blender /dev/dri/renderD129
	gv --cmdline "gpuvm.mode=vm-passthrough" apply --live
	assert_failure 7
	assert_regex "$stderr" "held by pid 424[23] \\([A-Za-z]+\\) and 1 other process;"
}

@test "a process holding the GPU's framebuffer /dev/fbN (graphics/fbN): refused, by its number or its text" {
	mkfx workstation
	mkdir -p "$ROOT/sys/bus/pci/devices/$GPU/graphics/fb0"
	printf '29:0\n' >"$ROOT/sys/bus/pci/devices/$GPU/graphics/fb0/dev"
	holder 4300 fbi /dev/fb1 # another framebuffer: not ours
	gv --cmdline "gpuvm.mode=vm-passthrough" apply --live
	assert_success
	mkfx workstation
	mkdir -p "$ROOT/sys/bus/pci/devices/$GPU/graphics/fb0"
	printf '29:0\n' >"$ROOT/sys/bus/pci/devices/$GPU/graphics/fb0/dev"
	holder 4301 plymouthd /dev/fb0
	gv --cmdline "gpuvm.mode=vm-passthrough" apply --live
	assert_failure 7
	untouched $GPU nouveau
	untouched 0000:01:00.1 snd_hda_intel
	assert_regex "$stderr" "gpuvm: error: $GPU: in use: /dev/fb0 \\($GPU\\) held by pid 4301 \\(plymouthd\\); its IOMMU group left as it is"
	state
	[ "$(dev_field $GPU 'holders[0].node')" = /dev/fb0 ]
}

@test "a refused switch keeps the mode the host is in; config set then asks for a reboot" {
	mkfx workstation
	drm $GPU card1 1
	gv --cmdline "gpuvm.mode=container" apply
	assert_success
	holder 4242 Xorg /dev/dri/card1
	gv --cmdline "" --config /dev/null apply --live # no mode: container, nothing to do
	assert_success
	printf 'mode=vm-passthrough\n' >"$BATS_TEST_TMPDIR/conf"
	gv --config "$BATS_TEST_TMPDIR/conf" apply --live
	assert_failure 7
	state
	[ "$(jqr .mode)" = container ]
	[ "$(jqr .live.mode_before)" = container ]
	[ "$(jqr .live.mode_requested)" = vm-passthrough ]
	mkdir -p "$ROOT/etc/gpuvm"
	gv config set mode=vm-passthrough
	assert_line "reboot: needed: this boot runs container, the file says vm-passthrough"
}

@test "a VM holding /dev/vfio/GROUP: back to container is refused, vfio-pci kept" {
	mkfx vfio-stale
	holder 900 qemu-system-x86 /dev/vfio/2
	gv --cmdline "gpuvm.mode=container" apply --live
	assert_failure 7
	untouched $GPU vfio-pci vfio-pci
	[ "$(cat "$ROOT/sys/bus/pci/devices/0000:01:00.1/driver_override")" = vfio-pci ]
	assert_regex "$stderr" "$GPU: in use: /dev/vfio/2 \\($GPU\\) held by pid 900 \\(qemu-system-x86\\)"
	# Its vfio cdev, the same.
	mkfx vfio-stale
	mkdir -p "$ROOT/sys/bus/pci/devices/0000:01:00.1/vfio-dev/vfio3"
	printf '511:3\n' >"$ROOT/sys/bus/pci/devices/0000:01:00.1/vfio-dev/vfio3/dev"
	holder 901 qemu-kvm /dev/vfio/devices/vfio3
	gv --cmdline "gpuvm.mode=container" apply --live
	assert_failure 7
	untouched $GPU vfio-pci vfio-pci
	# The GPU is refused for its audio function's cdev: the group goes whole or not at all.
	assert_regex "$stderr" "$GPU: in use: /dev/vfio/devices/vfio3 \\(0000:01:00.1\\) held by pid 901 \\(qemu-kvm\\); its IOMMU group"
}

@test "the nvidia GPU's /dev/nvidiaN by its minor, and the unbindLock" {
	mkfx sriov
	pf=0000:41:00.0
	printf '0\n' >"$ROOT/sys/bus/pci/devices/$pf/sriov_numvfs"
	nv="$ROOT/proc/driver/nvidia/gpus/$pf"
	mkdir -p "$nv"
	printf 'Model: \t\t NVIDIA L40S\nDevice Minor: \t 2\nGPU Excluded:\t No\n' >"$nv/information"
	holder 555 nvidia-persiste /dev/nvidia2
	gv --cmdline "gpuvm.mode=vm-passthrough" apply --live
	assert_failure 7
	assert_regex "$stderr" "$pf: in use: /dev/nvidia2 \\($pf\\) held by pid 555 \\(nvidia-persiste\\)"
	untouched $pf nvidia
	rm -r "$ROOT/proc/555"
	# The vGPU host driver's lock: read back 0 (a link to /dev/null reads nothing) is refused.
	ln -s /dev/null "$nv/unbindLock"
	gv --cmdline "gpuvm.mode=vm-passthrough" apply --live
	assert_failure 7
	assert_regex "$stderr" "$pf: the nvidia driver has clients \\(its unbindLock was not granted\\)"
	untouched $pf nvidia
	# Granted (the file reads back the 1 written): switched.
	rm "$nv/unbindLock"
	printf '0\n' >"$nv/unbindLock"
	gv --cmdline "gpuvm.mode=vm-passthrough" apply --live
	assert_success
	[ "$(cat "$nv/unbindLock")" = 1 ]
	[ "$(cat "$ROOT/sys/bus/pci/drivers/nvidia/unbind")" = $pf ]
}

@test "enabled virtual functions, or a mediated device, refuse the GPU" {
	mkfx sriov
	pf=0000:41:00.0
	gv --cmdline "gpuvm.mode=vm-passthrough" apply --live
	assert_failure 7
	assert_regex "$stderr" "in use: $pf: 4 virtual functions enabled \\(sriov_numvfs\\)"
	untouched $pf nvidia
	printf '0\n' >"$ROOT/sys/bus/pci/devices/$pf/sriov_numvfs"
	mkdir "$ROOT/sys/bus/pci/devices/$pf/6e5c1f0a-2b7d-4c8e-9f10-112233445566"
	gv --cmdline "gpuvm.mode=vm-passthrough" apply --live
	assert_failure 7
	assert_regex "$stderr" "mediated device 6e5c1f0a-2b7d-4c8e-9f10-112233445566 exists \\(vGPU\\)"
	untouched $pf nvidia
}

@test "--wait: a holder that goes away during the wait, then the switch" {
	mkfx workstation
	drm $GPU card1 1
	holder 4242 Xorg /dev/dri/card1
	(sleep 1 && rm -f "$ROOT/proc/4242/fd/5") &
	gv --cmdline "gpuvm.mode=vm-passthrough" apply --live --wait 20
	wait
	assert_success
	[ "$(cat "$ROOT/sys/bus/pci/devices/$GPU/driver_override")" = vfio-pci ]
	state
	[ "$(jqr .live.wait_s)" = 20 ]
	[ "$(jqr .live.waited_ms)" -ge 500 ]
	[ "$(jqr .live.waited_ms)" -lt 20000 ]
}

@test "--wait: a holder that stays: refused once the wait is over, with the same report" {
	mkfx workstation
	drm $GPU card1 1
	holder 4242 Xorg /dev/dri/card1
	start=$(date +%s%N)
	gv --cmdline "gpuvm.mode=vm-passthrough" apply --live --wait 1
	took=$((($(date +%s%N) - start) / 1000000))
	assert_failure 7
	[ "$took" -ge 1000 ]
	untouched $GPU nouveau
	assert_regex "$stderr" "in use: /dev/dri/card1 \\($GPU\\) held by pid 4242 \\(Xorg\\)"
	state
	[ "$(jqr .live.waited_ms)" -ge 1000 ]
}

@test "a hanging unbind after the check: abandoned after write_timeout_ms, held, exit 1 not 7" {
	mkfx workstation
	unbind="$ROOT/sys/bus/pci/drivers/nouveau/unbind"
	rm -f "$unbind"
	mkfifo "$unbind"
	run --separate-stderr timeout 60 "$GPUVM" --root "$ROOT" \
		--cmdline "gpuvm.mode=vm-passthrough gpuvm.write_timeout_ms=300" apply --live
	timeout 5 cat "$unbind" >/dev/null || true
	assert_failure 1
	assert_regex "$stderr" "unbind from nouveau: no answer in time \\(write still blocked\\)"
	[ "$(jq -r ".devices[] | select(.address == \"$GPU\") | .result" "$ROOT/run/gpuvm/state.json")" = held ]
}

@test "--live and --wait: usage errors" {
	mkfx workstation
	gv apply --wait 5
	assert_failure 2
	assert_regex "$stderr" "--wait goes with --live"
	gv apply --live --dry-run
	assert_failure 2
	gv apply --live --defer
	assert_failure 2
	gv apply --live --wait soon
	assert_failure 2
	assert_regex "$stderr" "--wait: 'soon' is not a number of seconds"
	gv apply --live --wait 100000
	assert_failure 2
	gv plan --live
	assert_failure 2
	assert_regex "$stderr" "--live is not an option of this command"
}

@test "a refused group and a failed one: the failure's exit status (4), the refusal in the state file" {
	mkfx hgx8
	drm 0000:03:00.0 card1 1
	holder 4242 Xorg /dev/dri/card1
	d=$ROOT/sys/bus/pci/devices/0000:23:00.0/driver_override
	rm "$d" && mkdir "$d"
	gv --cmdline "gpuvm.mode=vm-passthrough" apply --live
	assert_failure 4
	state
	[ "$(dev_field 0000:03:00.0 result)" = refused ]
	[ "$(dev_field 0000:23:00.0 result)" != ok ]
	[ "$(dev_field 0000:43:00.0 result)" = unverified ]
	[ "$(jqr .live.refused)" = 1 ]
}
