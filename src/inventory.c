// SPDX-License-Identifier: MIT
/*
 * PCI functions and IOMMU groups as sysfs shows them. This runs on every boot of every
 * node, so each function costs as few syscalls as the kernel allows: one uevent read
 * gives vendor, device, subsystem, class, driver and modalias; one readlink gives the
 * IOMMU group. The rest is read only for the devices a plan can touch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "inventory.h"
#include "sysfs.h"
#include "util.h"

#define DEV_DIR "sys/bus/pci/devices/"

static int parse_id_pair(const char *v, uint16_t *a, uint16_t *b)
{
	unsigned long x, y;
	char buf[16];
	const char *c = strchr(v, ':');

	if (!c || c - v != 4 || strlen(c + 1) != 4)
		return -EINVAL;
	memcpy(buf, v, 4);
	buf[4] = '\0';
	if (parse_hex(buf, 4, &x) < 0 || parse_hex(c + 1, 4, &y) < 0)
		return -EINVAL;
	*a = (uint16_t)x;
	*b = (uint16_t)y;
	return 0;
}

int pci_dev_parse_uevent(struct pci_dev *d, const char *uevent)
{
	bool have_id = false, have_class = false;
	const char *p = uevent;

	d->driver[0] = '\0';
	d->modalias[0] = '\0';
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char line[128];

		if (len < sizeof(line)) {
			unsigned long v;

			memcpy(line, p, len);
			line[len] = '\0';
			if (startswith(line, "DRIVER=")) {
				/* It becomes part of a path (drivers/NAME/unbind): no '/', no "..". */
				if (strscpy(d->driver, line + 7, sizeof(d->driver)) < 0 ||
				    strchr(d->driver, '/') || streq(d->driver, "..") ||
				    streq(d->driver, "."))
					return -EINVAL;
			} else if (startswith(line, "PCI_ID=")) {
				if (parse_id_pair(line + 7, &d->vendor, &d->device) < 0)
					return -EINVAL;
				have_id = true;
			} else if (startswith(line, "PCI_SUBSYS_ID=")) {
				if (parse_id_pair(line + 14, &d->subvendor, &d->subdevice) < 0)
					return -EINVAL;
			} else if (startswith(line, "PCI_CLASS=")) {
				if (parse_hex(line + 10, 6, &v) < 0)
					return -EINVAL;
				d->class = (uint32_t)v;
				have_class = true;
			} else if (startswith(line, "MODALIAS=")) {
				strscpy(d->modalias, line + 9, sizeof(d->modalias));
			}
		}
		p += len + (nl ? 1 : 0);
	}
	return have_id && have_class ? 0 : -EINVAL;
}

struct scan_ctx {
	struct inventory *inv;
	size_t cap;
	int err;
};

