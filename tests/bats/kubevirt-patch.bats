#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# mirror/gpuvm-kubevirt-patch against nodes that do not publish what a mirror writes, and
# against the CR as it is: what one node's gpuvm.dev/kubevirt can put into the fleet's patch
# (only NVIDIA's devices under names gpuvm makes, each entry left out named with its node),
# and what the patch keeps of the CR (every entry that is not gpuvm's; gpuvm's own, listed in
# the CR's gpuvm.dev/kubevirt-entries, only while a node publishes them). The nodes are built
# here with jq as `kubectl get nodes -o json` lists them; tests/bats/mirror.bats makes them
# with the real mirror and gpuvm.

load helpers

PATCH="${PATCH:-$TOP/mirror/gpuvm-kubevirt-patch}"
H100='10DE:2330 nvidia.com/GH100_H100_SXM5_80GB'

setup() {
	K="$BATS_TEST_TMPDIR"
	mkdir -p "$K/fleet"
	MDEV='[]'
	# the KubeVirt CR as a fresh install has it
	jq -n '{apiVersion: "kubevirt.io/v1", kind: "KubeVirt", metadata: {name: "kubevirt", namespace: "kubevirt"},
		spec: {configuration: {developerConfiguration: {featureGates: ["LiveMigration"]}}}}' >"$K/kv.json"
}

# pci SEL NAME [JQ]: a PCI entry as the mirror writes it (a GPU of 8 functions, for the
# sandbox device plugin), JQ applied to it.
pci() {
	jq -nc --arg s "$1" --arg r "$2" "{pciVendorSelector: \$s, resourceName: \$r, externalResourceProvider: true,
		count: 8, gpu: true, vgpu: false} | ${3:-.}"
}

# h100: the H100's entry ($H100).
h100() {
	pci 10DE:2330 nvidia.com/GH100_H100_SXM5_80GB
}

# node NAME MODE [ENTRY...]: a node whose annotation holds these PCI entries and $MDEV.
node() {
	local n=$1 m=$2
	shift 2
	printf '%s\n' "$@" | jq -sc --arg m "$m" --argjson d "$MDEV" \
		'{version: 1, mode: $m, pciHostDevices: ., mediatedDevices: $d}' | raw_node "$n"
}

# raw_node NAME: a node whose annotation is standard input's text, as it is.
raw_node() {
	jq -Rs --arg n "$1" '{apiVersion: "v1", kind: "Node", metadata: {name: $n,
		annotations: {"gpuvm.dev/kubevirt": rtrimstr("\n")}}}' >"$K/fleet/$1.json"
}

