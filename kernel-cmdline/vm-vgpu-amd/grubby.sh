#!/bin/sh
# BLS entries (RHEL, Fedora): gpuvm vm-vgpu on amd, for every installed kernel.
exec grubby --update-kernel=ALL --args="iommu=pt gpuvm.mode=vm-vgpu"
