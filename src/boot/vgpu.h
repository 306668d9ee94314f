/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_VGPU_H
#define GPUVM_VGPU_H

#include <stddef.h>
#include <stdint.h>

/*
 * Which vGPU method an NVIDIA GPU has, and whether any vGPU release supports it; which
 * framework its vGPUs take on a host (the architecture, the vGPU release and the kernel:
 * vgpu.c's matrix). Pure.
 */

enum vgpu_method {
	VGPU_NONE,
	VGPU_SRIOV, /* vm-vgpu on Ampere and later: the GPU's SR-IOV VFs */
	VGPU_MDEV,  /* vm-vgpu before Ampere: mediated devices */
};

/* How a host makes a GPU's vGPUs: the support matrix's answer. */
enum vgpu_framework {
	VGPU_FW_UNKNOWN,     /* the architecture, the release or the kernel cannot be told */
	VGPU_FW_UNSUPPORTED, /* no vGPU on this architecture */
	VGPU_FW_MDEV,	     /* mediated devices on the GPU itself (the PF) */
	VGPU_FW_MDEV_VF,     /* mediated devices on its SR-IOV VFs (sriov-manage first) */
	VGPU_FW_VENDOR_VFIO, /* no mdev: nvidia's own VFIO on each VF, a type by its sysfs */
};

enum gpu_arch {
	ARCH_UNKNOWN,
	ARCH_PRE_KEPLER, /* Curie, Tesla, Fermi: before vGPU existed */
	ARCH_KEPLER,
	ARCH_MAXWELL,
	ARCH_PASCAL,
	ARCH_VOLTA,
	ARCH_TURING,
	ARCH_AMPERE,
	ARCH_ADA,
	ARCH_HOPPER,
	ARCH_BLACKWELL,
};

enum vgpu_support {
	VGPU_SUP_UNKNOWN, /* no name to tell by: a warning, never a silent ready */
	VGPU_SUP_NO,
	VGPU_SUP_YES,
};

/* What the pci.ids name of one NVIDIA device ID says. */
struct gpu_model {
	uint16_t device;
	enum gpu_arch arch;
	enum vgpu_support support;
	enum vgpu_method method; /* the architecture's; VGPU_NONE when unknown or none */
	const char *why;	 /* a literal: why not supported ("" otherwise) */
	char name[96];		 /* the pci.ids name, "" when none */
};

/* The models of the NVIDIA GPUs of a host, for the plan (vm-vgpu). */
struct gpu_models {
	struct gpu_model *m;
	size_t n;
	const char *source; /* the pci.ids read ("/usr/share/misc/pci.ids"), NULL when none */
};

/* Classify a pci.ids device name (NULL: not named) into m; m->device is not touched. */
void vgpu_classify(const char *name, struct gpu_model *m);
/* The model of an NVIDIA device ID, or NULL. */
const struct gpu_model *gpu_model_find(const struct gpu_models *ms, uint16_t vendor, uint16_t device);
const char *gpu_arch_name(enum gpu_arch a);
/* "sriov", "mdev", or NULL for VGPU_NONE. */
const char *vgpu_method_name(enum vgpu_method m);

/* What the matrix asks of a host: 0 where it cannot be told. */
struct vgpu_host {
	int release;	    /* the vGPU release (17), 0 unknown */
	int kmajor, kminor; /* the kernel (6, 8), kmajor 0 unknown */
};

/* The framework an architecture's vGPUs take on host h: vgpu.c's one table. */
enum vgpu_framework vgpu_framework(enum gpu_arch a, const struct vgpu_host *h);
/* "mdev", "mdev-vf", "vendor-vfio", "unsupported", "unknown". */
const char *vgpu_framework_name(enum vgpu_framework f);
/* In words: "mediated devices on the GPU (the PF)". */
const char *vgpu_framework_words(enum vgpu_framework f);
/* The kernel's version from its release string ("6.8.0-31-generic"): -EINVAL otherwise. */
int vgpu_kernel_parse(const char *kver, int *major, int *minor);
/*
 * The vGPU release a vGPU Manager's driver version ("550.54.10", /sys/module/nvidia/version)
 * belongs to: its branch's (R550 is 17), or -EINVAL. Branches past the table's last give
 * its release: a lower bound, which is all the matrix asks.
 */
int vgpu_release_of_driver(const char *version, int *release);
/* A release given as a number ("17", "17.4"): -EINVAL otherwise, said in these words. */
int vgpu_release_parse(const char *s, int *release);
#define VGPU_RELEASE_WORDS "a vGPU release (a number: 17, or 17.4)"

#endif
