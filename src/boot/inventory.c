// SPDX-License-Identifier: MIT
/*
 * PCI functions and IOMMU groups as sysfs shows them. This runs on every boot of every
 * node, so each function costs as little as the kernel allows: /proc/bus/pci (pciproc.c)
 * gives every function's address and IDs in a few reads, into a table of 16 bytes a
 * function. A function no plan looks at stays there. One that may matter, and the other
 * functions of its slot, are read whole into the inventory: the uevent (class, subsystem,
 * driver; the modalias is built from them), the details and the iommu_group link; then
 * the members of those groups, from each group's own listing
 * (/sys/kernel/iommu_groups/N/devices). Where /proc/bus/pci cannot say (missing, not in its
 * format, a bus number two domains have), the listing of /sys/bus/pci/devices and the
 * uevents do. Each function read keeps 80 bytes: driver names are interned.
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
	d->numa = -1;
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

/* A member of a group read that the scan had not read: taken once every group is listed. */
struct later {
	size_t fn; /* in scan_ctx.fn */
	int group;
};

struct scan_ctx {
	struct inventory *inv;
	struct pci_fn *fn; /* every function, by address */
	size_t n_fn, cap_fn;
	/*
	 * fn is what /proc/bus/pci says alone: a function it names that sysfs does not have,
	 * or a member of a group it does not name, means the two are out of step (a hot plug,
	 * or a kernel that names a bus apart from its domain): the scan starts again from the
	 * listing (-ESTALE).
	 */
	bool proc_only;
	const uint32_t *domain_of; /* while the listing is read for the shared buses */
	struct root_batch uevents; /* closed 64 at a time */
	/* Per function: UEVENT while its uevent must be read, GONE once it was not there. */
	uint8_t *mark;
	struct later *later;
	size_t n_later;
	size_t n_gone; /* functions gone since the listing */
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
	unsigned long v = 0; /* read_hex_attr sets it where it returns 0 */
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
	if (r == -ENOENT && c->proc_only)
		return -ESTALE;
	if (r == -ENOENT) {
		c->mark[d - c->inv->dev] = GONE;
		d->group_read = true; /* never taken */
		return 1;
	}
	return r;
}

/* Those gone since the listing leave; the marks of the others are cleared. */
static void drop_gone(struct scan_ctx *c)
{
	struct inventory *inv = c->inv;
	size_t i, j;

	for (i = j = 0; i < inv->n; i++)
		if (c->mark[i] != GONE)
			inv->dev[j++] = inv->dev[i];
	c->n_gone += inv->n - j;
	inv->n = j;
	memset(c->mark, 0, j);
}

/* One more function, by its key, in the table the listing fills: 0, or 1 (-ENOMEM in c->err). */
static int add_fn(struct scan_ctx *c, uint64_t key)
{
	if (c->n_fn == c->cap_fn) {
		size_t cap = c->cap_fn ? c->cap_fn * 2 : 2048;
		struct pci_fn *f = realloc(c->fn, cap * sizeof(*f));

		if (!f) {
			c->err = -ENOMEM;
			return 1;
		}
		c->fn = f;
		c->cap_fn = cap;
	}
	c->fn[c->n_fn++] = (struct pci_fn){ .key = key };
	return 0;
}

/* The listing (where /proc/bus/pci cannot say it all): each function's address. */
static int list_one(const char *name, void *data)
{
	struct scan_ctx *c = data;
	struct pci_addr a;

	if (pci_addr_parse(name, &a) < 0)
		return 0; /* not a PCI address: not ours to judge */
	return add_fn(c, pci_fn_key(&a));
}

/*
 * Merge the runs of a (n functions, each run by address, runs of them) into one, through
 * a second table: a pass a doubling of the runs' length. -ENOMEM.
 */
static int merge_runs(struct pci_fn **pa, size_t n)
{
	struct pci_fn *a = *pa, *b = malloc(n * sizeof(*b)), *t;
	size_t runs;

	if (!b)
		return -ENOMEM;
	do {
		size_t i = 0, k = 0, m, e, x, y;

		for (runs = 0; i < n; runs++, i = e) {
			for (m = i + 1; m < n && a[m - 1].key < a[m].key; m++)
				;
			for (e = m < n ? m + 1 : m; e < n && a[e - 1].key < a[e].key; e++)
				;
			for (x = i, y = m; x < m && y < e;)
				b[k++] = a[x].key <= a[y].key ? a[x++] : a[y++];
			while (x < m)
				b[k++] = a[x++];
			while (y < e)
				b[k++] = a[y++];
		}
		t = a;
		a = b;
		b = t;
	} while (runs > 1);
	free(b);
	*pa = a;
	return 0;
}

