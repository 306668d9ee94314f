// SPDX-License-Identifier: MIT
/*
 * IOMMU state. The runtime decides: a unit under /sys/class/iommu or any IOMMU group
 * means translation is on. Units that are neither Intel's DMAR nor AMD-Vi (an ARM SMMU,
 * virtio-iommu) give a PCI function its group only when a driver first probes it: with
 * them an empty /sys/kernel/iommu_groups before the first bind is normal. The command line
 * only advises: the Intel IOMMU is on without intel_iommu=on only where the kernel was built
 * so (CONFIG_INTEL_IOMMU_DEFAULT_ON; Debian's kernels, 11 and later: a patch of Debian's,
 * CONFIG_INTEL_IOMMU_DEFAULT_ON_INTGPU_OFF, on but for the integrated GPU), AMD-Vi is on by
 * default, and "amd_iommu=on" is not a value the kernel knows (it prints "Unknown option").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmdline.h"
#include "iommu.h"
#include "rootio.h"
#include "util.h"

const char *cpu_vendor_name(enum cpu_vendor v)
{
	switch (v) {
	case CPU_INTEL:
		return "intel";
	case CPU_AMD:
		return "amd";
	case CPU_ARM:
		return "arm";
	default:
		return "unknown";
	}
}

int cpu_vendor_parse(const char *s, enum cpu_vendor *v)
{
	if (streq(s, "intel"))
		*v = CPU_INTEL;
	else if (streq(s, "amd"))
		*v = CPU_AMD;
	else if (streq(s, "arm"))
		*v = CPU_ARM;
	else
		return -EINVAL;
	return 0;
}

enum cpu_vendor cpu_vendor_from_cpuinfo(const char *ci)
{
	const char *p = strstr(ci, "vendor_id");

	if (p) {
		p += strcspn(p, ":\n");
		if (*p == ':') {
			p++;
			p += strspn(p, " \t");
			if (startswith(p, "GenuineIntel"))
				return CPU_INTEL;
			if (startswith(p, "AuthenticAMD") || startswith(p, "HygonGenuine"))
				return CPU_AMD;
		}
		return CPU_UNKNOWN;
	}
	if (strstr(ci, "CPU implementer"))
		return CPU_ARM;
	return CPU_UNKNOWN;
}

static bool list_has_vfio(const char *v)
{
	return v && strstr(v, "vfio") != NULL;
}

static int on_param(const char *key, const char *v, void *data)
{
	struct iommu_params *p = data;

	if (!v)
		return 0;
	if (streq(key, "intel_iommu")) {
		/* intel_iommu takes a comma-separated list: on, off, sm_on, igfx_off, ... */
		if (strstr(v, "off") == v || strstr(v, ",off"))
			p->intel_iommu = 0;
		else if (strstr(v, "on"))
			p->intel_iommu = 1;
	} else if (streq(key, "amd_iommu")) {
		if (strstr(v, "off"))
			p->amd_iommu_off = 1;
		if (streq(v, "on"))
			p->amd_iommu_on = true;
	} else if (streq(key, "iommu")) {
		if (streq(v, "pt"))
			p->iommu_pt = 1;
		else if (streq(v, "nopt"))
			p->iommu_pt = 0;
		else if (streq(v, "off"))
			p->iommu_off = true;
	} else if (streq(key, "iommu.passthrough")) {
		p->passthrough = (streq(v, "1") || streq(v, "on") || streq(v, "y")) ? 1 : 0;
	} else if (streq(key, "vfio-pci.ids") || streq(key, "vfio_pci.ids")) {
		p->vfio_ids = true;
	} else if (streq(key, "modprobe.blacklist") || streq(key, "module_blacklist")) {
		if (list_has_vfio(v))
			p->vfio_blacklisted = true;
	}
	return 0;
}

void iommu_params_parse(const char *cmdline, struct iommu_params *p)
{
	memset(p, 0, sizeof(*p));
	p->intel_iommu = -1;
	p->amd_iommu_off = -1;
	p->iommu_pt = -1;
	p->passthrough = -1;
	if (cmdline)
		cmdline_parse(cmdline, on_param, p);
}

struct count_ctx {
	size_t n;
	char *first;
	size_t size;
};

/* Counts the entries; first: the least name (directory order is the kernel's hash order). */
static int count_entry(const char *name, void *data)
{
	struct count_ctx *c = data;

	if (c->first && (c->n == 0 || strcmp(name, c->first) < 0))
		strscpy(c->first, name, c->size);
	c->n++;
	return 0;
}

