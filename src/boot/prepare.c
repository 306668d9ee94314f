// SPDX-License-Identifier: MIT
/*
 * The preparation every command shares: settings (cmdline + config) -> inventory (PCI
 * functions, IOMMU groups, IOMMU state) -> plan. See prepare.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "hostdev.h"
#include "iommu.h"
#include "kcmdline.h"
#include "kmod.h"
#include "log.h"
#include "pciids.h"
#include "prepare.h"
#include "rootio.h"
#include "util.h"

/* The devices to read in detail: what the plan looks at, and what a pending record held. */
struct interest {
	const struct settings *s;
	const struct source *src;
};

static bool interesting(const struct pci_dev *d, const void *data)
{
	const struct interest *in = data;
	size_t i;

	if (plan_interesting(d, in->s))
		return true;
	for (i = 0; i < in->src->n_held; i++)
		if (pci_addr_cmp(&in->src->held[i], &d->addr) == 0)
			return true;
	return false;
}

static int scan_for(const struct settings *s, const struct source *src, const char *cmdline,
		    struct inventory *inv)
{
	struct interest in = { .s = s, .src = src };
	int r;

	iommu_read(&inv->iommu, cmdline);
	inv->want_numa = s->mode != MODE_CONTAINER && settings_gpus_numa(s);
	r = inventory_scan(inv, interesting, &in);
	if (r < 0)
		log_err("cannot read the PCI devices in /sys/bus/pci/devices: %s", strerror(-r));
	else if (s->n_ids)
		hostdev_mark(inv, cmdline); /* the default match cannot take them */
	return r;
}

/* The module directory of the running kernel, or of the tree under --root. */
static void modules_setup(const char *root, char *kver, size_t size)
{
	char rel[300], dir[320];
	ssize_t n = root_read("proc/sys/kernel/osrelease", kver, size);
	int r;

	if (n > 0)
		rstrip(kver);
	else
		strscpy(kver, "unknown", size);
	if (!root) {
		if (mod_init(NULL) < 0)
			log_warn("cannot open the module directory of %s", kver);
		else if (mod_dir() && (r = root_opens(mod_dir())) < 0)
			log_warn("cannot open the module directory %s: %s; only drivers already in the kernel can be used",
				 mod_dir(), strerror(-r));
		return;
	}
	/* Merged-/usr trees keep modules in usr/lib/modules only; libkmod is given the path. */
	snprintf(rel, sizeof(rel), "lib/modules/%s", kver);
	if (root_opens(rel) < 0) {
		snprintf(rel, sizeof(rel), "usr/lib/modules/%s", kver);
		if (root_opens(rel) < 0)
			return;
	}
	if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", root, rel) < sizeof(dir))
		mod_init(dir);
}

/* vfio variant drivers, from modules.alias, for the devices a VM mode may bind. -ENOMEM. */
static int find_variants(const struct settings *s, struct inventory *inv)
{
	size_t i;

	if (s->mode != MODE_VM_PASSTHROUGH)
		return 0;
	for (i = 0; i < inv->n; i++) {
		struct pci_dev *d = &inv->dev[i];
		char alias[MODALIAS_LEN], variant[DRIVER_LEN];
		const char *v;

		/* An unidentified function, a bridge, what the host needs: never bound, no lookup. */
		if (!d->details || d->unidentified || pci_class_is_bridge(d->class) ||
		    pci_class_host_needs(d->vendor, d->class) || d->host_use != HOST_USE_NONE)
			continue;
		pci_dev_modalias(d, alias, sizeof(alias));
		if (mod_vfio_variant(alias, variant, sizeof(variant)) < 0 ||
		    streq(variant, "vfio_pci")) /* vfio-pci itself is the default */
			continue;
		v = strpool_add(&inv->names, variant);
		if (!v)
			return -ENOMEM;
		d->variant = v;
	}
	return 0;
}

