// SPDX-License-Identifier: MIT
/* gpuvm check: the plan for the mode asked, and what stands between it and the host. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "cmd.h"
#include "config.h"
#include "iomem.h"
#include "json.h"
#include "kmod.h"
#include "log.h"
#include "hostreport.h"
#include "nextboot.h"
#include "prepare.h"
#include "report.h"
#include "rootio.h"

static const char *const sev_label[] = {
	[SEV_ERROR] = "ERROR",
	[SEV_WARNING] = "WARNING",
	[SEV_INFO] = "INFO",
};
#include "util.h"

#define IOMEM_MAX ((size_t)256 * 1024)

struct res_ctx {
	const struct inventory *inv;
	char buf[2048];
};

static const char *read_resource(size_t i, void *data)
{
	struct res_ctx *c = data;
	char path[96];

	snprintf(path, sizeof(path), "sys/bus/pci/devices/%s/resource", c->inv->dev[i].name);
	return root_read(path, c->buf, sizeof(c->buf)) > 0 ? c->buf : NULL;
}

/* The SecureBoot EFI variable: 4 bytes of attributes, then the value. */
#define SECURE_BOOT_VAR "sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"

/* 1 Secure Boot on, 0 off, -1 no EFI or no variable (no finding either way). */
static int secure_boot(void)
{
	char buf[16];
	ssize_t n = root_read(SECURE_BOOT_VAR, buf, sizeof(buf));

	if (n < 5)
		return -1;
	return buf[4] == 1;
}

/* vm-vgpu: the host for the support matrix, and Secure Boot. -EINVAL: a bad --vgpu-release. */
static int vgpu_host_input(const struct prep *pp, const char *given, struct check_input *in,
			   char *from, size_t size)
{
	in->secure_boot = -1;
	if (pp->s.mode != MODE_VM_VGPU)
		return 0;
	if (prep_vgpu_host(pp, given, &in->vhost, from, size) < 0)
		return -EINVAL;
	in->release_from = from[0] ? from : NULL;
	in->secure_boot = secure_boot();
	return 0;
}

/*
 * The next boot against the checked mode (nextboot.h), worded in *say: an ERROR finding
 * when a boot-loader file pins another mode.
 */
static size_t next_boot(const struct settings *s, const char *cmdline, struct finding *f, size_t n,
			size_t max, struct nb_judgement *v, char *say, size_t size)
{
	struct nextboot *nb = malloc(sizeof(*nb));
	const char *mode = mode_name(s->mode);

	v->verdict = NB_UNKNOWN;
	snprintf(say, size, "unknown: out of memory");
	if (!nb || nextboot_judge(nb, NULL, cmdline) < 0) {
		if (nb)
			nextboot_fini(nb);
		free(nb);
		return n;
	}
	nextboot_verdict(nb, "mode", mode, v);
	nextboot_say(v, say, size);
	if (n < max && v->verdict == NB_PINNED && v->conflict) {
		f[n] = (struct finding){ .sev = SEV_ERROR };
		fmt_cut(f[n].what, sizeof(f[n].what), "next boot: %s, not %s", say, mode);
		snprintf(f[n].fix, sizeof(f[n].fix),
			 "remove gpuvm.mode= from %s (gpuvm cmdline prints the IOMMU parameters alone)",
			 v->pin->source);
		n++;
	}
	v->pin = NULL; /* freed with nb */
	nextboot_fini(nb);
	free(nb);
	return n;
}

