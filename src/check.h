/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_CHECK_H
#define GPUVM_CHECK_H

#include <stddef.h>

#include "iomem.h"
#include "inventory.h"
#include "kmod.h"
#include "plan.h"
#include "settings.h"

enum severity {
	SEV_ERROR,
	SEV_WARNING,
	SEV_INFO
};

struct finding {
	enum severity sev;
	char what[512];
	char fix[320];
};

/* What check needs beyond the plan, read by the caller. */
struct check_input {
	const struct settings *s;
	const struct inventory *inv;
	const struct plan *plan;
	enum mod_state vfio;	 /* vfio-pci for the running kernel */
	enum mod_state vgpu_mgr; /* vm-vgpu: the vGPU Manager's nvidia_vgpu_vfio */
	const char *kver;
	const struct mem_range *fb; /* firmware framebuffers from /proc/iomem */
	size_t n_fb;
	const char *(*resource)(size_t dev, void *data); /* a device's resource text */
	void *data;
};

/* Pure: the findings for the plan's mode, most severe first within each kind. */
size_t check_findings(const struct check_input *in, struct finding *out, size_t max);
const char *severity_name(enum severity s);

#endif
