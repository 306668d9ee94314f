/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_PREPARE_H
#define GPUVM_PREPARE_H

#include <stdbool.h>

#include "inventory.h"
#include "plan.h"
#include "settings.h"
#include "vgpu.h"
#include "confsource.h"

/*
 * The preparation every command shares, in the order the data flows: the kernel command
 * line and the settings (prep_settings), the host's IOMMU state and PCI functions
 * (prep_scan), then the module directory, the vfio variants and the plan (prep_plan). Each
 * step logs its own failure, in one set of messages, and returns -errno; prep_fini() undoes
 * whatever was done. Zero-initialise a prep before the first step.
 */
struct prep {
	const char *root; /* --root DIR, or NULL */
	char *cmdline;	  /* the kernel command line the settings came from */
	struct settings s;
	struct source src;
	struct inventory inv;
	struct plan p;
	bool planned;		  /* p holds a plan */
	char kver[128];		  /* the running kernel's release (prep_plan) */
	struct gpu_models models; /* vm-vgpu: the GPUs' pci.ids names (prep_plan), inv.models */
};

/*
 * cmdline: --cmdline, or NULL for the host's; config: --config, or NULL for
 * /etc/gpuvm/gpuvm.conf; pol: whether and how config= is followed to a disk, and whether
 * this is a boot call; sysroot: the real root's mount point for the boot's last call
 * (apply --resume --sysroot), else NULL.
 */
int prep_settings(struct prep *pp, const char *root, const char *cmdline, const char *config,
		  enum source_policy pol, const char *sysroot);
int prep_scan(struct prep *pp);
/* The plan for pp->s (a command may change it first); a hold while the boot awaits its config. */
int prep_plan(struct prep *pp);
void prep_fini(struct prep *pp);
/*
 * --mode M (given, NULL: none) over the settings' mode, its source "--mode" (check, plan).
 * Logs and returns -EINVAL for a word that is no mode.
 */
int prep_mode(struct prep *pp, const char *given);
/*
 * vm-vgpu: the host the support matrix is asked about (check, kubevirt): the kernel of
 * pp->kver (prep_plan first), the release given (--vgpu-release, NULL: none) or the one the
 * loaded nvidia module's version (/sys/module/nvidia/version) belongs to; from says which,
 * "" when unknown. Logs and returns -EINVAL for a release given that is not one.
 */
int prep_vgpu_host(const struct prep *pp, const char *given, struct vgpu_host *h, char *from,
		   size_t size);

#endif
