// SPDX-License-Identifier: MIT
/*
 * gpuvm cmdline: the kernel parameters this CPU needs for gpuvm, and what the running line lacks.
 * Without --mode, for a host whose config (the label mirror) decides the mode: the IOMMU
 * parameters alone. --mode M pins M on the command line: its parameters and gpuvm.mode=M.
 */
#include <stdio.h>

#include "cmd.h"
#include "cmdline.h"
#include "hostreport.h"
#include "iommu.h"
#include "log.h"
#include "prepare.h"
#include "rootio.h"
#include "util.h"

/* The running command line's last value per key, for comparison. */
struct have_ctx {
	const char *key;
	const char *value;
	bool found;
};

static int find_param(const char *key, const char *value, void *data)
{
	struct have_ctx *h = data;
	char name[64];

	if (streq(key, h->key) ||
	    (startswith(h->key, "gpuvm.") && cmdline_key(key, "gpuvm", name, sizeof(name)) &&
	     streq(name, h->key + 6)))
		h->found = value && streq(value, h->value);
	return 0;
}

struct want_ctx {
	const char *running;
	char missing[512];
};

static int check_param(const char *key, const char *value, void *data)
{
	struct want_ctx *w = data;
	struct have_ctx h = { .key = key, .value = value ? value : "" };

	cmdline_parse(w->running, find_param, &h);
	if (!h.found) {
		size_t n = strlen(w->missing);

		snprintf(w->missing + n, sizeof(w->missing) - n, "%s%s=%s", n ? " " : "", key,
			 value ? value : "");
	}
	return 0;
}

static void conflicts(const struct iommu_params *ip, enum mode m, enum cpu_vendor cpu, bool label,
		      const char *out[], size_t *n)
{
	*n = 0;
	if (label)
		out[(*n)++] =
			"gpuvm.mode= overrides the host config: the label cannot take effect until it is removed";
	if (m != MODE_CONTAINER) {
		if (ip->intel_iommu == 0 && cpu == CPU_INTEL)
			out[(*n)++] = "intel_iommu=off turns the IOMMU off";
		if (ip->iommu_off)
			out[(*n)++] = "iommu=off turns the IOMMU off";
		if (ip->amd_iommu_off == 1 && cpu == CPU_AMD)
			out[(*n)++] = "amd_iommu=off turns the IOMMU off";
		if (ip->vfio_blacklisted)
			out[(*n)++] = "a module blacklist on the command line names a vfio module";
	} else if (ip->vfio_ids) {
		out[(*n)++] = "vfio-pci.ids= hands devices to vfio-pci in mode container";
	}
	if (ip->amd_iommu_on)
		out[(*n)++] = "amd_iommu=on is not a value the kernel knows (AMD-Vi is on by default)";
}

static void say_params(const struct options *o, struct outcome *out)
{
	struct prep pp = { 0 };
	struct iommu_params ip;
	enum mode m;
	enum cpu_vendor cpu;
	struct want_ctx w = { 0 };
	const char *conf[8];
	char line[256], cpuinfo[4096];
	const char *running;
	bool pinned = o->mode != NULL;
	size_t n;

	if (prep_settings(&pp, o->root, o->cmdline, o->config, SRC_NO_DISK, NULL) < 0) {
		out->error = true;
		return;
	}
	running = pp.cmdline;
	m = pp.s.mode;
	if (o->mode && mode_parse(o->mode, &m) < 0) {
		log_err("--mode: unknown mode '%s' (expected container, vm-passthrough or vm-vgpu)",
			o->mode);
		prep_fini(&pp);
		out->usage = true;
		return;
	}
	if (!o->cpu || streq(o->cpu, "auto")) {
		cpu = root_read("proc/cpuinfo", cpuinfo, sizeof(cpuinfo)) > 0 ?
			cpu_vendor_from_cpuinfo(cpuinfo) :
			CPU_UNKNOWN;
	} else if (cpu_vendor_parse(o->cpu, &cpu) < 0) {
		log_err("--cpu: unknown vendor '%s' (expected intel, amd, arm or auto)", o->cpu);
		prep_fini(&pp);
		out->usage = true;
		return;
	}
	if (pinned) {
		iommu_mode_params(m, cpu, line, sizeof(line));
	} else {
		iommu_label_params(cpu, line, sizeof(line));
		m = MODE_VM_PASSTHROUGH; /* what the label may ask for: judge the line by it */
	}
	w.running = running;
	cmdline_parse(line, check_param, &w);
	iommu_params_parse(running, &ip);
	conflicts(&ip, m, cpu, !pinned && settings_mode_pinned(&pp.s), conf, &n);

	report_cmdline(stdout, stderr,
		       &(struct cmdline_report){ .mode = pinned ? mode_name(m) : NULL,
						 .cpu = cpu,
						 .params = line,
						 .missing = w.missing,
						 .conflicts = conf,
						 .n_conflicts = n },
		       o->json);
	prep_fini(&pp);
}

const struct command cmd_cmdline = {
	.name = "cmdline",
	.opts = CMD_OPT_MODE | CMD_OPT_CPU | CMD_OPT_JSON,
	.help = "  cmdline [--mode M] [--cpu intel|amd|arm|auto]\n"
		"                      the kernel parameters gpuvm needs on this CPU: the IOMMU's,\n"
		"                      the mode left to the host config (the label); --mode M\n"
		"                      pins M with gpuvm.mode=M; what the running command line\n"
		"                      lacks or contradicts is listed on stderr\n",
	.run = say_params,
};
