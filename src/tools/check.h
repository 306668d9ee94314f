/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_CHECK_H
#define GPUVM_CHECK_H

#include <stddef.h>

#include "iomem.h"
#include "inventory.h"
#include "kmod.h"
#include "plan.h"
#include "settings.h"
#include "vgpu.h"

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
	/* vm-vgpu: the host the support matrix is asked about, and where its release came from */
	struct vgpu_host vhost;
	const char *release_from; /* "--vgpu-release", "driver 550.54.10", NULL: unknown */
	int secure_boot;	  /* the SecureBoot efivar: 1 on, 0 off, -1 no EFI or no variable */
	/* FABRIC_MODE= of the host's fabricmanager.cfg (check_fabric_mode); -1: not known */
	int fabric_mode;
	/* NVIDIA's DRA kubelet plugins registered on the host: CHECK_NVDRA_* (or 0) */
	unsigned nvidia_dra;
};

/*
 * NVIDIA's DRA driver (k8s-dra-driver-gpu) on the node: the kubelet's registration sockets of
 * its two kubelet plugins, <driver>-reg.sock in the kubelet's plugin registry.
 */
#define NVDRA_REGISTRY "var/lib/kubelet/plugins_registry/"
#define NVDRA_GPU "gpu.nvidia.com"
#define NVDRA_CD "compute-domain.nvidia.com"
#define CHECK_NVDRA_GPU 1u
#define CHECK_NVDRA_CD 2u

/* Where NVIDIA's Fabric Manager package puts its config on the host. */
#define FABRIC_MANAGER_CFG "usr/share/nvidia/nvswitch/fabricmanager.cfg"

/* Pure: FABRIC_MODE=N of a fabricmanager.cfg's text (0, 1, 2), or -1 when it has none. */
int check_fabric_mode(const char *text);

/* Pure: the findings for the plan's mode, most severe first within each kind. */
size_t check_findings(const struct check_input *in, struct finding *out, size_t max);
const char *severity_name(enum severity s);

#endif
