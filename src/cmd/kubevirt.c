// SPDX-License-Identifier: MIT
/* gpuvm kubevirt: permittedHostDevices for the GPUs vm-passthrough gives to VMs. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "kvsnippet.h"
#include "cmd.h"
#include "log.h"
#include "pciids.h"
#include "prepare.h"
#include "report.h"
#include "rootio.h"
#include "util.h"
#include "vgpu.h"

#define KV_IDS_MAX 32 /* distinct device IDs in pciHostDevices */

/* The KubeVirt the snippet is for when --kubevirt-version is not given. */
#define KV_DEFAULT_MAJOR 1
#define KV_DEFAULT_MINOR 8

/*
 * --kubevirt-version (default 1.8): whether vm-vgpu's VF profiles are external. KubeVirt's
 * own PCI plugin advertises VFs on the nvidia driver that have a vGPU type from 1.9 on;
 * before, and for the sandbox plugin, the entry is external. -EINVAL: not a version.
 */
static int vf_profiles_external(const struct options *o, bool *external)
{
	int major = KV_DEFAULT_MAJOR, minor = KV_DEFAULT_MINOR;
	char shown[64];

	if (o->kubevirt_version && kv_version_parse(o->kubevirt_version, &major, &minor) < 0) {
		term_safe(o->kubevirt_version, shown, sizeof(shown));
		log_err("--kubevirt-version: '%s' is not a KubeVirt version (1.9, v1.9.0)", shown);
		return -EINVAL;
	}
	*external = !o->kubevirt_plugin || major < 1 || (major == 1 && minor < 9);
	return 0;
}

/*
 * vm-vgpu: the support matrix's method for each NVIDIA GPU of the host (vgpu.c), and what
 * becomes of vendor-specific VFIO: the GPU Operator's vGPU stack does not create those
 * devices, and only KubeVirt 1.9's own PCI plugin advertises them. n_vf: the VF profiles
 * found.
 */
static void vgpu_method_notes(const struct inventory *inv, const char *ids, size_t len,
			      const struct vgpu_host *h, size_t n_vf, bool vf_external)
{
	bool vendor = n_vf > 0;
	char name[160];
	size_t i;

	for (i = 0; i < inv->n && !vendor && ids; i++) {
		const struct pci_dev *d = &inv->dev[i];
		struct gpu_model m;

		if (d->vendor != 0x10de || d->is_vf ||
		    (d->class >> 8 != 0x0300 && d->class >> 8 != 0x0302) ||
		    pciids_name(ids, len, d->vendor, d->device, name, sizeof(name)) < 0)
			continue;
		vgpu_classify(name, &m);
		vendor = m.support == VGPU_SUP_YES && vgpu_framework(m.arch, h) == VGPU_FW_VENDOR_VFIO;
	}
	if (!vendor)
		return;
	if (!n_vf)
		log_warn("mode vm-vgpu: this host's GPUs take NVIDIA's vendor-specific VFIO (no mdev; gpuvm check --mode vm-vgpu): the GPU Operator's vGPU stack does not yet create those vGPUs, so none is listed until a type is written into each VF's nvidia/current_vgpu_type");
	if (vf_external)
		log_warn("mode vm-vgpu: VF profiles of NVIDIA's vendor-specific VFIO are advertised by KubeVirt's own PCI plugin from KubeVirt 1.9 on (--kubevirt-plugin --kubevirt-version 1.9), not by NVIDIA's sandbox device plugin the GPU Operator deploys (it discovers mediated devices only) nor by KubeVirt's own before 1.9: with this snippet no vGPU resource may appear");
}

struct mdev_ctx {
	struct kv_mdev *m;
	size_t n, max;
	const char *dev; /* the function's address */
};

/* One type of mdev_supported_types: its name, once. */
static int one_type(const char *type, void *data)
{
	struct mdev_ctx *c = data;
	char path[256], raw[sizeof(c->m->name)], name[sizeof(c->m->name)];
	size_t i;

	snprintf(path, sizeof(path), "sys/bus/pci/devices/%s/mdev_supported_types/%s/name", c->dev,
		 type);
	if (root_read(path, raw, sizeof(raw)) <= 0)
		return 0;
	strscpy(name, raw, sizeof(name));
	rstrip(name);
	for (i = 0; i < c->n && !streq(c->m[i].name, name); i++)
		;
	if (i < c->n || c->n == c->max || !name[0])
		return 0;
	strscpy(c->m[c->n].name, name, sizeof(c->m[c->n].name));
	kv_mdev_resource(raw, c->m[c->n].resource, sizeof(c->m[c->n].resource));
	c->n++;
	return 0;
}

/*
 * vm-vgpu: the mediated device types the vGPU Manager shows on NVIDIA's GPUs and their
 * SR-IOV VFs (Ampere and later: on each VF), deduplicated by name.
 */