/*
 * vm-vgpu: what pci.ids says of each NVIDIA display or 3D controller's ID, for the plan's
 * vGPU method and check's support findings. No pci.ids, or an ID it lacks: the model says
 * unknown. -ENOMEM.
 */
static int read_models(struct prep *pp)
{
	struct gpu_models *ms = &pp->models;
	char *ids, name[160];
	size_t i, j, len = 0, which = 0;

	if (pp->s.mode != MODE_VM_VGPU)
		return 0;
	ids = pciids_read(&len, &which);
	ms->source = ids ? pciids_paths[which] : NULL;
	for (i = 0; i < pp->inv.n; i++) {
		const struct pci_dev *d = &pp->inv.dev[i];
		struct gpu_model *m;

		if (d->vendor != 0x10de || (d->class >> 8 != 0x0300 && d->class >> 8 != 0x0302) ||
		    gpu_model_find(ms, d->vendor, d->device))
			continue;
		m = realloc(ms->m, (ms->n + 1) * sizeof(*m));
		if (!m) {
			free(ids);
			return -ENOMEM;
		}
		ms->m = m;
		m = &ms->m[ms->n++];
		m->device = d->device;
		j = ids && pciids_name(ids, len, d->vendor, d->device, name, sizeof(name)) == 0;
		vgpu_classify(j ? name : NULL, m);
	}
	free(ids);
	pp->inv.models = ms;
	return 0;
}

int prep_mode(struct prep *pp, const char *given)
{
	char shown[64];

	if (!given)
		return 0;
	if (mode_parse(given, &pp->s.mode) < 0) {
		term_safe(given, shown, sizeof(shown));
		log_err("--mode: unknown mode '%s' (expected container, vm-passthrough or vm-vgpu)",
			shown);
		return -EINVAL;
	}
	settings_set_from(&pp->s, KEY_MODE, FROM_OPTION, NULL);
	return 0;
}

int prep_vgpu_host(const struct prep *pp, const char *given, struct vgpu_host *h, char *from, size_t size)
{
	char ver[64], shown[64];

	*h = (struct vgpu_host){ 0 };
	from[0] = '\0';
	if (vgpu_kernel_parse(pp->kver, &h->kmajor, &h->kminor) < 0)
		h->kmajor = h->kminor = 0;
	if (given) {
		if (vgpu_release_parse(given, &h->release) < 0) {
			term_safe(given, shown, sizeof(shown));
			log_err("--vgpu-release: '%s' is not " VGPU_RELEASE_WORDS, shown);
			return -EINVAL;
		}
		snprintf(from, size, "--vgpu-release");
		return 0;
	}
	if (root_read("sys/module/nvidia/version", ver, sizeof(ver)) > 0 &&
	    vgpu_release_of_driver(ver, &h->release) == 0) {
		rstrip(ver);
		term_safe(ver, ver, sizeof(ver));
		snprintf(from, size, "driver %s", ver);
	} else {
		h->release = 0;
	}
	return 0;
}

int prep_settings(struct prep *pp, const char *root, const char *cmdline, const char *config,
		  enum source_policy pol, const char *sysroot)
{
	pp->root = root;
	pp->cmdline = kcmdline_read(cmdline);
	if (!pp->cmdline) {
		log_err("out of memory");
		return -ENOMEM;
	}
	source_resolve(config, root != NULL, pp->cmdline, pol, sysroot, &pp->s, &pp->src);
	return 0;
}

int prep_scan(struct prep *pp)
{
	return scan_for(&pp->s, &pp->src, pp->cmdline, &pp->inv);
}

/*
 * Whether the plan is a hold, and what it waits for: config='s disk; the root, at the
 * boot's first call with no mode on the command line; or, at the last, a root config that
 * could not be read while on_error=hold and the command line sets no mode.
 */
