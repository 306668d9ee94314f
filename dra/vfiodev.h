/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_DRA_VFIODEV_H
#define GPUVM_DRA_VFIODEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The GPUs gpuvm-dra offers: NVIDIA display and 3D controllers (10de, class 0300 or 0302),
 * and another vendor's display controller that gpuvm pinned, as gpuvm's inventory reads them under the root (/ or --root DIR; root_init() first),
 * with what gpuvm's apply left of them: its pinned record (/run/gpuvm/pinned/BDF) and the
 * boot's result (/run/gpuvm/state.json), both read through the root's door. Only a GPU
 * gpuvm pinned, on vfio now, whose boot did not fail, with a viable group, is ready.
 * Read only: nothing here binds, unbinds or writes to sysfs.
 */
struct vfio_gpu {
	char bdf[20];	    /* "0000:41:00.0" */
	char name[64];	    /* the device's name in the pool: "gpu-0000-41-00-0" */
	char driver[64];    /* "" when none */
	char pcie_root[32]; /* "pci0000:40", "" when unknown */
	uint16_t vendor, device;
	int group;	    /* -1: none */
	int numa;	    /* -1: none */
	char cdev[16];	    /* "vfio3" (vfio-dev/), "" when none */
	bool on_vfio;	    /* bound to vfio-pci or a vfio variant */
	bool ready;	    /* gpuvm pinned it, on vfio, group viable: published, prepared */
	char why[300];	    /* why not ready */
	const char *reason; /* why not ready, as a metrics label: not_vfio, not_pinned,
			     * boot_failed, group_not_viable; NULL when ready */
	bool pinned;	    /* gpuvm's record /run/gpuvm/pinned/BDF is there */
	char pin_mode[16];  /* the record's mode= ("" none) */
	char pin_sel[16];   /* its selection=: gpus, ids or default ("" none) */
	char boot[16];	    /* the boot's result for it in /run/gpuvm/state.json ("" none) */
};

/* Pure: the pool's name of the device at bdf ("gpu-0000-41-00-0"), a DNS label. */
void vfio_gpu_name(const char *bdf, char *out, size_t size);

/*
 * Every NVIDIA GPU of the root, sorted by address, into *out (malloc'd, *n of them).
 * -errno when the PCI devices cannot be read.
 */
int vfio_gpus(struct vfio_gpu **out, size_t *n);

/* The CDI device nodes of a GPU's backend. */
enum vfio_backend {
	VFIO_AUTO,    /* legacy where /dev/vfio/GROUP exists, else iommufd where its nodes do */
	VFIO_LEGACY,  /* /dev/vfio/GROUP and /dev/vfio/vfio */
	VFIO_IOMMUFD, /* /dev/vfio/devices/vfioN and /dev/iommu */
};

/*
 * The two device nodes (host paths, "/dev/...") of g for backend b (VFIO_AUTO decides here
 * from what exists under the root). -ENODEV with why when the backend's nodes are not there.
 */
int vfio_nodes(const struct vfio_gpu *g, enum vfio_backend b, char node[2][64], char *why,
	       size_t whysize);

#endif