/*
 * The table by address; -ENOTUNIQ where two functions have one (/proc/bus/pci's lines).
 * The devices file comes in a few runs in order (a domain's functions, then another's):
 * those are merged; a listing (the kernel's hash order) is radix-sorted.
 */
#define MERGE_RUNS 32

static int sort_fns(struct scan_ctx *c)
{
	struct sort_key *k;
	struct pci_fn *s;
	size_t i, runs = 1;
	int r;

	for (i = 1; i < c->n_fn && runs <= MERGE_RUNS; i++)
		runs += c->fn[i].key <= c->fn[i - 1].key;
	if (runs > 1 && runs <= MERGE_RUNS) {
		r = merge_runs(&c->fn, c->n_fn);
		if (r < 0)
			return r;
		c->cap_fn = c->n_fn;
	} else if (runs > 1) {
		k = malloc(c->n_fn * sizeof(*k));
		s = malloc(c->n_fn * sizeof(*s));
		if (!k || !s) {
			free(k);
			free(s);
			return -ENOMEM;
		}
		for (i = 0; i < c->n_fn; i++)
			k[i] = (struct sort_key){ c->fn[i].key, i };
		sort_keys(k, c->n_fn);
		for (i = 0; i < c->n_fn; i++)
			s[i] = c->fn[k[i].idx];
		free(k);
		free(c->fn);
		c->fn = s;
		c->cap_fn = c->n_fn;
	}
	for (i = 1; i < c->n_fn; i++)
		if (c->fn[i].key == c->fn[i - 1].key)
			return -ENOTUNIQ;
	return 0;
}

/*
 * The file is read through a buffer on the stack, where root_list()'s listing buffer was
 * a moment before: its pages are there already (not inlined, so that the two frames share
 * the same place), where a heap buffer would cost 16 page faults.
 */
#define PROC_BUF ((size_t)64 * 1024)

/*
 * Every function from /proc/bus/pci/devices, each bus's domain from the bus directories
 * (domain_of), and for the buses that are no one domain's, from the functions the listing
 * named (c->fn, by address, with their IDs where the file names them without doubt): 0;
 * -ESRCH where a line's bus is no one domain's and the listing was not read, -ENOTUNIQ
 * where two lines name one function, -ENODATA for a file with no line; -EINVAL for one not
 * in its format; -ENOMEM.
 */
static __attribute__((noinline)) int table_from_proc(struct scan_ctx *c, const uint32_t *domain_of)
{
	struct pci_proc_list l = { .domain_of = domain_of, .sorted = true };
	struct pci_fn *named = c->fn, *all;
	size_t n_named = c->n_fn, i, j, k;
	struct pci_proc pp;
	char buf[PROC_BUF];
	int r;

	if (n_named) {
		r = pci_proc_init(&pp, named, n_named);
		if (r < 0)
			return r;
		l.named = &pp;
	}
	r = root_read_chunks("proc/bus/pci/devices", buf, sizeof(buf), pci_proc_list_chunk, &l);
	for (i = 0; r == 0 && i < n_named; i++)
		if (pci_proc_known(&pp, i))
			named[i].flags |= PCI_FN_KNOWN;
	if (n_named)
		pci_proc_fini(&pp);
	c->fn = l.fn;
	c->n_fn = l.n;
	c->cap_fn = l.cap;
	if (r == 0 && !l.n && !n_named)
		r = -ENODATA;
	if (r == 0 && !l.sorted)
		r = sort_fns(c);
	if (r == 0 && n_named) {
		/* the two, each by address, into one */
		all = malloc((c->n_fn + n_named) * sizeof(*all));
		if (!all) {
			r = -ENOMEM;
		} else {
			for (i = j = k = 0; i < c->n_fn || j < n_named; k++)
				all[k] = j == n_named || (i < c->n_fn && c->fn[i].key < named[j].key) ?
					c->fn[i++] :
					named[j++];
			free(c->fn);
			c->fn = all;
			c->n_fn = k;
			for (i = 1; i < k && r == 0; i++)
				if (all[i].key == all[i - 1].key)
					r = -ENOTUNIQ;
		}
	}
	free(named);
	if (r < 0) {
		free(c->fn);
		c->fn = NULL;
		c->n_fn = c->cap_fn = 0;
	}
	return r;
}

