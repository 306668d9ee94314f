// SPDX-License-Identifier: MIT
/*
 * PCI functions and IOMMU groups as sysfs shows them. This runs on every boot of every
 * node, so each function costs as little as the kernel allows: the listing of
 * /sys/bus/pci/devices gives every function's address, and /proc/bus/pci/devices
 * (pciproc.c) every function's vendor and device in a few reads. A function no plan looks
 * at stays so (partial). One that may matter, and the other functions of its slot, are
 * read whole: the uevent (class, subsystem, driver; the modalias is built from them), the
 * details and the iommu_group link; then the members of those groups, from each group's
 * own listing (/sys/kernel/iommu_groups/N/devices). Where the proc file cannot say (missing,
 * not in its format, a bus and devfn of two domains named apart), the uevents do. Each
 * function keeps 80 bytes: driver names are interned.
 */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>

#include "inventory.h"
#include "pciproc.h"
#include "rootio.h"
#include "util.h"

#define DEV_DIR "sys/bus/pci/devices/"

/* "VVVV:DDDD", the n bytes at v: four characters either side of the colon. */
static int parse_id_pair(const char *v, size_t n, uint16_t *a, uint16_t *b)
{
	unsigned long x, y;

	if (n != 9 || v[4] != ':' || parse_hex_fixed(v, 4, &x) < 0 || parse_hex_fixed(v + 5, 4, &y) < 0)
		return -EINVAL;
	*a = (uint16_t)x;
	*b = (uint16_t)y;
	return 0;
}

/* The line p of len bytes starts with key (klen bytes): its value, else NULL. */
static const char *value_of(const char *p, size_t len, const char *key, size_t klen)
{
	return len >= klen && memcmp(p, key, klen) == 0 ? p + klen : NULL;
}

/*
 * One pass over the text, as it runs for every function at every boot: a line is looked
 * at only when its first byte can start a key gpuvm reads (DRIVER=, PCI_...).
 */
int pci_dev_parse_uevent(struct pci_dev *d, const char *uevent, char *driver, size_t size)
{
	bool have_id = false, have_class = false;
	const char *p = uevent;

	driver[0] = '\0';
	while (*p) {
		const char *e = strchrnul(p, '\n'), *v;
		size_t len, n;
		unsigned long c;

		len = (size_t)(e - p);
		if (*p == 'D' && (v = value_of(p, len, "DRIVER=", 7))) {
			n = len - 7;
			/* It becomes part of a path (drivers/NAME/unbind): no '/', no "..". */
			if (n >= size || n >= DRIVER_LEN || memchr(v, '/', n))
				return -EINVAL;
			memcpy(driver, v, n);
			driver[n] = '\0';
			if (streq(driver, "..") || streq(driver, "."))
				return -EINVAL;
		} else if (*p != 'P') {
			/* not ours */
		} else if ((v = value_of(p, len, "PCI_ID=", 7))) {
			if (parse_id_pair(v, len - 7, &d->vendor, &d->device) < 0)
				return -EINVAL;
			have_id = true;
		} else if ((v = value_of(p, len, "PCI_SUBSYS_ID=", 14))) {
			if (parse_id_pair(v, len - 14, &d->subvendor, &d->subdevice) < 0)
				return -EINVAL;
		} else if ((v = value_of(p, len, "PCI_CLASS=", 10))) {
			if (parse_hex_n(v, len - 10, 6, &c) < 0)
				return -EINVAL;
			d->class = (uint32_t)c;
			have_class = true;
		}
		p = *e ? e + 1 : e;
	}
	return have_id && have_class ? 0 : -EINVAL;
}

void pci_dev_modalias(const struct pci_dev *d, char *buf, size_t size)
{
	snprintf(buf, size, "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X", d->vendor, d->device,
		 d->subvendor, d->subdevice, (d->class >> 16) & 0xff, (d->class >> 8) & 0xff,
		 d->class & 0xff);
}

void pci_dev_init(struct pci_dev *d)
{
	memset(d, 0, sizeof(*d));
	d->group = -1;
	d->driver = d->override = d->variant = "";
	d->sriov_totalvfs = -1;
	d->boot_vga = -1;
}

