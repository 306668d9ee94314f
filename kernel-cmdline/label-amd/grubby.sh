#!/bin/sh
# BLS entries (RHEL, Fedora): the IOMMU on amd, the mode left to gpuvm.conf (the label), for every installed kernel.
exec grubby --update-kernel=ALL --args="iommu=pt"
