// SPDX-License-Identifier: MIT
/*
 * The GPUs of the host as gpuvm's own units read them (inventory: PCI functions, drivers,
 * IOMMU groups and their members), judged for vfio: pinned by gpuvm (its record under
 * /run/gpuvm/pinned), the boot's bind of it not failed (/run/gpuvm/state.json), on vfio-pci
 * or a variant now, and the group viable (each member on vfio, on no driver, or a bridge;
 * none foreign).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "inventory.h"
#include "iommu.h"
#include "pci.h"
#include "plan.h"
#include "rootio.h"
#include "util.h"

#include "vfiodev.h"

void vfio_gpu_name(const char *bdf, char *out, size_t size)
{
	size_t i, o = 0;

	if (size < 5)
		return;
	memcpy(out, "gpu-", 4);
	o = 4;
	for (i = 0; bdf[i] && o + 1 < size; i++) {
		char ch = bdf[i];

		out[o++] = ch == ':' || ch == '.' ? '-' :
			ch >= 'A' && ch <= 'F'	  ? (char)(ch + 32) :
						    ch;
	}
	out[o] = '\0';
}

#define PINNED_RECORDS "run/gpuvm/pinned"
#define BOOT_STATE "run/gpuvm/state.json"
#define WORD_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"

/* The names under /run/gpuvm/pinned (the records' addresses), for the scan's filter. */
struct records {
	char (*v)[20];
	size_t n;
};

static int on_record(const char *name, void *data)
{
	struct records *l = data;
	char(*v)[20];

	if (strlen(name) >= sizeof(*v) || name[0] == '.')
		return 0;
	v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (!v)
		return 1; /* the list so far: another vendor's pinned GPU is then not offered */
	l->v = v;
	strscpy(l->v[l->n++], name, sizeof(*v));
	return 0;
}

static bool has_record(const struct records *l, const char *bdf)
{
	size_t i;

	for (i = 0; l && i < l->n; i++)
		if (streq(l->v[i], bdf))
			return true;
	return false;
}

/*
 * An NVIDIA GPU (pinned or not: one that is not is reported), or another vendor's display
 * controller that gpuvm pinned (ids= can select any: QEMU's VGA stand-in in the e2e cells).
 */
static bool is_gpu(const struct pci_dev *d, const struct records *l)
{
	if (d->vendor == PCI_VENDOR_NVIDIA)
		return pci_class_is_gpu(d->class) || d->class == 0xffffff;
	return pci_class_is_gpu(d->class) && has_record(l, d->name);
}

/* NVIDIA's functions, and those with a record (their class and name not known yet). */
static bool interesting(const struct pci_dev *d, const void *data)
{
	char bdf[PCI_ADDR_LEN];

	if (d->vendor == PCI_VENDOR_NVIDIA)
		return true;
	pci_addr_format(&d->addr, bdf, sizeof(bdf));
	return has_record(data, bdf);
}

/* Whether g's group can be given to a VM: every member on vfio, on none, or a bridge. */
static bool group_viable(const struct inventory *inv, const struct vfio_gpu *g, char *why, size_t whysize)
{
	size_t i;

	if (g->group < 0) {
		snprintf(why, whysize, "%s has no IOMMU group (is the IOMMU on?)", g->bdf);
		return false;
	}
	if (inv->groups_unreadable) {
		snprintf(why, whysize, "the IOMMU groups could not be read");
		return false;
	}
	for (i = 0; i < inv->n_foreign; i++)
		if (inv->foreign[i].group == g->group) {
			snprintf(why, whysize,
				 "IOMMU group %d holds %s, which is not a PCI function of this host's listing",
				 g->group, inv->foreign[i].name);
			return false;
		}
	for (i = 0; i < inv->n; i++) {
		const struct pci_dev *d = &inv->dev[i];

		if (d->group != g->group || pci_class_is_bridge(d->class) || !d->driver[0] ||
		    driver_is_vfio(d->driver))
			continue;
		snprintf(why, whysize, "IOMMU group %d is not viable: %s is on %s, not on vfio",
			 g->group, d->name, d->driver);
		return false;
	}
	return true;
}

/* "pci0000:40" of the device's sysfs path ("../../../devices/pci0000:40/..."). */
static void pcie_root(const char *bdf, char *out, size_t size)
{
	char path[96], target[512];
	const char *p;
	size_t n;

	out[0] = '\0';
	snprintf(path, sizeof(path), "sys/bus/pci/devices/%s", bdf);
	if (root_link_target(path, target, sizeof(target)) < 0)
		return;
	p = strstr(target, "/pci");
	if (!p)
		return;
	p++;
	n = strcspn(p, "/");
	if (n < size) {
		memcpy(out, p, n);
		out[n] = '\0';
	}
}

