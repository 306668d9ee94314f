/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_PCIPROC_H
#define GPUVM_PCIPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pci.h"

struct pci_dev;

/*
 * /proc/bus/pci/devices: every PCI function's vendor and device in a few reads, for the
 * functions the listing found. A line has no domain: it stands for its bus and devfn (its
 * key) in every domain. Where several domains have one key, the lines that name it must be
 * as many and all say the same IDs (as for the same slot of two identical trees); else
 * which line is whose cannot be told, and the uevents of those functions must say.
 */
struct pci_proc {
	struct pci_dev *dev;
	size_t n;
	/* The functions by key: a hash of the distinct keys, each key's first function (rep) */
	uint32_t *head, *next, *rep;
	uint8_t *nfn;  /* per rep: how many functions have its key (one a domain) */
	uint8_t *seen; /* per rep: how many lines named its key; PCI_PROC_CONFLICT */
	size_t buckets;
};

/*
 * Pure: a line of /proc/bus/pci/devices, "BBDF\tVVVVDDDD\tIRQ\t...": its bus and devfn as
 * one key (bus << 8 | devfn), its vendor and device. -EINVAL when it is not that.
 */
int pci_proc_parse_line(const char *s, size_t len, uint16_t *key, uint16_t *vendor, uint16_t *device);

/* Index the n functions of dev by key, before the file is read: 0 or -ENOMEM. */
int pci_proc_init(struct pci_proc *pp, struct pci_dev *dev, size_t n);
/*
 * The whole lines of a chunk of the file (root_read_chunks' callback; data is the struct
 * pci_proc): the bytes used, or -EINVAL when a line is not in the file's format. A line's
 * IDs are kept on its key's first function.
 */
ssize_t pci_proc_chunk(const char *buf, size_t len, bool eof, void *data);
/*
 * Once the whole file is read: true when function i's IDs are known from it without doubt
 * (then in dev[i]), false when its uevent must say (its key named by no line, by fewer
 * lines than domains have it, or with different IDs).
 */
bool pci_proc_known(const struct pci_proc *pp, size_t i);
void pci_proc_fini(struct pci_proc *pp);

#endif