static size_t mdev_types(const struct inventory *inv, struct kv_mdev *m, size_t max)
{
	struct mdev_ctx c = { m, 0, max, NULL };
	char dir[160];
	size_t i;

	for (i = 0; i < inv->n; i++) {
		const struct pci_dev *d = &inv->dev[i];

		if (d->vendor != 0x10de || (d->class >> 8 != 0x0300 && d->class >> 8 != 0x0302))
			continue;
		c.dev = d->name;
		snprintf(dir, sizeof(dir), "sys/bus/pci/devices/%s/mdev_supported_types", d->name);
		root_list(dir, one_type, &c);
	}
	return c.n;
}

/*
 * vm-vgpu on Ada, Hopper and newer with vGPU 17 and later: no mdev; each VF shows the vGPU
 * profiles it can take in nvidia/creatable_vgpu_types ("1428 : NVIDIA H200X-141C"). One
 * entry a profile, its VF's ID the selector, named as the plugin's vendor-specific VFIO
 * discovery names it (blanks to '_'). Appended to dev (n of max); returns the new n.
 */
static size_t vfio_vgpu_types(const struct inventory *inv, struct kv_device *dev, size_t n, size_t max)
{
	char path[160], buf[8192], name[96], res[sizeof(dev->resource)];
	size_t i, j;

	for (i = 0; i < inv->n; i++) {
		const struct pci_dev *d = &inv->dev[i];
		const char *p, *e, *end;
		ssize_t len;

		if (d->vendor != 0x10de || !d->is_vf)
			continue;
		snprintf(path, sizeof(path), "sys/bus/pci/devices/%s/nvidia/creatable_vgpu_types",
			 d->name);
		len = root_read(path, buf, sizeof(buf));
		if (len <= 0)
			continue;
		end = buf + len;
		for (p = buf; p < end; p = e + 1) {
			e = memchr(p, '\n', (size_t)(end - p));
			if (!e)
				e = end;
			if (kv_vgpu_type_line(p, (size_t)(e - p), name, sizeof(name)) < 0)
				continue;
			kv_mdev_resource(name, res, sizeof(res));
			for (j = 0; j < n && !(dev[j].vgpu && streq(dev[j].resource, res)); j++)
				;
			if (j < n) {
				dev[j].count++;
				continue;
			}
			if (n == max)
				return n;
			dev[n].vendor = d->vendor;
			dev[n].device = d->device;
			dev[n].count = 1;
			dev[n].vgpu = true;
			dev[n].vf_external = true;
			strscpy(dev[n].resource, res, sizeof(dev[n].resource));
			n++;
		}
	}
	return n;
}

/*
 * One entry an ID of what vm-passthrough binds or keeps on a VFIO driver, with the number of
 * functions, named from the pci.ids text ids (len bytes; NULL: IDs only). Into dev (max).
 */
static size_t passthrough_entries(const struct options *o, const struct prep *pp, const char *ids,
				  size_t len, struct kv_device *dev, size_t max)
{
	const struct inventory *inv = &pp->inv;
	const struct plan *p = &pp->p;
	char name[160];
	size_t i, j, n = 0;

	for (i = 0; i < inv->n; i++) {
		const struct pci_dev *d = &inv->dev[i];
		bool known;

		if (!p->dev[i].selected || p->dev[i].failed ||
		    (p->dev[i].action != ACT_BIND && p->dev[i].action != ACT_KEEP))
			continue;
		for (j = 0; j < n && (dev[j].vendor != d->vendor || dev[j].device != d->device); j++)
			;
		if (o->kubevirt_plugin && !streq(p->dev[i].target, "vfio-pci"))
			log_warn("%s: on %s, which KubeVirt's own device plugin does not take (it takes devices on vfio-pci only): leave out --kubevirt-plugin and run NVIDIA's sandbox device plugin",
				 d->name, p->dev[i].target);
		if (j < n) {
			dev[j].count++;
			continue;
		}
		if (n == max)
			break;
		dev[n].vendor = d->vendor;
		dev[n].device = d->device;
		dev[n].count = 1;
		dev[n].vgpu = false;
		known = ids && pciids_name(ids, len, d->vendor, d->device, name, sizeof(name)) == 0;
		kv_resource_name(known ? name : NULL, d->vendor, d->device, dev[n].resource,
				 sizeof(dev[n].resource));
		if (!o->kubevirt_plugin && ids && d->vendor == 0x10de &&
		    pciids_uncertain(ids, d->device) == 0)
			log_warn("10DE:%04X: %s may not be the sandbox device plugin's name: v1.4.0 to v1.6.0 (pci.ids 2025.07.11) may name this ID otherwise; the node's status.capacity shows the plugin's, which gpuvm-kubevirt-patch takes for an ID named by its ID (gpuvm(8), kubevirt)",
				 d->device, dev[n].resource);
		n++;
	}
	return n;
}

