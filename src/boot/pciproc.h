/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_PCIPROC_H
#define GPUVM_PCIPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pci.h"

/*
 * A PCI function as the scan first knows it, 16 bytes: its address as one number
 * (pci_fn_key: domain, bus, devfn, in pci_addr_cmp's order) and, once known, its IDs.
 * Most functions of a node stay this and nothing more: no plan looks at them.
 */
struct pci_fn {
	uint64_t key;
	uint16_t vendor, device;
	uint8_t flags; /* PCI_FN_* */
};

#define PCI_FN_KNOWN 0x01 /* vendor and device are what /proc/bus/pci/devices says */
#define PCI_FN_TAKE 0x02  /* the scan reads it (inventory.c) */

static inline uint64_t pci_fn_key(const struct pci_addr *a)
{
	return (uint64_t)a->domain << 16 | (uint64_t)a->bus << 8 | (uint64_t)(a->dev << 3 | a->fn);
}

static inline void pci_fn_addr(uint64_t key, struct pci_addr *a)
{
	a->domain = (uint32_t)(key >> 16);
	a->bus = (uint8_t)(key >> 8);
	a->dev = (uint8_t)(key >> 3 & 0x1f);
	a->fn = (uint8_t)(key & 7);
}

/*
 * Pure: a line of /proc/bus/pci/devices, "BBDF\tVVVVDDDD\tIRQ\t...": its bus and devfn as
 * one key (bus << 8 | devfn), its vendor and device. -EINVAL when it is not that.
 */
int pci_proc_parse_line(const char *s, size_t len, uint16_t *key, uint16_t *vendor, uint16_t *device);

/*
 * The file read alone, without the listing of /sys/bus/pci/devices: each bus's domain from
 * the names of /proc/bus/pci's bus directories ("BB" in domain 0, "DDDD:BB" elsewhere, as
 * drivers/pci/proc.c names them), and a function a line. Usable where each bus number that
 * a line names is one domain's.
 */
#define PCI_BUS_NONE UINT32_MAX		/* no directory names the bus */
#define PCI_BUS_SHARED (UINT32_MAX - 1) /* two domains have a bus of this number */

/*
 * Pure: a name in /proc/bus/pci: 0 and the bus's domain and number for a bus directory's,
 * -EINVAL for any other ("devices", a name not in the kernel's form).
 */
int pci_proc_bus_parse(const char *name, uint32_t *domain, uint8_t *bus);
/* Pure: the bus directory name into the table domain_of[256] (PCI_BUS_NONE at the start). */
void pci_proc_bus_add(uint32_t *domain_of, uint32_t domain, uint8_t bus);

struct pci_proc;

struct pci_proc_list {
	const uint32_t *domain_of; /* [256], by bus number */
	/*
	 * The functions the listing found on the buses that are no one domain's, indexed
	 * (struct pci_proc): a line of such a bus goes to them. NULL: there are none.
	 */
	struct pci_proc *named;
	struct pci_fn *fn; /* one a line of a bus of one domain, in the file's order */
	size_t n, cap;
	bool sorted; /* so far each line's key above the one before: no sort needed */
};

/*
 * The whole lines of a chunk of the file (root_read_chunks' callback; data is the struct
 * pci_proc_list, zeroed but for domain_of, named and sorted = true): the bytes used;
 * -EINVAL when a line is not in the file's format, -ESRCH when its bus is no one domain's
 * and named is NULL, -ENOMEM.
 */
ssize_t pci_proc_list_chunk(const char *buf, size_t len, bool eof, void *data);

/*
 * The file read for the functions the listing found. A line has no domain: it stands for
 * its bus and devfn (its key) in every domain. Where several domains have one key, the
 * lines that name it must be as many and all say the same IDs (as for the same slot of two
 * identical trees); else which line is whose cannot be told, and the uevents of those
 * functions must say.
 */
struct pci_proc {
	struct pci_fn *fn;
	size_t n;
	/* The functions by key: a hash of the distinct keys, each key's first function (rep) */
	uint32_t *head, *next, *rep;
	uint8_t *nfn;  /* per rep: how many functions have its key (one a domain) */
	uint8_t *seen; /* per rep: how many lines named its key; PCI_PROC_CONFLICT */
	size_t buckets;
};

/* Index the n functions of fn by key, before the file is read: 0 or -ENOMEM. */
int pci_proc_init(struct pci_proc *pp, struct pci_fn *fn, size_t n);
/*
 * The whole lines of a chunk of the file (root_read_chunks' callback; data is the struct
 * pci_proc): the bytes used, or -EINVAL when a line is not in the file's format. A line's
 * IDs are kept on its key's first function.
 */
ssize_t pci_proc_chunk(const char *buf, size_t len, bool eof, void *data);
/*
 * Once the whole file is read: true when function i's IDs are known from it without doubt
 * (then in fn[i]), false when its uevent must say (its key named by no line, by fewer
 * lines than domains have it, or with different IDs).
 */
bool pci_proc_known(const struct pci_proc *pp, size_t i);
void pci_proc_fini(struct pci_proc *pp);

#endif
