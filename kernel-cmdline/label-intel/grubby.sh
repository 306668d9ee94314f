#!/bin/sh
# BLS entries (RHEL, Fedora): the IOMMU on intel, the mode left to gpuvm.conf (the label), for every installed kernel.
exec grubby --update-kernel=ALL --args="intel_iommu=on iommu=pt"
