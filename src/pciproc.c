// SPDX-License-Identifier: MIT
/*
 * /proc/bus/pci/devices (pciproc.h): each function's vendor and device by bus and devfn,
 * one hash lookup a line however many domains share its key.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "inventory.h"
#include "pciproc.h"
#include "util.h"

#define PCI_PROC_CONFLICT 0xfe
#define PCI_PROC_SEEN_MAX 0xfd

int pci_proc_parse_line(const char *s, size_t len, uint16_t *key, uint16_t *vendor, uint16_t *device)
{
	unsigned long k, v, d;

	if (len < 13 || s[4] != '\t' || (len > 13 && s[13] != '\t') || parse_hex_fixed(s, 4, &k) < 0 ||
	    parse_hex_fixed(s + 5, 4, &v) < 0 || parse_hex_fixed(s + 9, 4, &d) < 0)
		return -EINVAL;
	*key = (uint16_t)k;
	*vendor = (uint16_t)v;
	*device = (uint16_t)d;
	return 0;
}

static inline __attribute__((always_inline)) uint16_t bus_devfn(const struct pci_addr *a)
{
	return (uint16_t)(a->bus << 8 | a->dev << 3 | a->fn);
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
		if (bus_devfn(&c->dev[i].addr) == key)
			return i;
	return NIL;
}

/*
 * The functions by bus and devfn: a hash of the distinct keys (one bucket a function or
 * so), each key's first function standing for it (rep) with how many functions have it
 * (nfn: one a domain that has it). A line then costs one lookup however many domains
 * share its key. -ENOMEM.
 */
int pci_proc_init(struct pci_proc *c, struct pci_dev *dev, size_t n)
{
	size_t i;

	*c = (struct pci_proc){ .dev = dev, .n = n };
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
		uint16_t key = bus_devfn(&c->dev[i].addr);
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
static void proc_ids(struct pci_proc *c, uint16_t key, uint16_t vendor, uint16_t device)
{
	struct pci_dev *dev = c->dev;
	uint32_t r = key_rep(c, key);

	if (r == NIL || c->seen[r] == PCI_PROC_CONFLICT)
		return;
	if (c->seen[r] == 0) {
		dev[r].vendor = vendor;
		dev[r].device = device;
		c->seen[r] = 1;
	} else if (dev[r].vendor != vendor || dev[r].device != device) {
		c->seen[r] = PCI_PROC_CONFLICT;
	} else if (c->seen[r] < PCI_PROC_SEEN_MAX) {
		c->seen[r]++;
	}
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

static const char *proc_line_end(const char *l, size_t rest)
{
	const char *end = l + rest, *p = l + 14;
	unsigned f;

	while (p < end && p < l + 14 + 8 && *p != '\t' && *p != '\n')
		p++; /* the IRQ, "%x" */
	if (p + PROC_FIXED + 1 < end && *p == '\t') {
		for (f = 1; f <= 14 && p[f * PROC_FIELD] == '\t'; f++)
			;
		if (f > 14)
			return memchr(p + PROC_FIXED + 1, '\n', (size_t)(end - p) - PROC_FIXED - 1);
	}
	return memchr(l, '\n', rest);
}

/* The whole lines of a chunk of /proc/bus/pci/devices: the bytes used, or -EINVAL. */
ssize_t pci_proc_chunk(const char *buf, size_t len, bool eof, void *data)
{
	struct pci_proc *c = data;
	size_t pos = 0;

	while (pos < len) {
		const char *l = buf + pos, *nl = proc_line_end(l, len - pos);
		uint16_t key, vendor, device;

		if (!nl && !eof)
			break; /* cut by the read: the next chunk starts with it */
		if (!nl)
			nl = buf + len;
		if (pci_proc_parse_line(l, (size_t)(nl - l), &key, &vendor, &device) < 0)
			return -EINVAL; /* not the format this reads: the uevents say it all */
		proc_ids(c, key, vendor, device);
		pos = (size_t)(nl - buf) + 1;
	}
	return (ssize_t)(pos < len ? pos : len);
}

bool pci_proc_known(const struct pci_proc *c, size_t i)
{
	uint32_t k = c->rep[i];

	if (c->seen[k] == PCI_PROC_CONFLICT || c->seen[k] != c->nfn[k])
		return false;
	c->dev[i].vendor = c->dev[k].vendor;
	c->dev[i].device = c->dev[k].device;
	return true;
}

void pci_proc_fini(struct pci_proc *c)
{
	free(c->head); /* the block of all five */
	*c = (struct pci_proc){ 0 };
}