static void write_snippet(const struct options *o, struct outcome *out)
{
	struct prep pp = { 0 };
	const struct inventory *inv = &pp.inv;
	const struct plan *p = &pp.p;
	struct kv_device dev[KV_IDS_MAX + 32]; /* the IDs, then vm-vgpu's VF profiles */
	struct kv_mdev mdev[64];
	bool vgpu, none_visible = false, vf_external = true;
	struct vgpu_host vh;
	char vh_from[96];
	char *ids = NULL;
	size_t j, n = 0, n_mdev = 0, len = 0, which = 0;

	if (prep_settings(&pp, o->root, o->cmdline, o->config, SRC_LOOK, NULL) < 0) {
		out->error = true;
		goto out;
	}
	if (vf_profiles_external(o, &vf_external) < 0) {
		out->usage = true;
		goto out;
	}
	vgpu = pp.s.mode == MODE_VM_VGPU;
	pp.s.mode = MODE_VM_PASSTHROUGH;
	if (prep_scan(&pp) < 0 || prep_plan(&pp) < 0) {
		out->error = true;
		goto out;
	}
	if (o->pci_ids) {
		int r = pciids_read_given(o->pci_ids, &ids, &len);

		if (r < 0) {
			log_err("--pci-ids %s: cannot read: %s", o->pci_ids,
				r == -EFBIG ? "larger than 4 MiB" : strerror(-r));
			out->error = true;
			goto out;
		}
	}
	/*
	 * The plugin names from the pci.ids in its image: gpuvm's copy of its NVIDIA block
	 * first, then the host's, older or newer than the plugin's.
	 */
	if (!o->pci_ids)
		ids = pciids_read(&len, &which);
	/* Only the sandbox plugin's names matter: KubeVirt's own takes what the CR says. */
	if (!o->pci_ids && !o->kubevirt_plugin && !ids)
		log_warn("no pci.ids: resource names are device IDs, as the sandbox device plugin's only for IDs its pci.ids lacks (gpuvm(8), kubevirt)");
	else if (!o->pci_ids && !o->kubevirt_plugin && which > 0)
		log_warn("names from /%s, not the sandbox device plugin's pci.ids: an ID one lacks or names otherwise gets another resourceName (install /usr/share/gpuvm/pci.ids, gpuvm(8), kubevirt)",
			 pciids_paths[which]);
	n = passthrough_entries(o, &pp, ids, len, dev, KV_IDS_MAX);
	if (vgpu) {
		size_t n_pci = n;

		n_mdev = mdev_types(inv, mdev, ARRAY_SIZE(mdev));
		n = vfio_vgpu_types(inv, dev, n, ARRAY_SIZE(dev));
		for (j = n_pci; j < n; j++)
			dev[j].vf_external = vf_external;
		none_visible = !n_mdev && n == n_pci;
		if (prep_vgpu_host(&pp, o->vgpu_release, &vh, vh_from, sizeof(vh_from)) < 0) {
			out->usage = true;
			goto out;
		}
		vgpu_method_notes(inv, ids, len, &vh, n - n_pci, vf_external);
		if (none_visible)
			log_warn("mode vm-vgpu: no vGPU type is visible yet (mdev_supported_types, nvidia/creatable_vgpu_types of the GPUs and their VFs): none is in the snippet until the vGPU Manager (nvidia_vgpu_vfio) runs; run gpuvm kubevirt again then");
	}
	if (!n && !vgpu)
		log_warn("no device would be in passthrough: the snippet is empty");
	report_warn_shared_groups(p);
	if (o->json && vgpu)
		kv_json_vgpu(stdout, dev, n, mdev, n_mdev, !o->kubevirt_plugin);
	else if (o->json)
		kv_json(stdout, dev, n, !o->kubevirt_plugin);
	else
		kv_yaml(stdout, dev, n, !o->kubevirt_plugin);
	if (!o->json && vgpu)
		kv_yaml_mdev(stdout, mdev, n_mdev, !o->kubevirt_plugin, none_visible);
out:
	prep_fini(&pp);
	free(ids);
}

static const char *check_options(const struct options *o)
{
	if (o->external && o->kubevirt_plugin)
		return "--external-provider and --kubevirt-plugin exclude each other";
	return NULL;
}

const struct command cmd_kubevirt = {
	.name = "kubevirt",
	.opts = CMD_OPT_EXTERNAL | CMD_OPT_PLUGIN | CMD_OPT_PCI_IDS | CMD_OPT_JSON |
		CMD_OPT_VGPU_RELEASE | CMD_OPT_KV_VERSION,
	.help = "  kubevirt [--kubevirt-plugin] [--kubevirt-version V] [--pci-ids FILE]\n"
		"                      KubeVirt's permittedHostDevices for the passthrough GPUs,\n"
		"                      named from FILE (default: /usr/share/gpuvm/pci.ids, then\n"
		"                      the host's) as NVIDIA's sandbox device plugin names them,\n"
		"                      for that plugin (externalResourceProvider: true), or with\n"
		"                      --kubevirt-plugin for KubeVirt's own (vfio-pci only; from\n"
		"                      --kubevirt-version 1.9 on also vm-vgpu's VFs on nvidia;\n"
		"                      default 1.8)\n",
	.check = check_options,
	.run = write_snippet,
};