# The fleet's nodes as one list, $K/nodes.json; kvpatch ARGS...: the tool on it.
fleet() {
	jq -s '{apiVersion: "v1", kind: "List", items: ., metadata: {resourceVersion: ""}}' "$K"/fleet/*.json >"$K/nodes.json"
}
kvpatch() {
	fleet
	run --separate-stderr "$PATCH" "$@" "$K/nodes.json"
}

# The patch's lists, "SELECTOR NAME" joined by ","; the marker's PCI pairs the same way.
pcis() {
	jqr '.spec.configuration.permittedHostDevices.pciHostDevices | map("\(.pciVendorSelector) \(.resourceName)") | join(",")'
}
mdevs() {
	jqr '.spec.configuration.permittedHostDevices.mediatedDevices | map("\(.mdevNameSelector) \(.resourceName)") | join(",")'
}
marked() {
	jqr '.metadata.annotations["gpuvm.dev/kubevirt-entries"] | fromjson | [.pciHostDevices[], .mediatedDevices[] | join(" ")] | join(",")'
}

# has LINE: stderr holds LINE (after the tool's name).
has() {
	[[ "$stderr" == *"gpuvm-kubevirt-patch: $1"* ]] || {
		printf 'stderr lacks: %s\nstderr:\n%s\n' "$1" "$stderr" >&2
		return 1
	}
}

# apply PATCH_FILE CR_FILE: the CR after kubectl patch --type merge (RFC 7386: objects merge,
# lists and other values replace).
apply() {
	jq -s '.[0] * .[1]' "$2" "$1" >"$2.new" && mv "$2.new" "$2"
}

@test "another vendor's device or a VF under an nvidia.com/ name: left out and named; the good nodes' entries patch" {
	node h100-a vm-passthrough "$(h100)"
	node h100-b vm-passthrough "$(h100)"
	# a vm-vgpu node: its GPUs, and a vGPU profile of its VFs
	node l40s vm-vgpu "$(pci 10DE:26B9 nvidia.com/AD102GL_L40S)" \
		"$(pci 10DE:26B9 nvidia.com/NVIDIA_L40S-4C '.vgpu = true | .count = 4')"
	# a NIC and a ConnectX as GPUs of NVIDIA's, not GPUs (they would turn HostDevices on)
	node rogue-nic vm-passthrough "$(pci 8086:1572 nvidia.com/GH100_H100_SXM5_80GB '.gpu = false')" \
		"$(pci 15B3:101D nvidia.com/MT2892 '.gpu = false')"
	# a VF as a vGPU profile on a node in passthrough
	node rogue-vf vm-passthrough "$(pci 10DE:2330 nvidia.com/NVIDIA_H100-80C '.vgpu = true')"
	kvpatch --current "$K/kv.json"
	assert_success
	[ "$(pcis)" = "$H100,10DE:26B9 nvidia.com/AD102GL_L40S,10DE:26B9 nvidia.com/NVIDIA_L40S-4C" ]
	# no entry that is not a GPU: no HostDevices, the CR's gates as they are
	[ "$(jqr '.spec.configuration | has("developerConfiguration")')" = false ]
	has "warning: node rogue-nic: gpuvm.dev/kubevirt entry 8086:1572 nvidia.com/GH100_H100_SXM5_80GB left out: vendor 8086, not NVIDIA (10DE)"
	has "warning: node rogue-nic: gpuvm.dev/kubevirt entry 15B3:101D nvidia.com/MT2892 left out: vendor 15B3, not NVIDIA (10DE)"
	has "warning: node rogue-vf: gpuvm.dev/kubevirt entry 10DE:2330 nvidia.com/NVIDIA_H100-80C left out: a vGPU profile (vgpu true) on a node in vm-passthrough"
	# whose entries made it: a note for each node
	has "note: node h100-a: vm-passthrough, 1 PCI and 0 mediated entries taken (nvidia.com/GH100_H100_SXM5_80GB)"
	has "note: node l40s: vm-vgpu, 2 PCI and 0 mediated entries taken (nvidia.com/AD102GL_L40S, nvidia.com/NVIDIA_L40S-4C)"
	has "note: node rogue-nic: vm-passthrough, 0 PCI and 0 mediated entries taken"
	[ "$(grep -c 'warning:' <<<"$stderr")" = 3 ]
}

@test "a name another node gives another ID, another name for an ID, an ID as no GPU: most nodes, or the CR's from gpuvm, win; a tie takes none" {
	node h100-a vm-passthrough "$(h100)"
	node h100-b vm-passthrough "$(h100)"
	# the H100's name for another ID; the H100 under another name; the H100 as no GPU
	node rogue-id vm-passthrough "$(pci 10DE:2331 nvidia.com/GH100_H100_SXM5_80GB)"
	node rogue-name vm-passthrough "$(pci 10DE:2330 nvidia.com/GH100_H100_PCIE)"
	node rogue-kind vm-passthrough "$(pci 10DE:2330 nvidia.com/GH100_H100_SXM5_80GB '.gpu = false')"
	kvpatch --current "$K/kv.json"
	assert_success
	[ "$(pcis)" = "$H100" ]
	[ "$(jqr '.spec.configuration | has("developerConfiguration")')" = false ]
	has "warning: node rogue-id: gpuvm.dev/kubevirt entry 10DE:2331 nvidia.com/GH100_H100_SXM5_80GB left out: nvidia.com/GH100_H100_SXM5_80GB is 10DE:2330 on 2 nodes"
	has "warning: node rogue-name: gpuvm.dev/kubevirt entry 10DE:2330 nvidia.com/GH100_H100_PCIE left out: 10DE:2330 is nvidia.com/GH100_H100_SXM5_80GB on 3 nodes"
	has "warning: node rogue-kind: gpuvm.dev/kubevirt entry 10DE:2330 nvidia.com/GH100_H100_SXM5_80GB left out: 10DE:2330 is a GPU on 2 nodes"
	# one node against one: neither is taken...
	rm "$K/fleet/h100-b.json" "$K/fleet/rogue-name.json" "$K/fleet/rogue-kind.json"
	kvpatch --current "$K/kv.json"
	assert_success
	[ "$(pcis)" = "" ]
	has "warning: node h100-a: gpuvm.dev/kubevirt entry $H100 left out: nvidia.com/GH100_H100_SXM5_80GB is claimed for 10DE:2330 (1 node), 10DE:2331 (1 node): none is taken until they agree"
	has "warning: node rogue-id: gpuvm.dev/kubevirt entry 10DE:2331 nvidia.com/GH100_H100_SXM5_80GB left out: nvidia.com/GH100_H100_SXM5_80GB is claimed for"
	# ...unless the CR has one of them from gpuvm
	jq --arg m '{"version":1,"pciHostDevices":[["10DE:2330","nvidia.com/GH100_H100_SXM5_80GB"]],"mediatedDevices":[]}' \
		'.metadata.annotations["gpuvm.dev/kubevirt-entries"] = $m
		| .spec.configuration.permittedHostDevices.pciHostDevices = [{pciVendorSelector: "10DE:2330",
			resourceName: "nvidia.com/GH100_H100_SXM5_80GB", externalResourceProvider: true}]' "$K/kv.json" >"$K/kv-marked.json"
	kvpatch --current "$K/kv-marked.json"
	assert_success
	[ "$(pcis)" = "$H100" ]
	has "warning: node rogue-id: gpuvm.dev/kubevirt entry 10DE:2331 nvidia.com/GH100_H100_SXM5_80GB left out: nvidia.com/GH100_H100_SXM5_80GB is 10DE:2330 in the CR, from gpuvm"
	refute_output --partial 2331
}

@test "an annotation not in the mirror's shape is left out whole, an entry not in it alone, each named with why" {
	node good vm-passthrough "$(h100)"
	ann=$(jq -c . "$K/fleet/good.json" | jq -r '.metadata.annotations["gpuvm.dev/kubevirt"]')
	jq -c '.version = 2' <<<"$ann" | raw_node v2
	jq -c '.extra = "x"' <<<"$ann" | raw_node extra-field
	jq -c '.mode = "container"' <<<"$ann" | raw_node container
	jq -c '.pciHostDevices = [range(65) as $i | .pciHostDevices[0]]' <<<"$ann" | raw_node many
	printf '{"version":1,"mode":"vm-passthrough",' | raw_node not-json
	printf '[1]' | raw_node a-list
	# a node's name and a field's with a newline, ESC and a bidi control: masked, no line forged
	jq -n --arg a '{"version":1,"mode":"vm-passthrough","pciHostDevices":[],"mediatedDevices":[],"x\nwarning: forged":1}' \
		'{kind: "Node", metadata: {name: "evil\u001b[31m\nwarning: forged\u202e", annotations: {"gpuvm.dev/kubevirt": $a}}}' >"$K/fleet/evil.json"
	node odd-entries vm-passthrough "$(pci 10DE:2335 nvidia.com/2335)" \
		"$(pci 10DE:2336 nvidia.com/GH100_X '.note = "mine"')" \
		"$(pci 10de:2337 nvidia.com/2337)" \
		"$(pci 10DE:2338 nvidia.com/2338 '.count = -1')" \
		"$(pci 10DE:2339 nvidia.com/2339 '.externalResourceProvider = false')" \
		"$(pci 10DE:233A nvidia.com/233a 'del(.gpu)')" \
		'"10DE:233B"'
	kvpatch --current "$K/kv.json"
	assert_success
	# the good node's, and the one entry of odd-entries in the mirror's shape
	[ "$(pcis)" = "$H100,10DE:2335 nvidia.com/2335" ]
	has "warning: node v2: gpuvm.dev/kubevirt left out: version 2, not 1"
	has "warning: node extra-field: gpuvm.dev/kubevirt left out: its fields are not version, mode, pciHostDevices and mediatedDevices (extra, mediatedDevices, mode, pciHostDevices, version)"
	has "warning: node container: gpuvm.dev/kubevirt left out: mode container, not a VM mode"
	has "warning: node many: gpuvm.dev/kubevirt left out: more than 64 entries in a list (gpuvm writes at most 64)"
	has "warning: node not-json: gpuvm.dev/kubevirt left out: not JSON"
	has "warning: node a-list: gpuvm.dev/kubevirt left out: not a JSON object"
	has "warning: node evil?[31m?warning: forged?: gpuvm.dev/kubevirt left out: its fields are not version, mode, pciHostDevices and mediatedDevices (mediatedDevices, mode, pciHostDevices, version, x?warning: forged)"
	[[ "$stderr" != *$'\e'* && "$stderr" != *$'\u202e'* ]]
	[ "$(grep -c '^warning: forged\|^gpuvm-kubevirt-patch: warning: forged' <<<"$stderr")" = 0 ]
	has "warning: node odd-entries: gpuvm.dev/kubevirt entry 10DE:2336 nvidia.com/GH100_X left out: fields gpuvm does not write (note)"
	has "warning: node odd-entries: gpuvm.dev/kubevirt entry 10de:2337 nvidia.com/2337 left out: the selector is not VVVV:DDDD in upper-case hex, as gpuvm writes it"
	has "warning: node odd-entries: gpuvm.dev/kubevirt entry 10DE:2338 nvidia.com/2338 left out: count is neither null nor a whole number from 1 to 4096"
	has "warning: node odd-entries: gpuvm.dev/kubevirt entry 10DE:2339 nvidia.com/2339 left out: externalResourceProvider false (gpuvm writes true or leaves it out)"
	has "warning: node odd-entries: gpuvm.dev/kubevirt entry 10DE:233A nvidia.com/233a left out: no gpu"
	has "warning: node odd-entries: gpuvm.dev/kubevirt entry 10DE:233B left out: not an object"
	has "note: node odd-entries: vm-passthrough, 1 PCI and 0 mediated entries taken (nvidia.com/2335)"
	# every node's annotation left out: nothing to patch
	rm "$K/fleet/good.json" "$K/fleet/odd-entries.json"
	kvpatch --current "$K/kv.json"
	assert_failure 1
	has "error: every node's gpuvm.dev/kubevirt is left out (above): nothing to patch"
	[ -z "$output" ]
}

@test "names as gpuvm makes them: a pci.ids name as the plugin writes it or the ID's own, a vGPU type's from its selector, never nvidia.com/gpu" {
	MDEV='[{"mdevNameSelector": "NVIDIA A10-4Q", "resourceName": "nvidia.com/NVIDIA_A10-4Q", "externalResourceProvider": true},
		{"mdevNameSelector": "NVIDIA A10-8Q", "resourceName": "nvidia.com/NVIDIA_A10-4Q"},
		{"mdevNameSelector": "gpu", "resourceName": "nvidia.com/gpu"}]'
	node a10 vm-vgpu "$(pci 10DE:2236 nvidia.com/GA102GL_A10)" "$(pci 10DE:2335 nvidia.com/2335)" \
		"$(pci 10DE:2336 nvidia.com/2337)" "$(pci 10DE:2338 nvidia.com/GH100-h100)" \
		"$(pci 10DE:2339 example.com/GH100)" "$(pci 10DE:233A nvidia.com/gpu '.vgpu = true')" \
		"$(pci 10DE:233B nvidia.com/mig-1g.10gb '.vgpu = true')"
	MDEV='[{"mdevNameSelector": "NVIDIA A10-4Q", "resourceName": "nvidia.com/NVIDIA_A10-4Q"}]'
	node h100 vm-passthrough "$(h100)"
	kvpatch --current "$K/kv.json"
	assert_success
	[ "$(pcis)" = "10DE:2236 nvidia.com/GA102GL_A10,$H100,10DE:2335 nvidia.com/2335" ]
	[ "$(mdevs)" = "NVIDIA A10-4Q nvidia.com/NVIDIA_A10-4Q" ]
	has "warning: node a10: gpuvm.dev/kubevirt entry 10DE:2336 nvidia.com/2337 left out: the resourceName is how gpuvm names another ID (10DE:2337) that pci.ids lacks"
	has "warning: node a10: gpuvm.dev/kubevirt entry 10DE:2338 nvidia.com/GH100-h100 left out: the resourceName is neither a pci.ids name as the sandbox device plugin writes it (A-Z, 0-9, _) nor nvidia.com/2338"
	has "warning: node a10: gpuvm.dev/kubevirt entry 10DE:2339 example.com/GH100 left out: the resourceName is not under nvidia.com/"
	has "warning: node a10: gpuvm.dev/kubevirt entry 10DE:233A nvidia.com/gpu left out: the resourceName is the GPU Operator's own, for containers"
	has "warning: node a10: gpuvm.dev/kubevirt entry 10DE:233B nvidia.com/mig-1g.10gb left out: the resourceName is the GPU Operator's own, for containers"
	has "warning: node a10: gpuvm.dev/kubevirt mediated entry NVIDIA A10-8Q nvidia.com/NVIDIA_A10-4Q left out: the resourceName is not nvidia.com/NVIDIA_A10-8Q, the type's as the sandbox device plugin writes it"
	has "warning: node a10: gpuvm.dev/kubevirt mediated entry gpu nvidia.com/gpu left out: the resourceName is the GPU Operator's own, for containers"
	# a mediated device on a passthrough node
	has "warning: node h100: gpuvm.dev/kubevirt mediated entry NVIDIA A10-4Q nvidia.com/NVIDIA_A10-4Q left out: a mediated device on a node in vm-passthrough"
	has "note: node a10: vm-vgpu, 2 PCI and 1 mediated entries taken (nvidia.com/2335, nvidia.com/GA102GL_A10, nvidia.com/NVIDIA_A10-4Q)"
}

@test "the default keeps the CR's entries that are not gpuvm's; gpuvm's own go once no node publishes them" {
	node h100 vm-passthrough "$(h100)"
	MDEV='[{"mdevNameSelector": "NVIDIA A10-4Q", "resourceName": "nvidia.com/NVIDIA_A10-4Q", "externalResourceProvider": true}]'
	node a10 vm-vgpu "$(pci 10DE:2236 nvidia.com/GA102GL_A10)"
	# another team's entries, and one a node poisoned before (gpuvm's by the marker)
	jq '.spec.configuration.permittedHostDevices = {
		pciHostDevices: [{pciVendorSelector: "8086:0D5C", resourceName: "intel.com/qat"},
			{pciVendorSelector: "10DE:1234", resourceName: "nvidia.com/GH100_H100_SXM5_80GB", externalResourceProvider: true},
			{pciVendorSelector: "10DE:1EB8", resourceName: "nvidia.com/TU104GL_Tesla_T4"}],
		mediatedDevices: [{mdevNameSelector: "i915-GVTg_V5_4", resourceName: "intel.com/gvt"}]}
		| .metadata.annotations["gpuvm.dev/kubevirt-entries"] =
			({version: 1, pciHostDevices: [["10DE:1234", "nvidia.com/GH100_H100_SXM5_80GB"]], mediatedDevices: []} | tojson)
		| .metadata.resourceVersion = "4711"' "$K/kv.json" >"$K/cr.json"
	kvpatch --current "$K/cr.json"
	assert_success
	# the CR as it was read: the API server refuses the patch once the CR has changed
	[ "$(jqr .metadata.resourceVersion)" = 4711 ]
	# the poisoned entry goes, the others' stay where they were, the fleet's follow
	[ "$(pcis)" = "8086:0D5C intel.com/qat,10DE:1EB8 nvidia.com/TU104GL_Tesla_T4,10DE:2236 nvidia.com/GA102GL_A10,$H100" ]
	[ "$(mdevs)" = "i915-GVTg_V5_4 intel.com/gvt,NVIDIA A10-4Q nvidia.com/NVIDIA_A10-4Q" ]
	[ "$(marked)" = "10DE:2236 nvidia.com/GA102GL_A10,$H100,NVIDIA A10-4Q nvidia.com/NVIDIA_A10-4Q" ]
	has "note: gpuvm's entries in the CR that no node publishes now, or that are left out above, go: 10DE:1234 nvidia.com/GH100_H100_SXM5_80GB"
	has "note: kept 3 entries of the CR that are not gpuvm's"
	# the CR's feature gates are kept (none is needed)
	[ "$(jqr '.spec.configuration | has("developerConfiguration")')" = false ]
	printf '%s\n' "$output" >"$K/p1.json"
	apply "$K/p1.json" "$K/cr.json"
	# The A10 node goes back to container: its entries go, the others' stay.
	rm "$K/fleet/a10.json"
	kvpatch --current "$K/cr.json"
	assert_success
	[ "$(pcis)" = "8086:0D5C intel.com/qat,10DE:1EB8 nvidia.com/TU104GL_Tesla_T4,$H100" ]
	[ "$(mdevs)" = "i915-GVTg_V5_4 intel.com/gvt" ]
	[ "$(marked)" = "$H100" ]
	has "note: gpuvm's entries in the CR that no node publishes now, or that are left out above, go: 10DE:2236 nvidia.com/GA102GL_A10, mediated NVIDIA A10-4Q nvidia.com/NVIDIA_A10-4Q"
	printf '%s\n' "$output" >"$K/p2.json"
	apply "$K/p2.json" "$K/cr.json"
	# A CR without the marker (patched before it was written): every entry is another's, but
	# the fleet's own entries become gpuvm's.
	jq 'del(.metadata.annotations)' "$K/cr.json" >"$K/old.json"
	kvpatch --current "$K/old.json"
	assert_success
	[ "$(pcis)" = "8086:0D5C intel.com/qat,10DE:1EB8 nvidia.com/TU104GL_Tesla_T4,$H100" ]
	[ "$(marked)" = "$H100" ]
	has "note: the CR has no gpuvm.dev/kubevirt-entries"
	has "note: the CR's $H100: the fleet's own, gpuvm's from now on (gpuvm.dev/kubevirt-entries)"
}

@test "--hco: HCO's own entries stay, gpuvm's go once no node publishes them, one an admin disabled stays disabled" {
	node h100 vm-passthrough "$(h100)" "$(pci 10DE:22A3 nvidia.com/GH100_H100_NVSWITCH '.gpu = false | .count = 4')"
	node rogue vm-passthrough "$(pci 1AF4:1041 nvidia.com/GH100_H100_SXM5_80GB)"
	jq -n --arg m '{"version":1,"pciHostDevices":[["10DE:2330","nvidia.com/GH100_H100_SXM5_80GB"],["10DE:2335","nvidia.com/2335"]],"mediatedDevices":[]}' \
		'{apiVersion: "hco.kubevirt.io/v1beta1", kind: "HyperConverged",
		metadata: {name: "kubevirt-hyperconverged", namespace: "kubevirt-hyperconverged", annotations: {"gpuvm.dev/kubevirt-entries": $m}},
		spec: {permittedHostDevices: {pciHostDevices: [
			{pciDeviceSelector: "10DE:1DB6", resourceName: "nvidia.com/GV100GL_Tesla_V100"},
			{pciDeviceSelector: "10DE:1EB8", resourceName: "nvidia.com/TU104GL_Tesla_T4", disabled: true},
			{pciDeviceSelector: "10DE:2330", resourceName: "nvidia.com/GH100_H100_SXM5_80GB", externalResourceProvider: true, disabled: true},
			{pciDeviceSelector: "10DE:2335", resourceName: "nvidia.com/2335", externalResourceProvider: true}]}}}' >"$K/hco.json"
	kvpatch --hco --current "$K/hco.json"
	assert_success
	[ "$(jqr '.spec.permittedHostDevices.pciHostDevices | map("\(.pciDeviceSelector) \(.resourceName) \(.disabled // false)") | join(",")')" = \
		"10DE:1DB6 nvidia.com/GV100GL_Tesla_V100 false,10DE:1EB8 nvidia.com/TU104GL_Tesla_T4 true,10DE:22A3 nvidia.com/GH100_H100_NVSWITCH false,$H100 true" ]
	[ "$(marked)" = "10DE:22A3 nvidia.com/GH100_H100_NVSWITCH,$H100" ]
	has "warning: node rogue: gpuvm.dev/kubevirt entry 1AF4:1041 nvidia.com/GH100_H100_SXM5_80GB left out: vendor 1AF4, not NVIDIA (10DE)"
	has "note: gpuvm's entries in the CR that no node publishes now, or that are left out above, go: 10DE:2335 nvidia.com/2335"
	has "note: stays disabled, as the CR has it: $H100"
	# HCO's keys only; the marker on the HyperConverged CR
	[ "$(jqr '[paths(type != "object" and type != "array") | map(select(type == "string")) | join(".")] | unique | join(" ")')" = \
		"metadata.annotations.gpuvm.dev/kubevirt-entries spec.permittedHostDevices.pciHostDevices.disabled spec.permittedHostDevices.pciHostDevices.externalResourceProvider spec.permittedHostDevices.pciHostDevices.pciDeviceSelector spec.permittedHostDevices.pciHostDevices.resourceName" ]
}

@test "the CR is needed: --current or --replace (not both); --replace makes the lists the fleet's; a marker not the tool's is refused" {
	node h100 vm-passthrough "$(h100)"
	kvpatch
	assert_failure 2
	has "the CR as it is is needed, so that its entries that are not gpuvm's stay: --current FILE (kubectl get ... -o json), or --replace for lists that are the fleet's alone (see --help)"
	[ -z "$output" ]
	kvpatch --current "$K/kv.json" --replace
	assert_failure 2
	has "--current and --replace exclude each other"
	# --vmi needs no CR
	kvpatch --vmi
	assert_success
	# --replace: the fleet's alone, and said
	kvpatch --replace
	assert_success
	[ "$(pcis)" = "$H100" ]
	[ "$(marked)" = "$H100" ]
	has "note: with --replace, the lists replace the CR's whole (a merge patch replaces a list): entries of other devices are gone"
	# a marker that is not the tool's: which entries are gpuvm's is not known, so nothing
	for m in '{"version":2}' '[["10DE:2330","x"]]' '{"version":1,"pciHostDevices":[["10DE:2330"]],"mediatedDevices":[]}' 'not json'; do
		jq --arg m "$m" '.metadata.annotations["gpuvm.dev/kubevirt-entries"] = $m' "$K/kv.json" >"$K/bad.json"
		kvpatch --current "$K/bad.json"
		assert_failure 1
		has "--current: its annotation gpuvm.dev/kubevirt-entries is not what gpuvm-kubevirt-patch writes: fix or remove it"
		[ -z "$output" ]
	done
}
