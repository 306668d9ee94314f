/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_VGPU_H
#define GPUVM_VGPU_H

#include <stddef.h>
#include <stdint.h>

/* Which vGPU method an NVIDIA GPU has, and whether any vGPU release supports it. Pure. */

enum vgpu_method {
	VGPU_NONE,
	VGPU_SRIOV, /* vm-vgpu on Ampere and later: the GPU's SR-IOV VFs */
	VGPU_MDEV,  /* vm-vgpu before Ampere: mediated devices */
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

#endif
