/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_IOMMU_H
#define GPUVM_IOMMU_H

#include <stdbool.h>
#include <stddef.h>

#include "mode.h"

enum cpu_vendor {
	CPU_UNKNOWN,
	CPU_INTEL,
	CPU_AMD,
	CPU_ARM
};

/* What the IOMMU parameters on the command line ask for; -1 where a key is absent. */
struct iommu_params {
	int intel_iommu;       /* intel_iommu=on|off */
	int amd_iommu_off;     /* amd_iommu=off */
	bool amd_iommu_on;     /* amd_iommu=on: not a value the kernel knows */
	int iommu_pt;	       /* iommu=pt (1), iommu=nopt (0) */
	bool iommu_off;	       /* iommu=off */
	int passthrough;       /* iommu.passthrough=0|1 */
	bool vfio_ids;	       /* vfio-pci.ids= or vfio_pci.ids= */
	bool vfio_blacklisted; /* modprobe.blacklist= or module_blacklist= names a vfio module */
};

struct iommu_state {
	bool active;   /* units registered or groups present: the runtime truth */
	size_t units;  /* entries of /sys/class/iommu */
	char unit[32]; /* the least name of them, e.g. dmar0, ivhd0, smmu3.0x... */
	size_t groups; /* entries of /sys/kernel/iommu_groups */
	/*
	 * The IOMMU gives a PCI function its group when a driver first probes it, not when
	 * the IOMMU registers: so it is with firmware-described IOMMUs (an ARM SMMU through
	 * the device tree or IORT, virtio-iommu), whereas Intel's DMAR and AMD-Vi group every
	 * function at boot. Before any bind, /sys/kernel/iommu_groups may then be empty.
	 */
	bool groups_at_probe;
	enum cpu_vendor cpu;
	struct iommu_params params;
};

const char *cpu_vendor_name(enum cpu_vendor v);
int cpu_vendor_parse(const char *s, enum cpu_vendor *v);
/* Leaf parsers, pure. */
enum cpu_vendor cpu_vendor_from_cpuinfo(const char *cpuinfo);
void iommu_params_parse(const char *cmdline, struct iommu_params *p);

/*
 * What the IOMMU parameters on the command line mean, one sentence each ("iommu=pt: ...");
 * returns how many were written (at most max).
 */
size_t iommu_params_explain(const struct iommu_params *p, enum cpu_vendor v, const char **out,
			    size_t max);

/*
 * Read the runtime state: /sys/class/iommu, /sys/kernel/iommu_groups, /proc/cpuinfo. What
 * is absent is a state (no IOMMU), never an error.
 */
void iommu_read(struct iommu_state *st, const char *cmdline);

/*
 * The kernel parameters a mode needs on a CPU vendor, space-separated, ending with
 * gpuvm.mode=MODE. Writes into buf.
 */
void iommu_mode_params(enum mode m, enum cpu_vendor v, char *buf, size_t size);
/*
 * The parameters for a host whose mode the host config decides (the label mirror): the IOMMU
 * the VM modes need, which container mode runs with too, and no gpuvm.mode=, which would
 * override the config. "" where the kernel's defaults do.
 */
void iommu_label_params(enum cpu_vendor v, char *buf, size_t size);

#endif