/* The IDs of the functions listed, where /proc/bus/pci/devices names them without doubt. */
static __attribute__((noinline)) int ids_from_proc(struct scan_ctx *c)
{
	struct pci_proc pp;
	char buf[PROC_BUF];
	size_t i;
	int r;

	r = pci_proc_init(&pp, c->fn, c->n_fn);
	if (r < 0)
		return r;
	if (root_read_chunks("proc/bus/pci/devices", buf, sizeof(buf), pci_proc_chunk, &pp) == 0)
		for (i = 0; i < c->n_fn; i++)
			if (pci_proc_known(&pp, i))
				c->fn[i].flags |= PCI_FN_KNOWN;
	pci_proc_fini(&pp);
	return 0;
}

struct buses {
	uint32_t domain_of[256];
	size_t n;
	bool shared; /* a bus number two domains have */
};

static int bus_dir(const char *name, void *data)
{
	struct buses *b = data;
	uint32_t domain;
	uint8_t bus;

	if (pci_proc_bus_parse(name, &domain, &bus) == 0) {
		pci_proc_bus_add(b->domain_of, domain, bus);
		b->shared |= b->domain_of[bus] == PCI_BUS_SHARED;
		b->n++;
	}
	return 0;
}

/*
 * A name of the listing where /proc/bus/pci says the rest: only a function of a bus that is
 * no one domain's is kept (the file's line cannot say whose it is); the others are the
 * file's, at the cost of a look at their bus number.
 */
static int list_shared(const char *name, void *data)
{
	struct scan_ctx *c = data;
	const char *b = NULL;
	unsigned long bus;
	size_t i;

	/* The bus's two digits, after a domain of 4 (as sysfs names nearly all) to 8 digits */
	if (name[0] && name[1] && name[2] && name[3]) {
		for (i = 4; i < 9 && name[i] && name[i] != ':'; i++)
			;
		if (i < 9 && name[i] == ':')
			b = name + i + 1;
	}
	if (b && b[0] && b[1] && b[2] == ':' && parse_hex_fixed(b, 2, &bus) == 0 &&
	    c->domain_of[bus] < PCI_BUS_SHARED)
		return 0;
	return list_one(name, data);
}

/*
 * Every function's address, and its IDs where they are known. /proc/bus/pci says it all
 * in a few reads for the whole node: each bus's domain from its directory's name, and a
 * function a line of the devices file; only where a bus number is two domains' (or no
 * directory names it) does the listing of /sys/bus/pci/devices say which functions are on
 * it, and only those names are read. Without those files (a kernel without
 * CONFIG_PROC_FS, a file not in its format), or where they are out of step with sysfs
 * (!proc), the listing gives every address, the devices file the IDs of those it names
 * without doubt, and the uevents the rest. -errno when the listing cannot be read.
 */
static int learn(struct scan_ctx *c, bool proc)
{
	struct buses b;
	bool use_proc = true;
	int r;

	if (proc) {
		memset(b.domain_of, 0xff, sizeof(b.domain_of)); /* PCI_BUS_NONE */
		b.n = 0;
		b.shared = false;
		r = root_list("proc/bus/pci", bus_dir, &b);
		if (r == 0 && b.n && b.shared) {
			c->domain_of = b.domain_of;
			r = root_list("sys/bus/pci/devices", list_shared, c);
			c->domain_of = NULL;
			if (c->err || r < 0)
				return c->err ? c->err : r;
			if (c->n_fn)
				r = sort_fns(c);
		}
		if (r == 0 && b.n) {
			r = table_from_proc(c, b.domain_of);
			if (r == 0) {
				c->proc_only = true;
				return 0;
			}
			if (r == -ENOMEM)
				return r;
			use_proc = r != -EINVAL;
		}
	}
	r = root_list("sys/bus/pci/devices", list_one, c);
	if (c->err)
		return c->err;
	if (r < 0)
		return r;
	if (!c->n_fn)
		return 0;
	r = sort_fns(c);
	if (r == 0 && use_proc)
		r = ids_from_proc(c);
	return r == -ENOTUNIQ ? 0 : r; /* the listing's names are unique */
}