static void run(const struct options *o, struct outcome *out)
{
	struct prep pp = { 0 };
	struct finding f[48];
	struct mem_range fb[8];
	struct res_ctx rc = { .inv = &pp.inv };
	struct check_input in = {
		.s = &pp.s, .inv = &pp.inv, .plan = &pp.p, .fb = fb, .resource = read_resource, .data = &rc
	};
	struct nb_judgement v;
	char *iomem = NULL, say[2 * NB_TEXT], rel_from[96];
	size_t n, i, errors = 0, warnings = 0;

	if (prep_settings(&pp, o->root, o->cmdline, o->config, SRC_LOOK, NULL) < 0) {
		out->error = true;
		goto out;
	}
	if (prep_mode(&pp, o->mode) < 0) {
		out->usage = true;
		goto out;
	}
	if (prep_scan(&pp) < 0 || prep_plan(&pp) < 0) {
		out->error = true;
		goto out;
	}
	in.kver = pp.kver;
	in.vfio = mod_state("vfio-pci", !o->root);
	if (pp.s.mode == MODE_VM_VGPU)
		in.vgpu_mgr = mod_state("nvidia_vgpu_vfio", !o->root);
	if (vgpu_host_input(&pp, o->vgpu_release, &in, rel_from, sizeof(rel_from)) < 0) {
		out->usage = true;
		goto out;
	}
	iomem = malloc(IOMEM_MAX);
	if (iomem && root_read("proc/iomem", iomem, IOMEM_MAX) > 0)
		in.n_fb = iomem_framebuffers(iomem, fb, ARRAY_SIZE(fb));
	in.fabric_mode = -1;
	if (iomem && root_read(FABRIC_MANAGER_CFG, iomem, IOMEM_MAX) > 0)
		in.fabric_mode = check_fabric_mode(iomem);
	n = check_findings(&in, f, ARRAY_SIZE(f));
	n = next_boot(&pp.s, o->cmdline, f, n, ARRAY_SIZE(f), &v, say, sizeof(say));
	for (i = 0; i < n; i++) {
		errors += f[i].sev == SEV_ERROR;
		warnings += f[i].sev == SEV_WARNING;
	}
	out->not_ready = errors > 0;
	if (o->json) {
		struct json j;

		report_json_begin(&j, stdout, "check");
		json_string(&j, "mode", mode_name(pp.s.mode));
		json_string(&j, "mode_source", settings_source(&pp.s, KEY_MODE));
		json_string(&j, "cpu_vendor", cpu_vendor_name(pp.inv.iommu.cpu));
		json_string(&j, "kernel", pp.kver);
		json_bool(&j, "ready", errors == 0);
		json_int(&j, "errors", (long long)errors);
		json_int(&j, "warnings", (long long)warnings);
		json_array_begin(&j, "findings");
		for (i = 0; i < n; i++) {
			json_object_begin(&j, NULL);
			json_string(&j, "severity", severity_name(f[i].sev));
			json_string(&j, "what", f[i].what);
			json_string(&j, "fix", f[i].fix);
			json_object_end(&j);
		}
		json_array_end(&j);
		json_object_begin(&j, "next_boot");
		json_string(&j, "verdict", nextboot_verdict_name(v.verdict));
		json_string(&j, "says", say);
		json_object_end(&j);
		json_object_end(&j);
		json_finish(&j);
	} else {
		/* Findings name drivers from sysfs and framebuffers from /proc/iomem: masked. */
		char from[SOURCE_LEN];

		term_safe(settings_source(&pp.s, KEY_MODE), from, sizeof(from));
		term_safe(pp.kver, pp.kver, sizeof(pp.kver));
		printf("gpuvm check: %s (from %s) on %s, kernel %s\n", mode_name(pp.s.mode), from,
		       cpu_vendor_name(pp.inv.iommu.cpu), pp.kver);
		report_next_boot_line(stdout, say);
		for (i = 0; i < n; i++) {
			term_safe(f[i].what, f[i].what, sizeof(f[i].what));
			printf("%-8s %s\n         fix: %s\n", sev_label[f[i].sev], f[i].what, f[i].fix);
		}
		if (errors)
			printf("not ready for %s: %zu error%s, %zu warning%s\n", mode_name(pp.s.mode),
			       errors, errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
		else
			printf("ready for %s (%zu warning%s)\n", mode_name(pp.s.mode), warnings,
			       warnings == 1 ? "" : "s");
	}
out:
	prep_fini(&pp);
	free(iomem);
}

const struct command cmd_check = {
	.name = "check",
	.opts = CMD_OPT_MODE | CMD_OPT_JSON | CMD_OPT_VGPU_RELEASE,
	.help = "  check [--mode M] [--vgpu-release N]\n"
		"                      is this host ready for the mode; each problem with its fix;\n"
		"                      vm-vgpu: each GPU's vGPU method by its architecture, the\n"
		"                      vGPU release (N, else the loaded driver's) and the kernel\n",
	.run = run,
};
