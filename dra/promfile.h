/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_DRA_PROMFILE_H
#define GPUVM_DRA_PROMFILE_H

#include <stddef.h>

struct vfio_gpu;

/* The file's name in its folder (node-exporter's textfile collector reads *.prom). */
#define PROM_FILE "gpuvm-dra.prom"

/*
 * Pure: the Prometheus text of the GPUs as the slices see them: each ready one
 * gpuvm_dra_device_published{address,device,pinned_by} 1, each other
 * gpuvm_dra_device_unpublished{address,device,reason} 1, and gpuvm_dra_devices{state}.
 * The caller frees; NULL: no memory.
 */
char *prom_text(const struct vfio_gpu *g, size_t n);

#endif
