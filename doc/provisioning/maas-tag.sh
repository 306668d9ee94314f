#!/bin/sh
# MAAS: the IOMMU parameters for the machines of a tag (doc/provisioning.md). MAAS puts a tag's
# kernel_opts on the boot line of the machines that carry it; the parameters are
# kernel-cmdline/label-intel's (label-amd's on AMD hosts: `iommu=pt`).
#     sh doc/provisioning/maas-tag.sh PROFILE SYSTEM_ID...
set -eu
[ $# -ge 2 ] || { echo "usage: $0 PROFILE SYSTEM_ID..." >&2; exit 2; }
profile=$1
shift
maas "$profile" tags create name=gpuvm-intel kernel_opts='intel_iommu=on iommu=pt' \
	comment='gpuvm: the IOMMU for GPUs given to virtual machines'
for id; do
	maas "$profile" tag update-nodes gpuvm-intel add="$id"
done