/* DEV_DIR NAME/ATTR into path (of PATH_SIZE bytes): the scan builds thousands of these. */
#define PATH_SIZE 128
static void dev_path(char *path, const char *name, const char *attr)
{
	size_t n = strlen(name), a = strlen(attr);

	if (sizeof(DEV_DIR) + n + 1 + a > PATH_SIZE) {
		path[0] = '\0'; /* names come from PCI addresses: never this long */
		return;
	}
	memcpy(path, DEV_DIR, sizeof(DEV_DIR) - 1);
	path += sizeof(DEV_DIR) - 1;
	memcpy(path, name, n);
	path[n] = '/';
	memcpy(path + n + 1, attr, a + 1);
}

struct scan_ctx {
	struct inventory *inv;
	size_t cap;
	struct root_batch uevents; /* closed 64 at a time */
	/* Per function: UEVENT while its uevent must be read, GONE once it was not there. */
	uint8_t *mark;
	int err;
};

#define GONE 0xff
#define UEVENT 1

static int read_int_attr(const char *name, const char *attr, int *out)
{
	char path[PATH_SIZE], buf[32], *end;
	long v;
	ssize_t n;

	dev_path(path, name, attr);
	n = root_read(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	v = strtol(buf, &end, 10);
	if (end == buf)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

/* An attribute sysfs writes as "0x%04x" or "0x%06x"; -EINVAL past max. */
static int read_hex_attr(const char *name, const char *attr, unsigned long max, unsigned long *out)
{
	char path[PATH_SIZE], buf[32], *end;
	ssize_t n;

	dev_path(path, name, attr);
	n = root_read(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	errno = 0;
	*out = strtoul(buf, &end, 16);
	if (end == buf || errno || *out > max || (*end && *end != '\n'))
		return -EINVAL;
	return 0;
}

/*
 * A function that is there but whose uevent cannot be used: kept, unidentified, so that it
 * is reported, never taken, and a group that holds it is not viable. What its vendor,
 * device and class files say (a failure path: five more reads) tells whether it may belong
 * to a selection; ffff (config space's "nothing answers") where they fail too.
 */
static void unidentified(struct pci_dev *d, int err)
{
	static const char *const attr[] = { "vendor", "device", "subsystem_vendor", "subsystem_device" };
	uint16_t *id[] = { &d->vendor, &d->device, &d->subvendor, &d->subdevice };
	unsigned long v;
	size_t i;

	d->unidentified = true;
	d->unread_errno = (uint8_t)(err > 0 && err < 256 ? err : EINVAL);
	d->driver = "";
	for (i = 0; i < ARRAY_SIZE(attr); i++)
		*id[i] = read_hex_attr(d->name, attr[i], 0xffff, &v) == 0 ? (uint16_t)v : 0xffff;
	d->class = read_hex_attr(d->name, "class", 0xffffff, &v) == 0 ? (uint32_t)v : 0xffffff;
}

/*
 * The function's identity from its uevent: IDs, class, driver. -ENOENT when it is not
 * there any more (hot-unplugged since the listing), -ENOMEM; a uevent that cannot be used
 * leaves it unidentified.
 */
static int read_uevent(struct scan_ctx *c, struct pci_dev *d)
{
	char path[PATH_SIZE], buf[1024], driver[DRIVER_LEN];
	ssize_t n;

	d->partial = false;
	dev_path(path, d->name, "uevent");
	n = root_read_batched(&c->uevents, path, buf, sizeof(buf));
	if (n == -ENOENT)
		return -ENOENT;
	if (n < 0) {
		unidentified(d, (int)-n);
	} else if (pci_dev_parse_uevent(d, buf, driver, sizeof(driver)) < 0) {
		unidentified(d, EINVAL);
	} else if (!(d->driver = strpool_add(&c->inv->names, driver))) {
		d->driver = "";
		return -ENOMEM;
	}
	return 0;
}

/*
 * A function that /proc/bus/pci/devices identified by its IDs alone and that the plan
 * looks at after all: its uevent says the rest. 1 when it is gone since (hot-unplugged):
 * it leaves the inventory at the end of the scan, as one gone before would not be in it.
 */
static int complete(struct scan_ctx *c, struct pci_dev *d)
{
	int r;

	if (c->mark[d - c->inv->dev] == GONE)
		return 1;
	if (!d->partial)
		return 0;
	r = read_uevent(c, d);
	if (r == -ENOENT) {
		c->mark[d - c->inv->dev] = GONE;
		d->group_read = true; /* never taken */
		return 1;
	}
	return r;
}

/* Those gone since the listing leave. */
static void drop_gone(struct scan_ctx *c)
{
	struct inventory *inv = c->inv;
	size_t i, j;

	for (i = 0; i < inv->n && c->mark[i] != GONE; i++)
		;
	for (j = i; i < inv->n; i++)
		if (c->mark[i] != GONE)
			inv->dev[j++] = inv->dev[i];
	inv->n = j;
}

/* The listing: each function's name and address; what it is comes after (resolve). */
static int list_one(const char *name, void *data)
{
	struct scan_ctx *c = data;
	struct inventory *inv = c->inv;
	struct pci_dev *d;

	if (inv->n == c->cap) {
		/*
		 * 2,048 (160 KiB, mapped as it is used: past malloc's mmap threshold) hold
		 * nearly every machine, and a larger one grows by mremap(2), not by a copy
		 * into new pages
		 */
		size_t cap = c->cap ? c->cap * 2 : 2048;
		struct pci_dev *nd = realloc(inv->dev, cap * sizeof(*nd));

		if (!nd) {
			c->err = -ENOMEM;
			return 1;
		}
		inv->dev = nd;
		c->cap = cap;
	}
	d = &inv->dev[inv->n];
	pci_dev_init(d);
	if (pci_addr_parse(name, &d->addr) < 0)
		return 0;     /* not a PCI address: not ours to judge */
	if (name[12] == '\0') /* as sysfs names them: 12 characters */
		memcpy(d->name, name, 13);
	else if (strscpy(d->name, name, sizeof(d->name)) < 0)
		return 0;
	d->partial = true; /* nothing read yet */
	inv->n++;
	return 0;
}

/*
 * What each function is. /proc/bus/pci/devices gives every function's vendor and device
 * in a few reads; a function it names without doubt (proc_ids) stays partial (IDs only)
 * until the plan looks at it. The others, and all of them when that file cannot be read or
 * is not in its format, are read from their uevents. Functions gone since the listing
 * leave. The file is read through a buffer on the stack, where root_list()'s listing
 * buffer was a moment before: its pages are there already (not inlined, so that the two
 * frames share the same place), where a heap buffer would cost 16 page faults.
 */
#define PROC_BUF ((size_t)64 * 1024)

static __attribute__((noinline)) int resolve(struct scan_ctx *c)
{
	struct inventory *inv = c->inv;
	struct pci_proc pp;
	char buf[PROC_BUF];
	bool flat;
	size_t i;
	int r;

	c->mark = calloc(inv->n, 1);
	if (!c->mark)
		return -ENOMEM;
	r = pci_proc_init(&pp, inv->dev, inv->n);
	if (r < 0)
		return r;
	flat = root_read_chunks("proc/bus/pci/devices", buf, sizeof(buf), pci_proc_chunk, &pp) == 0;
	if (!flat)
		for (i = 0; i < inv->n; i++)
			inv->dev[i].vendor = inv->dev[i].device = 0;
	for (i = 0; i < inv->n; i++) {
		if (flat && pci_proc_known(&pp, i))
			inv->dev[i].class = 0xffffff; /* unknown until its uevent is read */
		else
			c->mark[i] = UEVENT;
	}
	pci_proc_fini(&pp);
	for (i = 0; i < inv->n; i++) {
		if (c->mark[i] != UEVENT)
			continue;
		c->mark[i] = 0;
		r = read_uevent(c, &inv->dev[i]);
		if (r == -ENOENT)
			c->mark[i] = GONE;
		else if (r < 0)
			return r;
	}
	drop_gone(c);
	memset(c->mark, 0, inv->n);
	return 0;
}

/* A group number as sysfs spells it (a directory name): -1 when it is none. */
static int parse_group(const char *s)
{
	char *end;
	long g;

	if (*s < '0' || *s > '9')
		return -1;
	g = strtol(s, &end, 10);
	return *end == '\0' && g <= 0x7fffffff ? (int)g : -1;
}

/*
 * The group its iommu_group link names. No link: no group (-1). A link that cannot be
 * read: the device is in some group and we cannot tell which, so no group can be judged
 * whole (the device stays what its uevent says: a GPU is still held).
 */
static void read_group_link(struct inventory *inv, struct pci_dev *d)
{
	char path[PATH_SIZE], group[32];
	int r;

	d->group_read = true;
	dev_path(path, d->name, "iommu_group");
	r = root_link_name(path, group, sizeof(group));
	if (r == 0)
		d->group = parse_group(group);
	else if (r != -ENOENT)
		inv->groups_unreadable = true;
}

/* -ENOMEM only: an attribute that cannot be read is left as unknown. */
static int read_details(struct inventory *inv, struct pci_dev *d)
{
	char path[PATH_SIZE], buf[128];
	int boot_vga = -1;
	ssize_t n;

	if (d->details)
		return 0;
	d->details = true;
	dev_path(path, d->name, "driver_override");
	n = root_read(path, buf, sizeof(buf));
	if (n > 0) {
		rstrip(buf);
		if (!streq(buf, "(null)") && !(d->override = strpool_add(&inv->names, buf))) {
			d->override = "";
			return -ENOMEM;
		}
	}
	dev_path(path, d->name, "physfn");
	d->is_vf = root_exists(path);
	if (d->is_vf)
		return 0;
	if (read_int_attr(d->name, "sriov_totalvfs", &d->sriov_totalvfs) < 0)
		d->sriov_totalvfs = -1;
	if ((d->class >> 16) == 0x03 && read_int_attr(d->name, "boot_vga", &boot_vga) == 0)
		d->boot_vga = boot_vga != 0;
	return 0;
}

static int dev_cmp(const void *a, const void *b)
{
	return pci_addr_cmp(&((const struct pci_dev *)a)->addr, &((const struct pci_dev *)b)->addr);
}

/* An address as one number, in pci_addr_cmp's order: domain, bus, devfn (3 sort passes). */
static uint64_t addr_key(const struct pci_addr *a)
{
	return (uint64_t)a->domain << 16 | (uint64_t)a->bus << 8 | (uint64_t)(a->dev << 3 | a->fn);
}

/*
 * Sort the functions by address: the keys are sorted (16 bytes moved a swap, not a whole
 * function; two functions never share an address), then the functions put in place by
 * following the permutation's cycles.
 */
static int sort_devs(struct inventory *inv)
{
	struct sort_key *k = malloc(inv->n * sizeof(*k));
	size_t i;

	if (!k)
		return -ENOMEM;
	for (i = 0; i < inv->n; i++)
		k[i] = (struct sort_key){ addr_key(&inv->dev[i].addr), i };
	sort_keys(k, inv->n);
	/* Position i wants the function now at k[i].idx. */
	for (i = 0; i < inv->n; i++) {
		struct pci_dev tmp;
		size_t j = i;

		if (k[i].idx == i || k[i].idx == SIZE_MAX)
			continue;
		tmp = inv->dev[i];
		while (k[j].idx != i) {
			size_t from = k[j].idx;

			inv->dev[j] = inv->dev[from];
			k[j].idx = SIZE_MAX;
			j = from;
		}
		inv->dev[j] = tmp;
		k[j].idx = SIZE_MAX;
	}
	free(k);
	return 0;
}

/* An interesting device or a function of its slot: its details and its group. */
static int take_function(struct scan_ctx *c, struct pci_dev *d, int *groups, size_t *ng)
{
	struct inventory *inv = c->inv;
	int r;

	if (d->group_read)
		return 0; /* taken already: each function adds its group once */
	r = complete(c, d);
	if (r == 1)
		return 0;
	if (r == 0)
		r = read_details(inv, d);
	read_group_link(inv, d);
	if (d->group >= 0)
		groups[(*ng)++] = d->group;
	return r;
}

struct members_ctx {
	struct scan_ctx *scan;
	struct inventory *inv;
	int group;
	int err;
};

static int add_foreign(struct members_ctx *m, const char *name)
{
	struct inventory *inv = m->inv;
	struct foreign_member *f = realloc(inv->foreign, (inv->n_foreign + 1) * sizeof(*f));

	if (!f) {
		m->err = -ENOMEM;
		return 1;
	}
	inv->foreign = f;
	f = &f[inv->n_foreign++];
	f->group = m->group;
	strscpy(f->name, name, sizeof(f->name)); /* a longer name is cut, still named */
	return 0;
}

static int add_member(const char *name, void *data)
{
	struct members_ctx *m = data;
	struct pci_addr a;
	struct pci_dev *d;

	/*
	 * Not a PCI function we listed (hot-added since, or not PCI at all): vfio needs the
	 * whole group, so the group is not viable and the report names the member.
	 */
	if (pci_addr_parse(name, &a) < 0 || !(d = inventory_find(m->inv, &a)))
		return add_foreign(m, name);
	m->err = complete(m->scan, d);
	if (m->err == 1) {
		m->err = 0; /* gone: no longer a member */
		return 0;
	}
	d->group = m->group;
	d->group_read = true;
	if (!m->err)
		m->err = read_details(m->inv, d);
	return m->err ? 1 : 0;
}

/*
 * The members of a group, from /sys/kernel/iommu_groups/N/devices: one listing instead of
 * a readlink for every function of the node. A group that cannot be listed cannot be
 * judged whole.
 */
static int foreign_cmp(const void *a, const void *b)
{
	return strcmp(((const struct foreign_member *)a)->name,
		      ((const struct foreign_member *)b)->name);
}

static int read_members(struct scan_ctx *c, int group)
{
	struct inventory *inv = c->inv;
	struct members_ctx m = { .scan = c, .inv = inv, .group = group };
	size_t first_foreign = inv->n_foreign;
	char path[64];
	int r;

	snprintf(path, sizeof(path), "sys/kernel/iommu_groups/%d/devices", group);
	r = root_list(path, add_member, &m);
	if (m.err)
		return m.err;
	if (inv->n_foreign > first_foreign) /* in name order, as a report lists them */
		qsort(inv->foreign + first_foreign, inv->n_foreign - first_foreign,
		      sizeof(*inv->foreign), foreign_cmp);
	if (r < 0)
		inv->groups_unreadable = true;
	return 0;
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
		return; /* only for the report: not worth failing the scan */
	for (i = 0; i < ng; i++) {
		struct group_type *t = &inv->types[inv->n_types];
		char path[96];

		if (i > 0 && groups[i] == groups[i - 1])
			continue;
		snprintf(path, sizeof(path), "sys/kernel/iommu_groups/%d/type", groups[i]);
		if (root_read(path, t->type, sizeof(t->type)) <= 0)
			continue;
		rstrip(t->type);
		t->group = groups[i];
		inv->n_types++;
	}
}

int inventory_scan(struct inventory *inv,
		   bool (*interesting)(const struct pci_dev *d, const void *data), const void *data)
{
	struct scan_ctx c = { .inv = inv, .uevents = ROOT_BATCH_INIT };
	int *groups = NULL;
	size_t i, j, ng = 0;
	int r;

	inv->dev = NULL;
	inv->n = 0;
	inv->types = NULL;
	inv->n_types = 0;
	inv->groups_unreadable = false;
	inv->foreign = NULL;
	inv->n_foreign = 0;
	memset(&inv->names, 0, sizeof(inv->names));
	r = root_list("sys/bus/pci/devices", list_one, &c);
	if (c.err)
		return c.err;
	if (r < 0)
		return r;
	if (inv->n == 0)
		return 0;
	r = sort_devs(inv);
	if (r == 0)
		r = resolve(&c);
	if (r < 0)
		goto out;

	/* The interesting devices and the functions of their slots: details and group links. */
	groups = malloc(inv->n * sizeof(*groups));
	if (!groups) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < inv->n && r == 0; i++) {
		struct pci_dev *d = &inv->dev[i];

		if (!interesting(d, data))
			continue;
		/* By its IDs it may matter: by all it is, does it? */
		r = complete(&c, d);
		if (r == 1) {
			r = 0; /* gone */
			continue;
		}
		if (r < 0 || !interesting(d, data))
			continue;
		r = take_function(&c, d, groups, &ng);
		for (j = i; r == 0 && j > 0 && pci_same_slot(&inv->dev[j - 1].addr, &d->addr); j--)
			r = take_function(&c, &inv->dev[j - 1], groups, &ng);
		for (j = i + 1; r == 0 && j < inv->n && pci_same_slot(&inv->dev[j].addr, &d->addr); j++)
			r = take_function(&c, &inv->dev[j], groups, &ng);
	}
	/* Every member of those groups, as each group lists it, with its details. */
	if (r == 0 && ng) {
		qsort(groups, ng, sizeof(*groups), int_cmp);
		for (i = 0; i < ng && r == 0; i++)
			if (i == 0 || groups[i] != groups[i - 1])
				r = read_members(&c, groups[i]);
		if (r == 0)
			read_group_types(inv, groups, ng);
	}
	if (r == 0)
		drop_gone(&c);
out:
	root_batch_close(&c.uevents);
	free(groups);
	free(c.mark);
	return r;
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
	free(inv->foreign);
	strpool_free(&inv->names);
	inv->dev = NULL;
	inv->types = NULL;
	inv->foreign = NULL;
	inv->n = inv->n_types = inv->n_foreign = 0;
}

bool inventory_group_pending(const struct inventory *inv, const struct pci_dev *d)
{
	/* An unidentified function is never taken along. */
	return inv->iommu.active && inv->iommu.groups_at_probe && d->group < 0 && !d->driver[0] &&
		!d->unidentified;
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