static int one_cdev(const char *name, void *data)
{
	char *out = data;

	if (strncmp(name, "vfio", 4) != 0 || strlen(name) >= 16)
		return 0;
	strscpy(out, name, 16);
	return 1;
}

/* One KEY=VALUE line's value of a pinned record into out ("" none). */
static void record_value(const char *rec, const char *key, char *out, size_t size)
{
	size_t k = strlen(key);
	const char *p;

	out[0] = '\0';
	for (p = rec; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, key, k) == 0 && p[k] == '=') {
			size_t n = strcspn(p + k + 1, "\n");

			/* a word, or nothing: it becomes an attribute and a metrics label */
			if (n < size && strspn(p + k + 1, WORD_CHARS) >= n) {
				memcpy(out, p + k + 1, n);
				out[n] = '\0';
			}
			return;
		}
}

/* gpuvm's record of the device, when it pinned it (the record a regular file of its own). */
static void read_record(struct vfio_gpu *g)
{
	char path[64], *buf;
	size_t len;

	snprintf(path, sizeof(path), PINNED_RECORDS "/%s", g->bdf);
	if (root_read_file(path, 4096, ROOT_FILE_OWN, &buf, &len) < 0)
		return;
	g->pinned = true;
	record_value(buf, "mode", g->pin_mode, sizeof(g->pin_mode));
	record_value(buf, "selection", g->pin_sel, sizeof(g->pin_sel));
	free(buf);
}

/* The boot's device of state.json at bdf (NULL: none, or no state). */
static struct json_object *boot_device(struct json_object *state, const char *bdf)
{
	struct json_object *devs, *a;
	size_t i;

	if (!state || !json_object_object_get_ex(state, "devices", &devs) ||
	    !json_object_is_type(devs, json_type_array))
		return NULL;
	for (i = 0; i < json_object_array_length(devs); i++) {
		struct json_object *d = json_object_array_get_idx(devs, i);

		if (json_object_object_get_ex(d, "address", &a) &&
		    json_object_is_type(a, json_type_string) && streq(json_object_get_string(a), bdf))
			return d;
	}
	return NULL;
}

static const char *str_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
		json_object_get_string(v) :
		NULL;
}

/*
 * Whether the last apply's bind of g failed, was given back to the host (released) or did not
 * verify; what it said into why. refused is none of these: apply --live left the device
 * exactly as it was (in use), which a record and the driver tell.
 */
static bool boot_failed(struct json_object *state, struct vfio_gpu *g, char *why, size_t whysize)
{
	struct json_object *d = boot_device(state, g->bdf);
	const char *res = d ? str_of(d, "result") : NULL, *err;

	if (!res)
		return false;
	strscpy(g->boot, res, sizeof(g->boot));
	if (!streq(res, "failed") && !streq(res, "released") && !streq(res, "unverified"))
		return false;
	err = str_of(d, "error");
	if (!err)
		err = str_of(d, "reason");
	snprintf(why, whysize, "the boot's bind of %s: %s%s%s (/" BOOT_STATE ")", g->bdf, res,
		 err ? ": " : "", err ? err : "");
	return true;
}

static void read_gpu(const struct inventory *inv, const struct pci_dev *d, struct vfio_gpu *g,
		     struct json_object *state)
{
	char boot_why[200], path[96], buf[32];
	bool failed;