/* The function the scan reads, as the table knows it; partial until its uevent is read. */
static void take_fn(struct scan_ctx *c, const struct pci_fn *f)
{
	struct inventory *inv = c->inv;
	struct pci_dev *d = &inv->dev[inv->n];

	pci_dev_init(d);
	pci_fn_addr(f->key, &d->addr);
	pci_addr_format(&d->addr, d->name, sizeof(d->name));
	d->partial = true;
	if (f->flags & PCI_FN_KNOWN) {
		d->vendor = f->vendor;
		d->device = f->device;
		d->class = 0xffffff; /* unknown until its uevent is read */
	} else {
		c->mark[inv->n] = UEVENT;
	}
	inv->n++;
}

/*
 * The functions the scan reads: each whose IDs are not known, each interesting() may want
 * by its address and IDs (its class unknown yet), and the other functions of their slots.
 * The rest stay in the table: no plan looks at them, and they cost no more than their line.
 * Then the uevents of those whose IDs are not known; those gone since the listing leave.
 */
static int choose(struct scan_ctx *c,
		  bool (*interesting)(const struct pci_dev *d, const void *data), const void *data)
{
	struct inventory *inv = c->inv;
	struct pci_dev probe, *dev;
	size_t i, j, slot = 0, n = 0;
	uint8_t *mark;
	bool take = false;
	int r;

	pci_dev_init(&probe);
	probe.partial = true;
	probe.class = 0xffffff;
	for (i = 0; i <= c->n_fn; i++) {
		const struct pci_fn *f = &c->fn[i < c->n_fn ? i : slot];

		if (i == c->n_fn || f->key >> 3 != c->fn[slot].key >> 3) {
			if (take)
				for (j = slot; j < i; j++, n++)
					c->fn[j].flags |= PCI_FN_TAKE;
			slot = i;
			take = false;
			if (i == c->n_fn)
				break;
		}
		if (take)
			continue;
		if (!(f->flags & PCI_FN_KNOWN)) {
			take = true;
			continue;
		}
		pci_fn_addr(f->key, &probe.addr);
		probe.vendor = f->vendor;
		probe.device = f->device;
		take = interesting(&probe, data);
	}
	dev = malloc((n ? n : 1) * sizeof(*dev));
	mark = calloc(n ? n : 1, 1);
	if (!dev || !mark) {
		free(dev);
		free(mark);
		return -ENOMEM;
	}
	inv->dev = dev;
	c->mark = mark;
	for (i = 0; i < c->n_fn; i++)
		if (c->fn[i].flags & PCI_FN_TAKE)
			take_fn(c, &c->fn[i]);
	for (i = 0; i < inv->n; i++) {
		if (c->mark[i] != UEVENT)
			continue;
		c->mark[i] = 0;
		r = read_uevent(c, &inv->dev[i]);
		if (r == -ENOENT && c->proc_only)
			return -ESTALE;
		if (r == -ENOENT)
			c->mark[i] = GONE;
		else if (r < 0)
			return r;
	}
	drop_gone(c);
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
	int boot_vga = -1, numa = -1;
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
	if (inv->want_numa && read_int_attr(d->name, "numa_node", &numa) == 0 && numa >= 0 &&
	    numa <= INT8_MAX)
		d->numa = (int8_t)numa;
	return 0;
}