static int read_int_attr(const char *name, const char *attr, int *out)
{
	char path[128], buf[32], *end;
	long v;
	ssize_t n;

	snprintf(path, sizeof(path), DEV_DIR "%s/%s", name, attr);
	n = sysfs_read(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	v = strtol(buf, &end, 10);
	if (end == buf)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

/*
 * A function that is there but cannot be read: kept, as vendor and device ffff (what
 * config space reads as when nothing answers) and class ffffff, so that no plan selects
 * it and a group that holds it is not viable, rather than left out of its group.
 */
static void unknown(struct pci_dev *d)
{
	d->vendor = d->device = 0xffff;
	d->subvendor = d->subdevice = 0xffff;
	d->class = 0xffffff;
	d->driver[0] = '\0';
	d->modalias[0] = '\0';
}

static int scan_one(const char *name, void *data)
{
	struct scan_ctx *c = data;
	struct inventory *inv = c->inv;
	char path[128], buf[1024], group[32];
	struct pci_dev *d;
	ssize_t n;
	int r;

	if (inv->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct pci_dev *nd = realloc(inv->dev, cap * sizeof(*nd));

		if (!nd) {
			c->err = -ENOMEM;
			return 1;
		}
		inv->dev = nd;
		c->cap = cap;
	}
	d = &inv->dev[inv->n];
	memset(d, 0, sizeof(*d));
	if (pci_addr_parse(name, &d->addr) < 0 || strscpy(d->name, name, sizeof(d->name)) < 0)
		return 0;	/* not a PCI address: not ours to judge */

	snprintf(path, sizeof(path), DEV_DIR "%s/uevent", name);
	n = sysfs_read(path, buf, sizeof(buf));
	if (n == -ENOENT)
		return 0;	/* vanished (hot-unplugged) since the listing */
	if (n < 0 || pci_dev_parse_uevent(d, buf) < 0)
		unknown(d);

	d->group = -1;
	snprintf(path, sizeof(path), DEV_DIR "%s/iommu_group", name);
	r = sysfs_link_name(path, group, sizeof(group));
	if (r < 0 && r != -ENOENT) {
		unknown(d);	/* in some group, we cannot tell which */
		inv->groups_unreadable = true;
	}
	if (r == 0) {
		char *end;
		long g = strtol(group, &end, 10);

		if (end != group && *end == '\0' && g >= 0 && g <= 0x7fffffff)
			d->group = (int)g;
	}
	d->sriov_totalvfs = -1;
	d->boot_vga = -1;
	inv->n++;
	return 0;
}

static void read_details(struct pci_dev *d)
{
	char path[128], buf[128];
	ssize_t n;

	if (d->details)
		return;
	d->details = true;
	snprintf(path, sizeof(path), DEV_DIR "%s/driver_override", d->name);
	n = sysfs_read(path, buf, sizeof(buf));
	if (n > 0) {
		rstrip(buf);
		if (!streq(buf, "(null)"))
			strscpy(d->override, buf, sizeof(d->override));
	}
	snprintf(path, sizeof(path), DEV_DIR "%s/physfn", d->name);
	d->is_vf = sysfs_exists(path);
	if (d->is_vf)
		return;
	if (read_int_attr(d->name, "sriov_totalvfs", &d->sriov_totalvfs) < 0)
		d->sriov_totalvfs = -1;
	if ((d->class >> 16) == 0x03 && read_int_attr(d->name, "boot_vga", &d->boot_vga) < 0)
		d->boot_vga = -1;
}

static int dev_cmp(const void *a, const void *b)
{
	return pci_addr_cmp(&((const struct pci_dev *)a)->addr, &((const struct pci_dev *)b)->addr);
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The type of each distinct group in the sorted list: one read a group. */
static void read_group_types(struct inventory *inv, const int *groups, size_t ng)
{
	size_t i;

	inv->types = calloc(ng, sizeof(*inv->types));
	if (!inv->types)
		return;	/* only for the report: not worth failing the scan */
	for (i = 0; i < ng; i++) {
		struct group_type *t = &inv->types[inv->n_types];
		char path[96];

		if (i > 0 && groups[i] == groups[i - 1])
			continue;
		snprintf(path, sizeof(path), "sys/kernel/iommu_groups/%d/type", groups[i]);
		if (sysfs_read(path, t->type, sizeof(t->type)) <= 0)
			continue;
		rstrip(t->type);
		t->group = groups[i];
		inv->n_types++;
	}
}

int inventory_scan(struct inventory *inv,
		   bool (*interesting)(const struct pci_dev *d, const void *data),
		   const void *data)
{
	struct scan_ctx c = { .inv = inv };
	int *groups = NULL;
	size_t i, j, ng = 0;
	int r;

	inv->dev = NULL;
	inv->n = 0;
	inv->types = NULL;
	inv->n_types = 0;
	inv->groups_unreadable = false;
	r = sysfs_list("sys/bus/pci/devices", scan_one, &c);
	if (c.err)
		return c.err;
	if (r < 0)
		return r;
	if (inv->n == 0)
		return 0;
	qsort(inv->dev, inv->n, sizeof(*inv->dev), dev_cmp);

	/* The interesting devices, their groups, and the functions of their slots. */
	groups = malloc(inv->n * sizeof(*groups));
	if (!groups)
		return -ENOMEM;
	for (i = 0; i < inv->n; i++) {
		struct pci_dev *d = &inv->dev[i];

		if (!interesting(d, data))
			continue;
		read_details(d);
		if (d->group >= 0)
			groups[ng++] = d->group;
		for (j = i; j > 0 && pci_same_slot(&inv->dev[j - 1].addr, &d->addr); j--)
			read_details(&inv->dev[j - 1]);
		for (j = i + 1; j < inv->n && pci_same_slot(&inv->dev[j].addr, &d->addr); j++)
			read_details(&inv->dev[j]);
	}
	if (ng) {
		qsort(groups, ng, sizeof(*groups), int_cmp);
		for (i = 0; i < inv->n; i++)
			if (inv->dev[i].group >= 0 &&
			    bsearch(&inv->dev[i].group, groups, ng, sizeof(*groups), int_cmp))
				read_details(&inv->dev[i]);
		read_group_types(inv, groups, ng);
	}
	free(groups);
	return 0;
}

const char *inventory_group_type(const struct inventory *inv, int group)
{
	size_t i;

	for (i = 0; i < inv->n_types; i++)
		if (inv->types[i].group == group)
			return inv->types[i].type;
	return NULL;
}

void inventory_free(struct inventory *inv)
{
	free(inv->dev);
	free(inv->types);
	inv->dev = NULL;
	inv->types = NULL;
	inv->n = inv->n_types = 0;
}

bool inventory_group_pending(const struct inventory *inv, const struct pci_dev *d)
{
	/* An unknown (unreadable) function is never taken along. */
	return inv->iommu.active && inv->iommu.groups_at_probe && d->group < 0 && !d->driver[0] &&
	       d->vendor != 0xffff;
}

bool inventory_group_in_slot(const struct inventory *inv, int group, const struct pci_addr *addr)
{
	size_t i;

	if (group < 0)
		return false;
	for (i = 0; i < inv->n; i++)
		if (inv->dev[i].group == group && !pci_same_slot(&inv->dev[i].addr, addr))
			return false;
	return true;
}

struct pci_dev *inventory_find(const struct inventory *inv, const struct pci_addr *a)
{
	struct pci_dev key = { 0 };

	key.addr = *a;
	return bsearch(&key, inv->dev, inv->n, sizeof(*inv->dev), dev_cmp);
}
