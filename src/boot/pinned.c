// SPDX-License-Identifier: MIT
/*
 * The pinned records, /run/gpuvm/pinned/DDDD:BB:DD.F: the devices the administrator's
 * settings pinned for VMs, one small file each (KEY=VALUE lines: mode, mode_source,
 * selection, selection_source, driver), for the agents that must not hand them to
 * containers (the DRA plugin, NVIDIA's stack). Written with the state file, by every apply.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "names.h"
#include "pinned.h"
#include "rootio.h"
#include "util.h"
#include "writefile.h"

/* Which key selected the pinned devices, and where it came from. */
static enum setting_key selection_key(const struct settings *s, const char **name)
{
	if (s->n_gpus) {
		*name = "gpus";
		return KEY_GPUS;
	}
	if (s->n_ids) {
		*name = "ids";
		return KEY_IDS;
	}
	*name = "default";
	return KEY_MODE;
}

static int write_record(const struct report *r, size_t i)
{
	const struct settings *s = r->settings;
	const char *sel;
	enum setting_key k = selection_key(s, &sel);
	char buf[4 * SOURCE_LEN + 128];
	int n;

	n = snprintf(buf, sizeof(buf),
		     "mode=%s\nmode_source=%s\nselection=%s\nselection_source=%s\ndriver=%s\n",
		     mode_name(r->plan->mode), settings_source(s, KEY_MODE), sel,
		     streq(sel, "default") ? "default" : settings_source(s, k),
		     r->plan->dev[i].target[0] ? r->plan->dev[i].target : r->inv->dev[i].driver);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -ENAMETOOLONG;
	return root_write_file(PINNED_DIR, r->inv->dev[i].name, buf, (size_t)n);
}

/* The records there now: names that are PCI addresses (a temporary is none). */
static bool is_record(const char *name)
{
	struct pci_addr a;

	return strlen(name) < PCI_ADDR_LEN && pci_addr_parse(name, &a) == 0;
}

/* Is the record name to stay: a device pinned now, or one a live switch left as it was? */
static bool stays(const struct report *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->inv->n; i++) {
		if (!streq(r->inv->dev[i].name, name))
			continue;
		if (r->exec && r->exec->dev && r->exec->dev[i].result == RES_REFUSED)
			return true;
		return report_pinned(r, i);
	}
	return false;
}

int pinned_sync(const struct report *r)
{
	struct names old = { .want = is_record };
	size_t i;
	int r1, first = 0;

	if (!r->plan)
		return 0;
	for (i = 0; i < r->inv->n; i++) {
		if (!report_pinned(r, i))
			continue;
		r1 = write_record(r, i);
		if (r1 < 0) {
			log_err("cannot write /%s/%s: %s", PINNED_DIR, r->inv->dev[i].name,
				wf_strerror(r1));
			first = first ? first : r1;
		}
	}
	r1 = root_list(PINNED_DIR, names_add, &old);
	if (r1 == 0)
		r1 = old.err;
	if (r1 < 0 && r1 != -ENOENT) {
		log_err("cannot list /%s: %s", PINNED_DIR, strerror(-r1));
		first = first ? first : r1;
	}
	for (i = 0; i < old.n; i++) {
		if (stays(r, old.v[i]))
			continue;
		r1 = root_remove_file(PINNED_DIR, old.v[i]);
		if (r1 < 0) {
			log_err("cannot remove /%s/%s: %s", PINNED_DIR, old.v[i], wf_strerror(r1));
			first = first ? first : r1;
		}
	}
	names_free(&old);
	return first;
}
