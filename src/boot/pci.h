/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_PCI_H
#define GPUVM_PCI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PCI_VENDOR_NVIDIA 0x10de
#define PCI_ADDR_LEN 20 /* "ffffffff:ff:1f.7": domains have up to 8 digits */

struct pci_addr {
	uint32_t domain; /* up to 0xffff on most hosts; VMD uses 0x10000 and above */
	uint8_t bus, dev, fn;
};

/* "VVVV:DDDD" or "VVVV:*" */
struct pci_id {
	uint16_t vendor, device;
	bool any_device;
};

/* "DDDD:BB:DD.F" (4 to 8 domain digits) or "BB:DD.F" (domain 0). */
int pci_addr_parse(const char *s, struct pci_addr *a);
void pci_addr_format(const struct pci_addr *a, char *buf, size_t size);
int pci_addr_cmp(const struct pci_addr *a, const struct pci_addr *b);
/* Same domain, bus and device: functions of one slot. */
bool pci_same_slot(const struct pci_addr *a, const struct pci_addr *b);

int pci_id_parse(const char *s, struct pci_id *id);
bool pci_id_match(const struct pci_id *id, uint16_t vendor, uint16_t device);

/*
 * Comma- or space-separated lists. Each parses up to max entries into out and sets *n;
 * -EINVAL names the first bad entry in bad (of size badsize), -E2BIG on too many.
 */
int pci_addr_list_parse(const char *s, struct pci_addr *out, size_t max, size_t *n, char *bad,
			size_t badsize);
int pci_id_list_parse(const char *s, struct pci_id *out, size_t max, size_t *n, char *bad,
		      size_t badsize);

/* Class helpers: class is the 24-bit value 0xBBSSPP. */
static inline bool pci_class_is_gpu(uint32_t class)
{
	return (class >> 8) == 0x0300 || (class >> 8) == 0x0302;
}

static inline bool pci_class_is_nvswitch(uint32_t class)
{
	return (class >> 8) == 0x0680;
}

/* Host, PCI-to-PCI and semi-transparent bridges: never bound, never block a group. */
static inline bool pci_class_is_bridge(uint32_t class)
{
	uint32_t sub = class >> 8;

	return sub == 0x0600 || sub == 0x0604 || sub == 0x0609;
}

/*
 * What the host needs to boot and run, by class, whatever ids= says: mass storage (01xx: the
 * root disk may be behind it), every bridge that is not a port (06xx: ISA/LPC, PCMCIA,
 * CardBus, other; an NVSwitch, NVIDIA's 0680, is not one), base system peripherals (0800-0806:
 * interrupt controllers, DMA, timers, RTC, hotplug, SD hosts, the IOMMU itself) and SMBus
 * (0c05). Never bound; a group that holds one is not viable. NULL when the class is none.
 */
const char *pci_class_host_needs(uint16_t vendor, uint32_t class);

#endif
