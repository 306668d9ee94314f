// SPDX-License-Identifier: MIT
/* gpuvm check: the plan for the mode asked, and what stands between it and the host. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "cmd.h"
#include "hostreport.h"
#include "iomem.h"
#include "kmod.h"
#include "nextboot.h"
#include "prepare.h"
#include "rootio.h"
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
 * The same for the selection, where the settings or a boot line set gpus=: an ERROR finding
 * when a boot-loader file pins another. gpus_say is "" when not judged.
 */
static size_t next_boot_gpus(const struct settings *s, const struct nextboot *nb, struct finding *f,
			     size_t n, size_t max, char *gpus_say, size_t size)
{
	char value[SETTINGS_VALUE_MAX];
	struct nb_judgement g;

	gpus_say[0] = '\0';
	if (s->from[KEY_GPUS] == FROM_DEFAULT && !nextboot_line_word(nb, "gpus"))
		return n;
	settings_value(s, KEY_GPUS, value, sizeof(value));
	nextboot_verdict(nb, "gpus", value, &g);
	nextboot_say(&g, gpus_say, size);
	if (n < max && g.verdict == NB_PINNED && g.conflict) {
		f[n] = (struct finding){ .sev = SEV_ERROR };
		fmt_cut(f[n].what, sizeof(f[n].what), "next boot (gpus=): %s, not gpus=%s",
			gpus_say, value[0] ? value : "(every GPU)");
		snprintf(f[n].fix, sizeof(f[n].fix), "remove gpuvm.gpus= from %s", g.pin->source);
		n++;
	}
	return n;
}

/*
 * The next boot against the checked mode (nextboot.h), worded in *say: an ERROR finding
 * when a boot-loader file pins another mode; and gpus= (next_boot_gpus) in *gpus_say.
 */
static size_t next_boot(const struct settings *s, const char *cmdline, struct finding *f, size_t n,
			size_t max, struct nb_judgement *v, char *say, char *gpus_say, size_t size)
{
	struct nextboot *nb = malloc(sizeof(*nb));
	const char *mode = mode_name(s->mode);

	v->verdict = NB_UNKNOWN;
	snprintf(say, size, "unknown: out of memory");
	gpus_say[0] = '\0';
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
	n = next_boot_gpus(s, nb, f, n, max, gpus_say, size);
	v->pin = NULL; /* freed with nb */
	nextboot_fini(nb);
	free(nb);
	return n;
}

static void check_host(const struct options *o, struct outcome *out)
{
	struct prep pp = { 0 };
	struct finding f[48];
	struct mem_range fb[8];
	struct res_ctx rc = { .inv = &pp.inv };
	struct check_input in = {
		.s = &pp.s, .inv = &pp.inv, .plan = &pp.p, .fb = fb, .resource = read_resource, .data = &rc
	};
	struct nb_judgement v;
	char *iomem = NULL, say[2 * NB_TEXT], gpus_say[2 * NB_TEXT], rel_from[96];
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
	in.nvidia_dra = (root_exists(NVDRA_REGISTRY NVDRA_GPU "-reg.sock") ? CHECK_NVDRA_GPU : 0) |
		(root_exists(NVDRA_REGISTRY NVDRA_CD "-reg.sock") ? CHECK_NVDRA_CD : 0);
	n = check_findings(&in, f, ARRAY_SIZE(f));
	n = next_boot(&pp.s, o->cmdline, f, n, ARRAY_SIZE(f), &v, say, gpus_say, sizeof(say));
	for (i = 0; i < n; i++) {
		errors += f[i].sev == SEV_ERROR;
		warnings += f[i].sev == SEV_WARNING;
	}
	out->not_ready = errors > 0;
	report_check(stdout,
		     &(struct check_report){ .s = &pp.s,
					     .cpu = pp.inv.iommu.cpu,
					     .kver = pp.kver,
					     .f = f,
					     .n = n,
					     .errors = errors,
					     .warnings = warnings,
					     .v = &v,
					     .say = say,
					     .gpus_say = gpus_say[0] ? gpus_say : NULL },
		     o->json);
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
	.run = check_host,
};
