#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# No terminal control in human-readable output: names from sysfs, a config or pci.ids reach
# the console with C0, DEL, C1 (raw or as UTF-8) and invalid UTF-8 masked.

load helpers

# ESC ] (OSC), BEL, CSI as UTF-8 (U+009B), a raw CSI byte, a byte that is never UTF-8.
EVIL=$(printf 'x\033]0;pwned\007\302\2332J\233m\377')

setup() {
	mkfx workstation
}

# clean TEXT: valid UTF-8 with no control character but tab and newline, no DEL, no C1.
clean() {
	if ! printf '%s' "$1" | iconv -f UTF-8 -t UTF-8 >/dev/null 2>&1; then
		echo "not valid UTF-8: $(printf '%s' "$1" | od -c | head -n 5)" >&2
		return 1
	fi
	if printf '%s' "$1" | LC_ALL=C grep -qP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]'; then
		echo "terminal control: $(printf '%s' "$1" | LC_ALL=C grep -aP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]' | od -c | head -n 5)" >&2
		return 1
	fi
}

# The companion's driver (uevent DRIVER=) and the GPU's driver_override carry EVIL.
evil_names() {
	dev="$ROOT/sys/bus/pci/devices"
	sed -i "s/^DRIVER=.*/DRIVER=snd$EVIL/" "$dev/0000:01:00.1/uevent"
	printf 'nv%s\n' "$EVIL" >"$dev/0000:01:00.0/driver_override"
}

@test "plan and status in text: driver and override names masked" {
	evil_names
	gv --cmdline "gpuvm.mode=vm-passthrough" plan
	assert_success
	assert_output --regexp "0000:01:00.1 +10de:10f8 0403 +sndx\?\]0;pwned\?\?\?2J\?m\? +bind"
	clean "$output"
	gv --cmdline "gpuvm.mode=container" plan
	assert_success
	clean "$output"
	gv status
	assert_success
	assert_output --partial "override nvx?]0;pwned???2J?m?"
	clean "$output"
	# JSON keeps the name as it is, escaped
	gv status --json
	dev_field 0000:01:00.0 driver_override | grep -q "$(printf 'nvx\033]0;pwned\007')"
}

@test "stderr and the state file: log lines masked" {
	evil_names
	gv --cmdline "gpuvm.mode=vm-passthrough" apply
	assert_regex "$stderr" "0000:01:00.1: .*unbind from sndx\?\]0;pwned\?\?\?2J\?m\?"
	clean "$stderr"
	clean "$output"
}

@test "check: a blocking device's driver masked" {
	mkfx gpu-nic
	sed -i "s/^DRIVER=.*/DRIVER=igb$EVIL/" "$ROOT/sys/bus/pci/devices/0000:02:00.0/uevent"
	gv --cmdline "" check --mode vm-passthrough
	assert_output --partial "igbx?]0;pwned"
	clean "$output"
	clean "$stderr"
}

@test "config get and cmdline: values masked" {
	mkdir -p "$ROOT/etc/gpuvm"
	printf 'config=LABEL=a%s\n' "$EVIL" >"$ROOT/etc/gpuvm/gpuvm.conf"
	gv config get config
	assert_failure 1
	# the value is named, masked: each control byte a '?'
	assert_regex "$stderr" "config: invalid value 'LABEL=ax\?\]0;pwned\?\?\?2J\?m\?'"
	clean "$output"
	clean "$stderr"
	gv --cmdline "gpuvm.mode=vm-passthrough gpuvm.x$EVIL=1" cmdline
	assert_success
	assert_regex "$stderr" "unknown key 'gpuvm.xx\?\]0;pwned\?\?\?2J\?m\?' ignored"
	clean "$output"
	clean "$stderr"
}

@test "kubevirt: a name from pci.ids with terminal control" {
	mkdir -p "$ROOT/usr/share/misc"
	printf '10de  NVIDIA Corporation\n\t1e87  TU104 %s [RTX 2080]\n' "$EVIL" >"$ROOT/usr/share/misc/pci.ids"
	gv --cmdline "" kubevirt
	assert_success
	assert_output --partial 'resourceName: "nvidia.com/TU104_X0PWNED2JM_RTX_2080"'
	clean "$output"
	clean "$stderr"
}

@test "kubevirt: a vGPU type name from sysfs with C1 and bidirectional controls" {
	mkfx sriov
	# U+009B (CSI as UTF-8) and U+202E (right-to-left override) in mdev_supported_types/*/name,
	# then a quote and a backslash for the YAML's escaping.
	fx_mdev_type "$ROOT" 0000:41:00.4 nvidia-1155 "$(printf 'NVIDIA L40S-1Q\302\2332J\342\200\256x\042\134')"
	gv --cmdline "gpuvm.mode=vm-vgpu" kubevirt
	assert_success
	clean "$output"
	clean "$stderr"
	if printf '%s' "$output" | LC_ALL=C grep -qF -e "$(printf '\302\233')" -e "$(printf '\342\200\256')"; then
		echo "a C1 or bidirectional control is in the YAML" >&2
		return 1
	fi
	assert_output --partial 'mdevNameSelector: "NVIDIA L40S-1Q??2J???x\"\\"'
	printf '%s' "$output" | python3 -c 'import sys, yaml; d = yaml.safe_load(sys.stdin)
m = d["permittedHostDevices"]["mediatedDevices"][0]
assert m["mdevNameSelector"] == "NVIDIA L40S-1Q??2J???x\"\\", m
assert m["resourceName"] == "nvidia.com/NVIDIA_L40S-1Q??2J???x\"\\", m'
}

@test "usage errors: an unknown command or argument masked" {
	gv "cmd$EVIL"
	assert_failure 2
	assert_regex "$stderr" "unknown command 'cmdx\?\]0;pwned"
	clean "$stderr"
	gv plan "arg$EVIL"
	assert_failure 2
	assert_regex "$stderr" "unexpected argument 'argx\?\]0;pwned"
	clean "$stderr"
	gv plan "--o$EVIL"
	assert_failure 2
	assert_regex "$stderr" "unknown option '--ox\?\]0;pwned"
	clean "$stderr"
}
