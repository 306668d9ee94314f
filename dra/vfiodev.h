/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_DRA_VFIODEV_H
#define GPUVM_DRA_VFIODEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The GPUs gpuvm-dra offers: NVIDIA display and 3D controllers (10de, class 0300 or 0302),
 * as gpuvm's inventory reads them under the root (/ or --root DIR; root_init() first).
 * Read only: nothing here binds, unbinds or writes to sysfs.
 */
struct vfio_gpu {
	char bdf[20];	    /* "0000:41:00.0" */
	char name[64];	    /* the device's name in the pool: "gpu-0000-41-00-0" */
	char driver[64];    /* "" when none */
	char pcie_root[32]; /* "pci0000:40", "" when unknown */
	uint16_t vendor, device;
	int group;     /* -1: none */
	int numa;      /* -1: none */
	char cdev[16]; /* "vfio3" (vfio-dev/), "" when none */
	bool on_vfio;  /* bound to vfio-pci or a vfio variant */
	bool ready;    /* on vfio and its group viable: the one thing prepare takes */
	char why[200]; /* why not ready */
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