static bool hold_what(const struct settings *s, const struct source *src, char *until, size_t size)
{
	bool pinned = settings_mode_pinned(s);

	if (src->status == SRC_WAITING)
		snprintf(until, size, "its config (config=%s)", s->config);
	else if (src->status == SRC_HOLD)
		snprintf(until, size,
			 "the host config on the root (%s, read at the end of the initramfs)",
			 CONFIG_PATH);
	else if (src->status == SRC_ROOT && !pinned && s->on_error == ON_ERROR_HOLD &&
		 (src->root == RC_UNREADABLE || src->root == RC_NO_ROOT))
		snprintf(until, size, "a host config it can read (%s; on_error=hold)", src->reason);
	else
		return false;
	return true;
}

/* The device at addr in the inventory, or SIZE_MAX. */
static size_t find_dev(const struct inventory *inv, const struct pci_addr *addr)
{
	size_t i;

	for (i = 0; i < inv->n; i++)
		if (pci_addr_cmp(&inv->dev[i].addr, addr) == 0)
			return i;
	return SIZE_MAX;
}

/* gpus= in a VM mode: each entry that takes no GPU, said with the key and where it came from. */
static void warn_gpus(const struct settings *s, const struct inventory *inv, const struct plan *p)
{
	char where[SOURCE_LEN + 8], a[PCI_ADDR_LEN];
	size_t e, i, n;

	if (s->mode == MODE_CONTAINER || !s->n_gpus)
		return;
	snprintf(where, sizeof(where), "%s", settings_source(s, KEY_GPUS));
	for (e = 0; e < s->n_gpus; e++) {
		const struct gpu_pick *g = &s->gpus[e];

		if (g->numa >= 0) {
			for (i = n = 0; i < inv->n; i++)
				n += inv->dev[i].numa == g->numa &&
					(p->dev[i].selected || p->dev[i].pick == PICK_SPLIT);
			if (!n)
				log_warn("%s: gpus: numa:%d: no GPU gpuvm takes is on NUMA node %d; nothing taken for it",
					 where, g->numa, g->numa);
			continue;
		}
		pci_addr_format(&g->addr, a, sizeof(a));
		i = find_dev(inv, &g->addr);
		if (i == SIZE_MAX)
			log_warn("%s: gpus: %s: no GPU at this address on this host; nothing taken for it",
				 where, a);
		else if (p->dev[i].pick == PICK_SPLIT)
			log_warn("%s: gpus: %s: its IOMMU group %d also holds a GPU gpus= does not select: a group is not split, it stays with the host",
				 where, a, inv->dev[i].group);
		else if (!p->dev[i].selected || p->dev[i].role != ROLE_GPU)
			log_warn("%s: gpus: %s (%04x:%04x) is not a GPU gpuvm takes (%s); ignored",
				 where, a, inv->dev[i].vendor, inv->dev[i].device, p->dev[i].reason);
	}
}

int prep_plan(struct prep *pp)
{
	char until[400];
	int r;

	modules_setup(pp->root, pp->kver, sizeof(pp->kver));
	if (hold_what(&pp->s, &pp->src, until, sizeof(until))) {
		r = plan_build_hold(&pp->p, &pp->s, &pp->inv, until, pp->src.status == SRC_ROOT);
	} else {
		r = find_variants(&pp->s, &pp->inv);
		if (r == 0)
			r = read_models(pp);
		if (r == 0)
			r = plan_build(&pp->p, &pp->s, &pp->inv);
		if (r == 0)
			warn_gpus(&pp->s, &pp->inv, &pp->p);
	}
	if (r == -E2BIG)
		log_err("cannot build the plan: the devices need more than %d vfio drivers",
			PLAN_MODULES_MAX);
	else if (r < 0)
		log_err("cannot build the plan: %s", strerror(-r));
	pp->planned = r == 0;
	return r;
}

void prep_fini(struct prep *pp)
{
	if (pp->planned)
		plan_free(&pp->p);
	inventory_free(&pp->inv);
	free(pp->models.m);
	mod_fini();
	free(pp->cmdline);
	memset(pp, 0, sizeof(*pp));
}