	memset(g, 0, sizeof(*g));
	strscpy(g->bdf, d->name, sizeof(g->bdf));
	vfio_gpu_name(d->name, g->name, sizeof(g->name));
	strscpy(g->driver, d->driver, sizeof(g->driver));
	g->vendor = d->vendor;
	g->device = d->device;
	g->group = d->group;
	g->numa = -1;
	snprintf(path, sizeof(path), "sys/bus/pci/devices/%s/numa_node", d->name);
	if (root_read(path, buf, sizeof(buf)) > 0) {
		char *end;
		long v = strtol(buf, &end, 10);

		if (end != buf && (*end == '\n' || !*end) && v >= 0 && v < 65536)
			g->numa = (int)v;
	}
	pcie_root(d->name, g->pcie_root, sizeof(g->pcie_root));
	snprintf(path, sizeof(path), "sys/bus/pci/devices/%s/vfio-dev", d->name);
	root_list(path, one_cdev, g->cdev);
	g->on_vfio = driver_is_vfio(d->driver);
	read_record(g);
	failed = boot_failed(state, g, boot_why, sizeof(boot_why));
	if (!g->on_vfio) {
		snprintf(g->why, sizeof(g->why), "%s is on %s, not on vfio%s%s", d->name,
			 d->driver[0] ? d->driver : "no driver", failed ? "; " : "",
			 failed ? boot_why : "");
		g->reason = failed ? "boot_failed" : "not_vfio";
	} else if (failed) {
		strscpy(g->why, boot_why, sizeof(g->why));
		g->reason = "boot_failed";
	} else if (!g->pinned) {
		snprintf(g->why, sizeof(g->why),
			 "%s is on %s, but gpuvm did not pin it (no /" PINNED_RECORDS
			 "/%s): not gpuvm's to offer",
			 d->name, d->driver, d->name);
		g->reason = "not_pinned";
	} else if (!(g->ready = group_viable(inv, g, g->why, sizeof(g->why)))) {
		g->reason = "group_not_viable";
	}
}

/* The boot's state file, parsed (NULL: none or not JSON: no boot said anything). */
static struct json_object *read_state(void)
{
	struct json_object *o;
	char *buf;
	size_t len;

	if (root_read_file(BOOT_STATE, (size_t)1024 * 1024, ROOT_FILE_OWN, &buf, &len) < 0)
		return NULL;
	o = json_tokener_parse(buf);
	free(buf);
	return o;
}

int vfio_gpus(struct vfio_gpu **out, size_t *n)
{
	struct inventory inv;
	char cmdline[4096];
	size_t i, k = 0;
	struct records recs = { 0 };
	struct json_object *state;
	int r;

	*out = NULL;
	*n = 0;
	memset(&inv, 0, sizeof(inv));
	if (root_read("proc/cmdline", cmdline, sizeof(cmdline)) < 0)
		cmdline[0] = '\0';
	iommu_read(&inv.iommu, cmdline);
	root_list(PINNED_RECORDS, on_record, &recs);
	r = inventory_scan(&inv, interesting, &recs);
	if (r < 0) {
		free(recs.v);
		inventory_free(&inv);
		return r;
	}
	for (i = 0; i < inv.n; i++)
		k += is_gpu(&inv.dev[i], &recs);
	if (k) {
		*out = calloc(k, sizeof(**out));
		if (!*out) {
			free(recs.v);
			inventory_free(&inv);
			return -ENOMEM;
		}
	}
	state = read_state();
	for (i = 0; i < inv.n && *n < k; i++)
		if (is_gpu(&inv.dev[i], &recs))
			read_gpu(&inv, &inv.dev[i], &(*out)[(*n)++], state);
	json_object_put(state);
	free(recs.v);
	inventory_free(&inv);
	return 0;
}

int vfio_nodes(const struct vfio_gpu *g, enum vfio_backend b, char node[2][64], char *why, size_t whysize)
{
	char legacy[48], cdev[48];

	snprintf(legacy, sizeof(legacy), "dev/vfio/%d", g->group);
	snprintf(cdev, sizeof(cdev), "dev/vfio/devices/%s", g->cdev);
	if (b == VFIO_AUTO)
		b = root_exists(legacy) || !g->cdev[0] || !root_exists(cdev) ? VFIO_LEGACY :
									       VFIO_IOMMUFD;
	if (b == VFIO_LEGACY) {
		if (!root_exists(legacy) || !root_exists("dev/vfio/vfio")) {
			snprintf(why, whysize,
				 "%s: /%s or /dev/vfio/vfio is not there (the legacy vfio backend)",
				 g->bdf, legacy);
			return -ENODEV;
		}
		snprintf(node[0], 64, "/%s", legacy);
		snprintf(node[1], 64, "/dev/vfio/vfio");
		return 0;
	}
	if (!g->cdev[0] || !root_exists(cdev) || !root_exists("dev/iommu")) {
		snprintf(why, whysize,
			 "%s: no vfio device node (/sys/bus/pci/devices/%s/vfio-dev/, /dev/vfio/devices/) or no /dev/iommu (the iommufd backend)",
			 g->bdf, g->bdf);
		return -ENODEV;
	}
	snprintf(node[0], 64, "/%s", cdev);
	snprintf(node[1], 64, "/dev/iommu");
	return 0;
}
