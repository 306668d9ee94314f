#!/bin/sh
# BLS entries (RHEL, Fedora): gpuvm vm-vgpu on intel, for every installed kernel.
exec grubby --update-kernel=ALL --args="intel_iommu=on iommu=pt gpuvm.mode=vm-vgpu"