static int dev_cmp(const void *a, const void *b)
{
	return pci_addr_cmp(&((const struct pci_dev *)a)->addr, &((const struct pci_dev *)b)->addr);
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
		k[i] = (struct sort_key){ pci_fn_key(&inv->dev[i].addr), i };
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

/* A function of the node, or NULL. */
static struct pci_fn *fn_find(const struct scan_ctx *c, uint64_t key)
{
	size_t lo = 0, hi = c->n_fn;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->fn[mid].key == key)
			return &c->fn[mid];
		if (c->fn[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * A member the scan did not read: taken with its group once all groups are listed
 * (take_later). One the node's table lacks is foreign, or, where the table is what
 * /proc/bus/pci says alone, a sign the two are out of step.
 */
static int add_later(struct members_ctx *m, const char *name, const struct pci_addr *a)
{
	struct scan_ctx *c = m->scan;
	struct pci_fn *f = fn_find(c, pci_fn_key(a));
	struct later *l;

	if (!f && c->proc_only) {
		m->err = -ESTALE;
		return 1;
	}
	if (!f || (f->flags & PCI_FN_TAKE))
		return add_foreign(m, name); /* or taken, and gone since: none of ours */
	l = realloc(c->later, (c->n_later + 1) * sizeof(*l));
	if (!l) {
		m->err = -ENOMEM;
		return 1;
	}
	c->later = l;
	c->later[c->n_later++] = (struct later){ (size_t)(f - c->fn), m->group };
	f->flags |= PCI_FN_TAKE;
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
	if (pci_addr_parse(name, &a) < 0)
		return add_foreign(m, name);
	d = inventory_find(m->inv, &a);
	if (!d)
		return add_later(m, name, &a);
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

/*
 * The members of the groups read that the scan had not read: each with its group and
 * details, like those it had. Then the functions by address again. -ENOMEM, -ESTALE.
 */
static int take_later(struct scan_ctx *c)
{
	struct inventory *inv = c->inv;
	struct pci_dev *dev = realloc(inv->dev, (inv->n + c->n_later) * sizeof(*dev));
	uint8_t *mark = realloc(c->mark, inv->n + c->n_later);
	size_t i;
	int r;

	if (dev)
		inv->dev = dev;
	if (mark)
		c->mark = mark;
	if (!dev || !mark)
		return -ENOMEM;
	memset(c->mark + inv->n, 0, c->n_later);
	for (i = 0; i < c->n_later; i++) {
		struct pci_dev *d = &inv->dev[inv->n];

		take_fn(c, &c->fn[c->later[i].fn]);
		r = complete(c, d);
		if (r == 1)
			continue; /* gone: no longer a member */
		if (r < 0)
			return r;
		d->group = c->later[i].group;
		d->group_read = true;
		r = read_details(inv, d);
		if (r < 0)
			return r;
	}
	drop_gone(c);
	return sort_devs(inv);
}

/*
 * gcc 12's -fanalyzer loses the functions choose() reads into inv->dev once it returns to
 * here and calls them a leak: the caller's inventory_free() frees them (valgrind and ASan
 * agree).
 */
#ifndef __clang__
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
static int scan(struct inventory *inv, bool (*interesting)(const struct pci_dev *d, const void *data),
		const void *data, bool proc_only)
{
	struct scan_ctx c = { .inv = inv, .uevents = ROOT_BATCH_INIT };
	int *groups = NULL;
	size_t i, j, ng = 0;
	int r;

	inv->dev = NULL;
	inv->n = inv->n_all = 0;
	inv->types = NULL;
	inv->n_types = 0;
	inv->groups_unreadable = false;
	inv->foreign = NULL;
	inv->n_foreign = 0;
	memset(&inv->names, 0, sizeof(inv->names));
	r = learn(&c, proc_only);
	if (r < 0 || !c.n_fn)
		goto out;
	r = choose(&c, interesting, data);
	if (r < 0)
		goto out;

	/* The interesting devices and the functions of their slots: details and group links. */
	groups = malloc((inv->n ? inv->n : 1) * sizeof(*groups));
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
		if (r == 0 && c.n_later)
			r = take_later(&c);
		if (r == 0)
			read_group_types(inv, groups, ng);
	}
	if (r == 0)
		drop_gone(&c);
out:
	inv->n_all = c.n_fn - c.n_gone;
	root_batch_close(&c.uevents);
	free(groups);
	free(c.mark);
	free(c.later);
	free(c.fn);
	return r;
}
#ifndef __clang__
#pragma GCC diagnostic pop
#endif

int inventory_scan(struct inventory *inv,
		   bool (*interesting)(const struct pci_dev *d, const void *data), const void *data)
{
	int r = scan(inv, interesting, data, true);

	if (r == -ESTALE) {
		/* /proc/bus/pci and sysfs out of step: the listing decides */
		inventory_free(inv);
		r = scan(inv, interesting, data, false);
	}
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
	inv->n = inv->n_all = inv->n_types = inv->n_foreign = 0;
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
