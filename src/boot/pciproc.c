// SPDX-License-Identifier: MIT
/*
 * /proc/bus/pci/devices (pciproc.h): every function with its vendor and device, its domain
 * from the bus directories' names; or, for the functions a listing found, each one's IDs
 * by bus and devfn, one hash lookup a line however many domains share its key.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pciproc.h"
#include "util.h"

#define PCI_PROC_CONFLICT 0xfe
#define PCI_PROC_SEEN_MAX 0xfd

static inline __attribute__((always_inline)) int parse_line(const char *s, size_t len, uint16_t *key,
							    uint16_t *vendor, uint16_t *device)
{
	unsigned long k, ids;

	if (len < 13 || s[4] != '\t' || (len > 13 && s[13] != '\t') ||
	    parse_hex_fixed(s, 4, &k) < 0 || parse_hex_fixed(s + 5, 8, &ids) < 0)
		return -EINVAL;
	*key = (uint16_t)k;
	*vendor = (uint16_t)(ids >> 16);
	*device = (uint16_t)ids;
	return 0;
}

int pci_proc_parse_line(const char *s, size_t len, uint16_t *key, uint16_t *vendor, uint16_t *device)
{
	return parse_line(s, len, key, vendor, device);
}

static inline __attribute__((always_inline)) uint16_t bus_devfn(const struct pci_fn *f)
{
	return (uint16_t)f->key;
}

int pci_proc_bus_parse(const char *name, uint32_t *domain, uint8_t *bus)
{
	const char *colon = strchr(name, ':'), *b = colon ? colon + 1 : name;
	unsigned long d = 0, v;
	size_t n = colon ? (size_t)(colon - name) : 0;

	/* "%02x" or "%04x:%02x": the domain 4 to 8 digits */
	if (strlen(b) != 2 || parse_hex_fixed(b, 2, &v) < 0)
		return -EINVAL;
	if (colon && (n < 4 || n > 8 || parse_hex_fixed(name, n, &d) < 0))
		return -EINVAL;
	*domain = (uint32_t)d;
	*bus = (uint8_t)v;
	return 0;
}

void pci_proc_bus_add(uint32_t *domain_of, uint32_t domain, uint8_t bus)
{
	if (domain_of[bus] == PCI_BUS_NONE)
		domain_of[bus] = domain;
	else if (domain_of[bus] != domain)
		domain_of[bus] = PCI_BUS_SHARED;
}

#define NIL UINT32_MAX

static unsigned key_hash(const struct pci_proc *c, uint16_t key)
{
	return (unsigned)(((uint32_t)key * 2654435761U) >> 16) & (c->buckets - 1);
}

/* The function that stands for key (the first with it), or NIL. */
static uint32_t key_rep(const struct pci_proc *c, uint16_t key)
{
	uint32_t i;

	for (i = c->head[key_hash(c, key)]; i != NIL; i = c->next[i])
		if (bus_devfn(&c->fn[i]) == key)
			return i;
	return NIL;
}

/*
 * The functions by bus and devfn: a hash of the distinct keys (one bucket a function or
 * so), each key's first function standing for it (rep) with how many functions have it
 * (nfn: one a domain that has it). A line then costs one lookup however many domains
 * share its key. -ENOMEM.
 */
int pci_proc_init(struct pci_proc *c, struct pci_fn *fn, size_t n)
{
	size_t i;

	*c = (struct pci_proc){ .fn = fn, .n = n };
	for (c->buckets = 512; c->buckets < n && c->buckets < 65536; c->buckets *= 2)
		;
	/* One block for the five tables: one allocation, not five (and for musl's malloc,
	 * fewer mmap and munmap calls for the groups of each size) */
	if (n >= NIL)
		return -ENOMEM;
	c->head = malloc((c->buckets + 2 * n) * sizeof(*c->head) + 2 * n);
	if (!c->head)
		return -ENOMEM;
	c->next = c->head + c->buckets;
	c->rep = c->next + n;
	c->nfn = (uint8_t *)(c->rep + n);
	c->seen = c->nfn + n;
	memset(c->head, 0xff, c->buckets * sizeof(*c->head));
	memset(c->nfn, 0, 2 * n);
	for (i = 0; i < n; i++) {
		uint16_t key = bus_devfn(&c->fn[i]);
		uint32_t r = key_rep(c, key);

		if (r == NIL) {
			unsigned h = key_hash(c, key);

			r = (uint32_t)i;
			c->next[i] = c->head[h];
			c->head[h] = r;
		}
		c->rep[i] = r;
		if (c->nfn[r] < PCI_PROC_SEEN_MAX)
			c->nfn[r]++;
	}
	return 0;
}

/*
 * The IDs of a line, kept on its key's rep: seen[rep] lines, its IDs those of the first;
 * PCI_PROC_CONFLICT once two lines of the key say different IDs.
 */
