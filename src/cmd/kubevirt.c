// SPDX-License-Identifier: MIT
/* gpuvm kubevirt: permittedHostDevices for the GPUs vm-passthrough gives to VMs. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "kvsnippet.h"
#include "cmd.h"
#include "config.h"
#include "log.h"
#include "pciids.h"
#include "prepare.h"
#include "rootio.h"
#include "util.h"

void cmd_kubevirt(const struct options *o, struct outcome *out)
{
	struct prep pp = { 0 };
	const struct inventory *inv = &pp.inv;
	const struct plan *p = &pp.p;
	struct kv_device dev[32];
	char *ids = NULL, name[160];
	size_t i, j, n = 0, len = 0, which = 0;

	if (prep_settings(&pp, o->root, o->cmdline, o->config, SRC_LOOK) < 0) {
		out->error = true;
		goto out;
	}
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
	if (!o->pci_ids && !ids)
		log_warn("no pci.ids: resource names are device IDs, as the sandbox device plugin's "
			 "only for IDs its pci.ids lacks (gpuvm(8), kubevirt)");
	else if (!o->pci_ids && which > 0)
		log_warn("names from /%s, not the sandbox device plugin's pci.ids: an ID one lacks "
			 "or names otherwise gets another resourceName (install /usr/share/gpuvm/pci.ids, "
			 "gpuvm(8), kubevirt)",
			 pciids_paths[which]);
	for (i = 0; i < inv->n; i++) {
		const struct pci_dev *d = &inv->dev[i];
		bool known;

		if (!p->dev[i].selected || p->dev[i].failed ||
		    (p->dev[i].action != ACT_BIND && p->dev[i].action != ACT_KEEP))
			continue;
		for (j = 0; j < n && (dev[j].vendor != d->vendor || dev[j].device != d->device); j++)
			;
		if (j < n) {
			dev[j].count++;
			continue;
		}
		if (n == ARRAY_SIZE(dev))
			break;
		dev[n].vendor = d->vendor;
		dev[n].device = d->device;
		dev[n].count = 1;
		known = ids && pciids_name(ids, len, d->vendor, d->device, name, sizeof(name)) == 0;
		kv_resource_name(known ? name : NULL, d->vendor, d->device, dev[n].resource,
				 sizeof(dev[n].resource));
		n++;
	}
	if (!n)
		log_warn("no device would be in passthrough: the snippet is empty");
	if (o->json)
		kv_json(stdout, dev, n, o->external);
	else
		kv_yaml(stdout, dev, n, o->external);
out:
	prep_fini(&pp);
	free(ids);
}