void iommu_read(struct iommu_state *st, const char *cmdline)
{
	struct count_ctx units = { .first = st->unit, .size = sizeof(st->unit) };
	struct count_ctx groups = { 0 };
	unsigned long links;
	char cpuinfo[4096];
	ssize_t n;

	st->unit[0] = '\0';
	/* Either may be absent: no IOMMU driver at all is a state, not an error. */
	root_list("sys/class/iommu", count_entry, &units);
	/*
	 * Each group is a directory: their number is the link count less 2 (one call, where
	 * a node with SR-IOV has thousands of groups); where the file system does not count
	 * links so, the listing's.
	 */
	if (root_dir_links("sys/kernel/iommu_groups", &links) == 0 && links >= 2)
		groups.n = links - 2;
	else
		root_list("sys/kernel/iommu_groups", count_entry, &groups);
	st->units = units.n;
	st->groups = groups.n;
	st->active = st->units > 0 || st->groups > 0;
	st->groups_at_probe =
		st->units > 0 && !startswith(st->unit, "dmar") && !startswith(st->unit, "ivhd");

	/*
	 * The IOMMU unit says which parameters apply (intel_iommu= is for DMAR units), also
	 * where /proc/cpuinfo says otherwise (a QEMU guest: AuthenticAMD with intel-iommu).
	 */
	if (startswith(st->unit, "dmar")) {
		st->cpu = CPU_INTEL;
	} else if (startswith(st->unit, "ivhd")) {
		st->cpu = CPU_AMD;
	} else {
		/* The vendor sits in the first processor block: one read is enough. */
		n = root_read("proc/cpuinfo", cpuinfo, sizeof(cpuinfo));
		st->cpu = n > 0 ? cpu_vendor_from_cpuinfo(cpuinfo) : CPU_UNKNOWN;
	}
	iommu_params_parse(cmdline, &st->params);
}

/* What a VM mode needs of the IOMMU on vendor v ("" where the kernel's defaults do). */
static const char *vm_iommu(enum cpu_vendor v)
{
	if (v == CPU_INTEL)
		return "intel_iommu=on iommu=pt";
	return v == CPU_AMD ? "iommu=pt" : "";
}

void iommu_mode_params(enum mode m, enum cpu_vendor v, char *buf, size_t size)
{
	const char *iommu = m != MODE_CONTAINER ? vm_iommu(v) : "";

	snprintf(buf, size, "%s%sgpuvm.mode=%s", iommu, iommu[0] ? " " : "", mode_name(m));
}

void iommu_label_params(enum cpu_vendor v, char *buf, size_t size)
{
	snprintf(buf, size, "%s", vm_iommu(v));
}

size_t iommu_params_explain(const struct iommu_params *p, enum cpu_vendor v, const char **out,
			    size_t max)
{
	size_t n = 0;

#define SAY(cond, text)                                                                            \
	do {                                                                                       \
		if ((cond) && n < max)                                                             \
			out[n++] = (text);                                                         \
	} while (0)
	SAY(p->intel_iommu == 1,
	    "intel_iommu=on: Intel VT-d translation on (the default only of a kernel built with CONFIG_INTEL_IOMMU_DEFAULT_ON, or with Debian's CONFIG_INTEL_IOMMU_DEFAULT_ON_INTGPU_OFF, on but for the integrated GPU, as Debian's own kernels since Debian 11 are)");
	SAY(p->intel_iommu == 0, "intel_iommu=off: Intel VT-d off: vfio-pci cannot bind");
	SAY(p->intel_iommu >= 0 && v == CPU_AMD, "intel_iommu= is ignored on an AMD CPU");
	SAY(p->amd_iommu_on,
	    "amd_iommu=on: not a value the kernel knows (\"Unknown option\"); AMD-Vi is on by default");
	SAY(p->amd_iommu_off == 1, "amd_iommu=off: AMD-Vi off: vfio-pci cannot bind");
	SAY(p->iommu_pt == 1,
	    "iommu=pt: host devices use identity mappings (fast host DMA); vfio still translates for VMs");
	SAY(p->iommu_pt == 0, "iommu=nopt: host devices are translated too (slower host DMA)");
	SAY(p->iommu_off, "iommu=off: no IOMMU at all: vfio-pci cannot bind");
	SAY(p->passthrough == 1, "iommu.passthrough=1: identity mappings by default, as iommu=pt");
	SAY(p->passthrough == 0, "iommu.passthrough=0: translated mappings by default");
	SAY(p->vfio_ids,
	    "vfio-pci.ids=: vfio-pci claims devices by ID when it loads, whatever gpuvm's mode");
	SAY(p->vfio_blacklisted, "a module blacklist names a vfio module: gpuvm cannot load it");
#undef SAY
	return n;
}