static int proc_ids(void *data, uint16_t key, uint16_t vendor, uint16_t device)
{
	struct pci_proc *c = data;
	struct pci_fn *dev = c->fn;
	uint32_t r = key_rep(c, key);

	if (r == NIL || c->seen[r] == PCI_PROC_CONFLICT)
		return 0;
	if (c->seen[r] == 0) {
		dev[r].vendor = vendor;
		dev[r].device = device;
		c->seen[r] = 1;
	} else if (dev[r].vendor != vendor || dev[r].device != device) {
		c->seen[r] = PCI_PROC_CONFLICT;
	} else if (c->seen[r] < PCI_PROC_SEEN_MAX) {
		c->seen[r]++;
	}
	return 0;
}

/* A line of the file read alone: a function of the bus's one domain, or -ESRCH. */
static int list_line(void *data, uint16_t key, uint16_t vendor, uint16_t device)
{
	struct pci_proc_list *l = data;
	uint32_t domain = l->domain_of[key >> 8];
	struct pci_fn *f;

	if (domain >= PCI_BUS_SHARED)
		return l->named ? proc_ids(l->named, key, vendor, device) : -ESRCH;
	if (l->n == l->cap) {
		/* 2,048 (32 KiB) hold nearly every machine; a larger one doubles */
		size_t cap = l->cap ? l->cap * 2 : 2048;

		f = realloc(l->fn, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		l->fn = f;
		l->cap = cap;
	}
	f = &l->fn[l->n++];
	f->key = (uint64_t)domain << 16 | key;
	f->vendor = vendor;
	f->device = device;
	f->flags = PCI_FN_KNOWN;
	if (l->n > 1 && f->key <= f[-1].key)
		l->sorted = false;
	return 0;
}

/*
 * Where the line at l (of at most rest bytes) ends: its '\n', or NULL. After the IDs and
 * the IRQ come 14 fields the kernel writes as "\t%16llx", 17 bytes each whatever their
 * value: where the tabs are where they must be, the search for the end starts past them
 * (the driver's name), not at the line's start. A line that only looks so and hides a
 * '\n' in them takes the next with it: the functions of both are read from their uevents.
 */
#define PROC_FIELD ((size_t)17)
#define PROC_FIXED (14 * PROC_FIELD)

/* The tab that starts each of the 14 fields past p (the IRQ's end), a compare each. */
static inline __attribute__((always_inline)) bool fixed_tabs(const char *p)
{
#define T(k) (p[(k)*PROC_FIELD] == '\t')
	return T(1) && T(2) && T(3) && T(4) && T(5) && T(6) && T(7) && T(8) && T(9) && T(10) &&
		T(11) && T(12) && T(13) && T(14);
#undef T
}

static inline __attribute__((always_inline)) const char *proc_line_end(const char *l, size_t rest)
{
	const char *end = l + rest, *p = l + 14;

	while (p < end && p < l + 14 + 8 && *p != '\t' && *p != '\n')
		p++; /* the IRQ, "%x" */
	if (p + PROC_FIXED + 1 < end && *p == '\t' && fixed_tabs(p)) {
		/* the driver's name, a few bytes: a byte at a time costs less than memchr */
		for (p += PROC_FIXED + 1; p < end; p++)
			if (*p == '\n')
				return p;
		return NULL;
	}
	return memchr(l, '\n', rest);
}

/* What a line says (its key and IDs) to data: 0 or -errno. */
typedef int line_fn(void *data, uint16_t key, uint16_t vendor, uint16_t device);

/* The whole lines of a chunk of /proc/bus/pci/devices, each to line(): the bytes used, or -errno. */
static inline __attribute__((always_inline)) ssize_t walk(const char *buf, size_t len, bool eof,
							  line_fn *line, void *data)
{
	size_t pos = 0;
	int r;

	while (pos < len) {
		const char *l = buf + pos, *nl = proc_line_end(l, len - pos);
		uint16_t key, vendor, device;

		if (!nl && !eof)
			break; /* cut by the read: the next chunk starts with it */
		if (!nl)
			nl = buf + len;
		if (parse_line(l, (size_t)(nl - l), &key, &vendor, &device) < 0)
			return -EINVAL; /* not the format this reads: the uevents say it all */
		r = line(data, key, vendor, device);
		if (r < 0)
			return r;
		pos = (size_t)(nl - buf) + 1;
	}
	return (ssize_t)(pos < len ? pos : len);
}

ssize_t pci_proc_chunk(const char *buf, size_t len, bool eof, void *data)
{
	return walk(buf, len, eof, proc_ids, data);
}

ssize_t pci_proc_list_chunk(const char *buf, size_t len, bool eof, void *data)
{
	return walk(buf, len, eof, list_line, data);
}

bool pci_proc_known(const struct pci_proc *c, size_t i)
{
	uint32_t k = c->rep[i];

	if (c->seen[k] == PCI_PROC_CONFLICT || c->seen[k] != c->nfn[k])
		return false;
	c->fn[i].vendor = c->fn[k].vendor;
	c->fn[i].device = c->fn[k].device;
	return true;
}

void pci_proc_fini(struct pci_proc *c)
{
	free(c->head); /* the block of all five */
	*c = (struct pci_proc){ 0 };
}
