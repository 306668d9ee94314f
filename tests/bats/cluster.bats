#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# What gpuvm hands the cluster: KubeVirt's permittedHostDevices, NFD's feature file.

load helpers

pciids() {
	mkdir -p "$ROOT/usr/share/misc"
	printf '%s\n' '# pci.ids excerpt' '10de  NVIDIA Corporation' \
		'	2330  GH100 [H100 SXM5 80GB]' '	22a3  GH100 [H100 NVSwitch]' \
		'10df  Emulex Corporation' '	2330  not this one' >"$ROOT/usr/share/misc/pci.ids"
}

@test "kubevirt: one entry per ID, named as the sandbox device plugin names it" {
	mkfx hgx8
	pciids
	gv --cmdline "" kubevirt
	assert_success
	[ "$output" = '# gpuvm kubevirt: merge under the KubeVirt CR'"'"'s spec.configuration
# for NVIDIA'"'"'s sandbox device plugin, which the GPU Operator deploys
permittedHostDevices:
  pciHostDevices:
  - pciVendorSelector: "10DE:2330"
    resourceName: "nvidia.com/GH100_H100_SXM5_80GB"
    externalResourceProvider: true' ]
	gv --cmdline "" kubevirt --json
	[ "$(jqr '.permittedHostDevices.pciHostDevices | length')" = 1 ]
	[ "$(jqr '.permittedHostDevices.pciHostDevices[0].externalResourceProvider')" = true ]
	# --external-provider, once needed for this, says the default (scripts that give it).
	gv --cmdline "" kubevirt --external-provider --json
	[ "$(jqr '.permittedHostDevices.pciHostDevices[0].externalResourceProvider')" = true ]
}

# The operator's plugin advertises the devices (externalResourceProvider: true), so that is
# the default; KubeVirt's own plugin is asked for, and takes devices on vfio-pci only.
@test "kubevirt --kubevirt-plugin: KubeVirt's own plugin, no external provider" {
	mkfx hgx8
	pciids
	gv --cmdline "" kubevirt --kubevirt-plugin
	assert_success
	assert_line "# for KubeVirt's own device plugin, which takes devices on vfio-pci only"
	refute_output --partial externalResourceProvider
	gv --cmdline "" kubevirt --kubevirt-plugin --json
	[ "$(jqr '.permittedHostDevices.pciHostDevices[0] | has("externalResourceProvider")')" = false ]
	[ -z "$stderr" ] # the names need not be the sandbox plugin's: no word on pci.ids
	gv --cmdline "" kubevirt --kubevirt-plugin --external-provider
	assert_failure 2
	assert_regex "$stderr" "exclude each other"
}

@test "kubevirt --kubevirt-plugin: a GPU on a vfio variant driver is named, KubeVirt's plugin would miss it" {
	mkfx arm64-smmu
	fx_kmod "$ROOT" vfio_pci "alias=vfio_pci:v*d*sv*sd*bc*sc*i*"
	fx_kmod "$ROOT" nvgrace_gpu_vfio_pci "alias=vfio_pci:v000010DEd00002342sv*sd*bc*sc*i*"
	fx_depmod "$ROOT"
	gv --cmdline "gpuvm.mode=vm-passthrough" kubevirt --kubevirt-plugin
	assert_success
	assert_regex "$stderr" "0009:01:00.0: on nvgrace_gpu_vfio_pci, which KubeVirt's own device plugin does not take"
	gv --cmdline "gpuvm.mode=vm-passthrough" kubevirt
	assert_success
	refute_regex "$stderr" "nvgrace_gpu_vfio_pci"
}

@test "kubevirt: NVSwitches too with nvswitch=vm; an ID without a pci.ids name" {
	mkfx hgx8
	pciids
	gv --cmdline "gpuvm.nvswitch=vm" kubevirt --json
	[ "$(jqr '.permittedHostDevices.pciHostDevices[1].resourceName')" = "nvidia.com/GH100_H100_NVSWITCH" ]
	rm "$ROOT/usr/share/misc/pci.ids"
	gv --cmdline "" kubevirt --json
	[ "$(jqr '.permittedHostDevices.pciHostDevices[0].resourceName')" = "nvidia.com/2330" ]
}

# The plugin's getDeviceName: trim, upper-case, '/' and '.' to '_', each run of blanks to one
# '_', then everything but [A-Za-z0-9_.] deleted; not in its pci.ids: the ID as sysfs has it.
@test "kubevirt: names byte for byte as the plugin's, punctuation and all" {
	mkfx hgx8
	mkdir -p "$ROOT/usr/share/misc"
	printf '10de  NVIDIA Corporation\n\t2330  GH100 [GH200 120GB / 480GB] Rev. A\n' \
		>"$ROOT/usr/share/misc/pci.ids"
	gv --cmdline "" kubevirt --json
	[ "$(jqr '.permittedHostDevices.pciHostDevices[0].resourceName')" = "nvidia.com/GH100_GH200_120GB___480GB_REV__A" ]
	printf '10de  NVIDIA Corporation\n\t2330  GA100 [A800-SXM4-80GB] (x|y)\n' \
		>"$ROOT/usr/share/misc/pci.ids"
	gv --cmdline "" kubevirt --json
	[ "$(jqr '.permittedHostDevices.pciHostDevices[0].resourceName')" = "nvidia.com/GA100_A800SXM480GB_XY" ]
	printf '10de  NVIDIA Corporation\n\t2330  [\342\204\242]\n' >"$ROOT/usr/share/misc/pci.ids"
	gv --cmdline "" kubevirt --json
	[ "$(jqr '.permittedHostDevices.pciHostDevices[0].resourceName')" = "nvidia.com/2330" ]
}

# The plugin names from the pci.ids in its image: gpuvm's copy of it, made by
# scripts/pciids-nvidia.sh, comes before the host's, which may be older or newer.
@test "kubevirt: /usr/share/gpuvm/pci.ids before the host's, which is warned about" {
	mkfx hgx8
	pciids
	gv --cmdline "" kubevirt --json
	assert_regex "$stderr" "usr/share/misc/pci.ids.*not the sandbox device plugin's"
	printf '%s\n' '#	Version: 2025.07.11' '10de  NVIDIA Corporation' '	2330  GH100 [H100 SXM5 80GB HBM3]' \
		>"$BATS_TEST_TMPDIR/full.ids"
	mkdir -p "$ROOT/usr/share/gpuvm"
	sh "$TOP/scripts/pciids-nvidia.sh" "$BATS_TEST_TMPDIR/full.ids" \
		>"$ROOT/usr/share/gpuvm/pci.ids"
	gv --cmdline "" kubevirt --json
	[ "$(jqr '.permittedHostDevices.pciHostDevices[0].resourceName')" = "nvidia.com/GH100_H100_SXM5_80GB_HBM3" ]
	[[ "$stderr" != *"not the sandbox device plugin's"* ]]
}

@test "kubevirt --pci-ids FILE: that database only, no warning; one that cannot be read is an error" {
	mkfx hgx8
	pciids
	printf '%s\n' '10de  NVIDIA Corporation' '	2330  GH100 [H100 from the plugin]' \
		>"$BATS_TEST_TMPDIR/plugin.ids"
	gv --cmdline "" kubevirt --json --pci-ids "$BATS_TEST_TMPDIR/plugin.ids"
	assert_success
	[ "$(jqr '.permittedHostDevices.pciHostDevices[0].resourceName')" = "nvidia.com/GH100_H100_FROM_THE_PLUGIN" ]
	[ -z "$stderr" ]
	gv --cmdline "" kubevirt --pci-ids "$BATS_TEST_TMPDIR/none.ids"
	assert_failure 1
	assert_regex "$stderr" "gpuvm: error: --pci-ids .*none.ids: cannot read: No such file or directory"
	[ -z "$output" ]
	gv --cmdline "" plan --pci-ids "$BATS_TEST_TMPDIR/plugin.ids"
	assert_failure 2
}

@test "pciids-nvidia.sh: the header and the block the plugin reads, nothing else" {
	printf '%s\n' '#	Version: 2025.07.11' '#	BSD-3-Clause or GPL-2.0+' '' '10dd  Evans' \
		'	2330  not this one' '10de  NVIDIA Corporation' '	2330  a' '# inside' '		10de 0001  sub' \
		'	2331  b' '10df  Emulex' '	2332  c' >"$BATS_TEST_TMPDIR/full.ids"
	run --separate-stderr sh "$TOP/scripts/pciids-nvidia.sh" "$BATS_TEST_TMPDIR/full.ids"
	assert_success
	assert_line --index 0 '#	Version: 2025.07.11'
	assert_line --index 1 '#	BSD-3-Clause or GPL-2.0+'
	[ "$(printf '%s\n' "$output" | grep -v '^#' | grep .)" = "$(printf '10de  NVIDIA Corporation\n\t2330  a\n\t\t10de 0001  sub\n\t2331  b')" ]
	assert_line '# inside'
	printf '10df  Emulex\n' >"$BATS_TEST_TMPDIR/none.ids"
	run --separate-stderr sh "$TOP/scripts/pciids-nvidia.sh" "$BATS_TEST_TMPDIR/none.ids"
	assert_failure 1
	assert_regex "$stderr" "no 10de"
}

# pciids_pair DIR: a pci.ids from before the plugin's (old.ids, 2025.06.09) and one from after
# it (new.ids, 2026.10.24), small and made up, as scripts/pciids-ship.sh compares them.
pciids_pair() {
	printf '%s\n' '#' '#	List of PCI IDs' '#' '#	Version: 2025.06.09' \
		'#	This file can be distributed under either the GNU General Public License' \
		'#	(version 2 or higher) or the 3-clause BSD License.' '#' '' '# Vendors' \
		'10dd  Evans' '	0007  not NVIDIA'"'"'s' '10de  NVIDIA Corporation' '	0001  same' \
		'	0002  renamed later' '		10de 0002  a subsystem' '	0003  removed later' \
		'# inside' '	0002  a second line of 0002: not read' '	2330  GH100 [H100 SXM5 80GB]' \
		'	22a3  GH100 [H100 NVSwitch]' '10df  Emulex' '	0004  not NVIDIA'"'"'s' >"$1/old.ids"
	printf '%s\n' '#	Version: 2026.10.24' '10dd  Evans' '	0007  not NVIDIA'"'"'s either' \
		'10de  NVIDIA Corporation' '	0001  same' '	0002  renamed' '	0005  added later' \
		'	2330  GH100 [H100 SXM5 80GB]' '	22a3  GH100 [H100 NVSwitch] renamed' \
		'10df  Emulex' '	0006  added, not NVIDIA'"'"'s' >"$1/new.ids"
}

# What the packages ship as /usr/share/gpuvm/pci.ids: the older file's header and NVIDIA block,
# and the IDs whose name may differ in the plugin's pci.ids, from between the two.
@test "pciids-ship.sh --compare: the older block, and the IDs renamed, added or removed between the two as uncertain" {
	t=$BATS_TEST_TMPDIR
	pciids_pair "$t"
	run --separate-stderr sh "$TOP/scripts/pciids-ship.sh" --compare "$t/old.ids" "$t/new.ids"
	assert_success
	[ "$output" = "#
#	List of PCI IDs
#
#	Version: 2025.06.09
#	This file can be distributed under either the GNU General Public License
#	(version 2 or higher) or the 3-clause BSD License.
#
#
#	The NVIDIA block only, by gpuvm's scripts/pciids-ship.sh from pci.ids 2025.06.09.
#	NVIDIA's sandbox device plugin v1.4.0 to v1.6.0 names from pci.ids 2025.07.11: it may name
#	the ID of each #gpuvm-uncertain line below otherwise, or not at all, as that ID is
#	named otherwise in, or is in only one of, this and pci.ids 2026.10.24.
#gpuvm-uncertain 0002
#gpuvm-uncertain 0003
#gpuvm-uncertain 0005
#gpuvm-uncertain 22a3

10de  NVIDIA Corporation
	0001  same
	0002  renamed later
		10de 0002  a subsystem
	0003  removed later
# inside
	0002  a second line of 0002: not read
	2330  GH100 [H100 SXM5 80GB]
	22a3  GH100 [H100 NVSwitch]" ] || fail "$output"
	# make install PCI_IDS= (pciids-nvidia.sh) takes it byte for byte
	printf '%s\n' "$output" >"$t/ship.ids"
	sh "$TOP/scripts/pciids-nvidia.sh" "$t/ship.ids" | cmp - "$t/ship.ids"
	# each file on its side of the plugin's 2025.07.11, the older one's licence as the SBOM says
	run --separate-stderr sh "$TOP/scripts/pciids-ship.sh" --compare "$t/new.ids" "$t/old.ids"
	assert_failure 1
	[ "$stderr" = "pciids-ship: $t/new.ids: pci.ids 2026.10.24 is not from before the plugin's 2025.07.11" ]
	sed -i '/3-clause BSD/d' "$t/old.ids"
	run --separate-stderr sh "$TOP/scripts/pciids-ship.sh" --compare "$t/old.ids" "$t/new.ids"
	assert_failure 1
	assert_regex "$stderr" "old.ids: its header does not grant the GNU GPL version 2 or higher or the 3-clause BSD licence"
}

# An ID the shipped file lists as uncertain: its entry is as named, and warned about once,
# naming the ID and its resourceName; a certain ID is not. Named by the ID where the file
# lacks it (added after the older pci.ids), warned all the same.
@test "kubevirt: an ID the shipped pci.ids lists as uncertain is warned about, a certain one is not" {
	mkfx hgx8
	pciids_pair "$BATS_TEST_TMPDIR"
	mkdir -p "$ROOT/usr/share/gpuvm"
	sh "$TOP/scripts/pciids-ship.sh" --compare "$BATS_TEST_TMPDIR/old.ids" "$BATS_TEST_TMPDIR/new.ids" \
		>"$ROOT/usr/share/gpuvm/pci.ids"
	gv --cmdline "gpuvm.nvswitch=vm" kubevirt --json
	assert_success
	[ "$(jqr '[.permittedHostDevices.pciHostDevices[].resourceName] | join(" ")')" = \
		"nvidia.com/GH100_H100_SXM5_80GB nvidia.com/GH100_H100_NVSWITCH" ]
	[ "$stderr" = "gpuvm: warning: 10DE:22A3: nvidia.com/GH100_H100_NVSWITCH may not be the sandbox device plugin's name: v1.4.0 to v1.6.0 (pci.ids 2025.07.11) may name this ID otherwise; the node's status.capacity shows the plugin's, which gpuvm-kubevirt-patch takes for an ID named by its ID (gpuvm(8), kubevirt)" ] ||
		fail "$stderr"
	sed -i '/^	22a3 /d' "$ROOT/usr/share/gpuvm/pci.ids"
	gv --cmdline "gpuvm.nvswitch=vm" kubevirt
	assert_success
	assert_line '    resourceName: "nvidia.com/22a3"'
	[ "$(grep -c 'may not be the sandbox device plugin' <<<"$stderr")" = 1 ]
	assert_regex "$stderr" "10DE:22A3: nvidia.com/22a3 may not be"
	# KubeVirt's own plugin takes the names the CR gives: no word
	gv --cmdline "gpuvm.nvswitch=vm" kubevirt --kubevirt-plugin
	assert_success
	[ -z "$stderr" ]
}

@test "kubevirt: GPUs that share an IOMMU group are warned about, the entry stays" {
	mkfx hgx8-pairs
	pciids
	gv --cmdline "" kubevirt --json
	assert_success
	[ "$(jqr '.permittedHostDevices.pciHostDevices | length')" = 1 ]
	assert_regex "$stderr" "warning: IOMMU group 8 holds 2 GPUs: they can only be assigned to one VM together"
	assert_regex "$stderr" "warning: IOMMU group 134 holds 2 GPUs"
	mkfx hgx8
	pciids
	gv --cmdline "" kubevirt --json
	assert_success
	[ "$(jqr '.permittedHostDevices.pciHostDevices | length')" = 1 ]
	refute_regex "$stderr" "holds [0-9]+ GPUs"
}

@test "kubevirt: a group that is not viable gives nothing, and says so" {
	mkfx gpu-nic
	gv --cmdline "" kubevirt
	assert_success
	assert_output --partial "pciHostDevices: []"
	assert_regex "$stderr" "no device would be in passthrough"
}

# Names in the namespace NFD allows by default (an unprefixed one is NFD's to prefix, or, with
# its DisableAutoPrefix gate, to drop); an expiry 3 hours ahead that gpuvm-nfd.timer renews.
@test "status --nfd: before any apply, then after" {
	mkfx workstation
	gv status --nfd
	assert_success
	[ "$(printf '%s\n' "$output" | sed 1d)" = "$(printf 'feature.node.kubernetes.io/gpuvm-mode=none\nfeature.node.kubernetes.io/gpuvm-result=not-run\nfeature.node.kubernetes.io/gpuvm-vfio-gpus=0')" ]
	gv --cmdline "gpuvm.mode=vm-passthrough" apply
	gv --cmdline "gpuvm.mode=vm-passthrough" status --nfd
	assert_line feature.node.kubernetes.io/gpuvm-mode=vm-passthrough
	assert_line feature.node.kubernetes.io/gpuvm-result=ok
	mkfx vfio-stale
	gv --cmdline "" status --nfd
	assert_line feature.node.kubernetes.io/gpuvm-vfio-gpus=1
}

@test "status --nfd: the first line is NFD's expiry-time, RFC 3339 in UTC, 3 hours ahead" {
	mkfx workstation
	before=$(date +%s)
	gv status --nfd
	after=$(date +%s)
	assert_success
	first=$(printf '%s\n' "$output" | head -n 1)
	[[ $first =~ ^#\ \+expiry-time=([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)$ ]]
	at=$(date -u -d "${BASH_REMATCH[1]}" +%s)
	[ "$at" -ge $((before + 3 * 3600)) ]
	[ "$at" -le $((after + 3 * 3600)) ]
	# Every other line is a feature with a namespace, as NFD's local source reads them.
	[ "$(printf '%s\n' "$output" | sed 1d | grep -cv '^feature\.node\.kubernetes\.io/gpuvm-[a-z-]*=[a-z0-9-]*$')" = 0 ]
}

@test "an option a command does not take is named, exit 2; --json where no JSON is written" {
	mkfx workstation
	gv plan --nfd
	assert_failure 2
	assert_regex "$stderr" "gpuvm: plan: --nfd is not an option of this command"
	gv status --external-provider
	assert_failure 2
	assert_regex "$stderr" "gpuvm: status: --external-provider is not an option of this command"
	gv status --nfd --json
	assert_failure 2
	assert_regex "$stderr" "gpuvm: status: --nfd writes NFD's own format, not JSON"
	[ -z "$output" ]
	gv config get mode --json
	assert_failure 2
	assert_regex "$stderr" "gpuvm: config: --json is not an option of this command"
	gv config set mode=container --json
	assert_failure 2
	[ ! -e "$ROOT/etc/gpuvm/gpuvm.conf" ] # nothing written
	gv config get mode --kubevirt-plugin
	assert_failure 2
	assert_regex "$stderr" "gpuvm: config: --kubevirt-plugin is not an option of this command"
}

@test "kubevirt under vm-vgpu: mediatedDevices from the types on the GPUs and VFs, once each" {
	mkfx sriov
	pciids
	fx_mdev_type "$ROOT" 0000:41:00.4 nvidia-1155 "NVIDIA L40S-1Q"
	fx_mdev_type "$ROOT" 0000:41:00.5 nvidia-1155 "NVIDIA L40S-1Q"
	fx_mdev_type "$ROOT" 0000:41:00.5 nvidia-1157 "NVIDIA L40S-4C"
	gv --cmdline "gpuvm.mode=vm-vgpu" kubevirt --external-provider
	assert_success
	assert_output --partial '  mediatedDevices:
  - mdevNameSelector: "NVIDIA L40S-1Q"
    resourceName: "nvidia.com/NVIDIA_L40S-1Q"
    externalResourceProvider: true
  - mdevNameSelector: "NVIDIA L40S-4C"
    resourceName: "nvidia.com/NVIDIA_L40S-4C"'
	gv --cmdline "gpuvm.mode=vm-vgpu" kubevirt --json
	[ "$(jqr '.permittedHostDevices.mediatedDevices | length')" = 2 ]
	[ "$(jqr '.permittedHostDevices.mediatedDevices[1].resourceName')" = nvidia.com/NVIDIA_L40S-4C ]
	# The plugin's resourceName: each run of blanks one '_' (its readVgpuIDFromFile).
	fx_mdev_type "$ROOT" 0000:41:00.0 nvidia-222 "GRID  T4-1Q"
	gv --cmdline "gpuvm.mode=vm-vgpu" kubevirt --json
	[ "$(jqr '.permittedHostDevices.mediatedDevices | map(.resourceName) | join(",")')" = "nvidia.com/GRID_T4-1Q,nvidia.com/NVIDIA_L40S-1Q,nvidia.com/NVIDIA_L40S-4C" ]
	# Another mode: no mediatedDevices at all, as before.
	gv --cmdline "" kubevirt --json
	[ "$(jqr '.permittedHostDevices.mediatedDevices')" = null ]
}

@test "kubevirt under vm-vgpu before the vGPU Manager runs: says nothing is visible yet" {
	mkfx sriov
	pciids
	gv --cmdline "gpuvm.mode=vm-vgpu" kubevirt
	assert_success
	assert_output --partial "  # no vGPU type is visible yet"
	assert_output --partial "  mediatedDevices: []"
	assert_regex "$stderr" "no vGPU type is visible yet.*until the vGPU Manager \(nvidia_vgpu_vfio\) runs"
	gv --cmdline "gpuvm.mode=vm-vgpu" kubevirt --json
	[ "$(jqr '.permittedHostDevices.mediatedDevices | length')" = 0 ]
}

# vGPU 17 and later on Ada, Hopper and newer (kernel 6.8 and later): no mdev; the VFs show
# their profiles under nvidia/, PCI devices on the nvidia driver to KubeVirt.
@test "kubevirt under vm-vgpu: VF profiles of the vendor-specific VFIO as external PCI entries" {
	mkfx sriov
	pciids
	fx_vgpu_types "$ROOT" 0000:41:00.4 "1155 : NVIDIA L40S-1Q" " 1157 :  NVIDIA L40S-4C "
	fx_vgpu_types "$ROOT" 0000:41:00.5 "1155 : NVIDIA L40S-1Q"
	gv --cmdline "gpuvm.mode=vm-vgpu" kubevirt --json
	assert_success
	[ "$(jqr '[.permittedHostDevices.pciHostDevices[1:][] | select(.externalResourceProvider) | .resourceName] | join(",")')" = "nvidia.com/NVIDIA_L40S-1Q,nvidia.com/NVIDIA_L40S-4C" ]
	[ "$(jqr '.permittedHostDevices.pciHostDevices[1].pciVendorSelector')" = "10DE:26B9" ]
	[ "$(jqr '.permittedHostDevices.mediatedDevices | length')" = 0 ]
	[[ "$stderr" != *"no vGPU type is visible"* ]]
	assert_regex "$stderr" "advertised by KubeVirt's own PCI plugin from KubeVirt 1.9 on"
	# KubeVirt before 1.9 (the default, 1.8) cannot take a VF on nvidia: external as before.
	gv --cmdline "gpuvm.mode=vm-vgpu" kubevirt --json --kubevirt-plugin
	[ "$(jqr '[.permittedHostDevices.pciHostDevices[] | select(.externalResourceProvider) | .resourceName] | join(",")')" = "nvidia.com/NVIDIA_L40S-1Q,nvidia.com/NVIDIA_L40S-4C" ]
	gv --cmdline "gpuvm.mode=vm-vgpu" kubevirt --json --kubevirt-plugin --kubevirt-version 1.8
	[ "$(jqr '[.permittedHostDevices.pciHostDevices[] | select(.externalResourceProvider) | .resourceName] | join(",")')" = "nvidia.com/NVIDIA_L40S-1Q,nvidia.com/NVIDIA_L40S-4C" ]
}

@test "kubevirt --kubevirt-version 1.9 --kubevirt-plugin: VF profiles are KubeVirt's own (externalResourceProvider false)" {
	mkfx sriov
	pciids
	fx_vgpu_types "$ROOT" 0000:41:00.4 "1155 : NVIDIA L40S-1Q"
	for v in 1.9 v1.9.0 1.10; do
		gv --cmdline "gpuvm.mode=vm-vgpu" kubevirt --json --kubevirt-plugin --kubevirt-version "$v"
		assert_success
		[ "$(jqr '.permittedHostDevices.pciHostDevices[1].resourceName')" = nvidia.com/NVIDIA_L40S-1Q ]
		[ "$(jqr '.permittedHostDevices.pciHostDevices[1] | has("externalResourceProvider")')" = false ]
	done
	[[ "$stderr" != *"advertised by KubeVirt's own PCI plugin"* ]]
	gv --cmdline "gpuvm.mode=vm-vgpu" kubevirt --kubevirt-plugin --kubevirt-version 1.9
	assert_output --partial '  # a vGPU profile of SR-IOV VFs (vendor-specific VFIO, vGPU 17 and later): KubeVirt 1.9'"'"'s own PCI plugin advertises these (VFs on nvidia)
  - pciVendorSelector: "10DE:26B9"
    resourceName: "nvidia.com/NVIDIA_L40S-1Q"
  mediatedDevices: []'
	# For the sandbox plugin the version changes nothing: external.
	gv --cmdline "gpuvm.mode=vm-vgpu" kubevirt --json --kubevirt-version 1.9
	[ "$(jqr '.permittedHostDevices.pciHostDevices[1].externalResourceProvider')" = true ]
	# Not a version; another command: usage errors.
	gv kubevirt --kubevirt-version 1
	assert_failure 2
	assert_regex "$stderr" "--kubevirt-version: '1' is not a KubeVirt version"
	gv check --kubevirt-version 1.9
	assert_failure 2
}

@test "kubevirt under vm-vgpu: vendor-specific VFIO by the matrix, no VF profile yet: says the operator makes none" {
	mkfx sriov
	mkdir -p "$ROOT/usr/share/misc"
	printf '10de  NVIDIA Corporation\n\t26b9  AD102GL [L40S]\n' >"$ROOT/usr/share/misc/pci.ids"
	printf '6.8.0-31-generic\n' >"$ROOT/proc/sys/kernel/osrelease"
	gv --cmdline "gpuvm.mode=vm-vgpu" kubevirt --vgpu-release 17
	assert_success
	assert_regex "$stderr" "take NVIDIA's vendor-specific VFIO .*: the GPU Operator's vGPU stack does not yet create those vGPUs"
	# Kernel 6.1: mediated devices on the VFs, nothing of the kind said.
	printf '6.1.0-99-amd64\n' >"$ROOT/proc/sys/kernel/osrelease"
	gv --cmdline "gpuvm.mode=vm-vgpu" kubevirt --vgpu-release 17
	assert_success
	[[ "$stderr" != *"vendor-specific VFIO"* ]]
	assert_regex "$stderr" "no vGPU type is visible yet"
}
