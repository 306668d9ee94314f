/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_INVENTORY_H
#define GPUVM_INVENTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iommu.h"
#include "pci.h"
#include "strpool.h"

#define DRIVER_LEN 64
#define MODALIAS_LEN 54 /* "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X" */

/* Found by inventory_host_uses(): a device the running host needs, whatever its class. */
enum host_use {
	HOST_USE_NONE,
	HOST_USE_ROOT,	  /* the root file system's disk is behind it */
	HOST_USE_CONSOLE, /* a console= serial port is, or is behind, it */
};

/*
 * One PCI function, 80 bytes: a node may have 10,000 of them. The names are never NULL
 * ("" when none); those that are not literals are the inventory's (inventory.names).
 */
struct pci_dev {
	char name[PCI_ADDR_LEN]; /* as sysfs spells it: "0000:01:00.0" */
	struct pci_addr addr;
	uint16_t vendor, device, subvendor, subdevice;
	uint32_t class;
	int group;	    /* IOMMU group; -1 when none, or not read */
	const char *driver; /* bound now, "" when none */
	/* Read only for devices that may matter (details == true): */
	const char *override;	    /* driver_override, "" for (null) */
	const char *variant;	    /* vfio variant driver from modules.alias, "" when none */
	int sriov_totalvfs;	    /* -1 when not SR-IOV capable */
	int8_t boot_vga;	    /* -1 when absent */
	int8_t numa;		    /* numa_node, read where gpus= names a node; -1: not */
	uint8_t unread_errno;	    /* unidentified: why its uevent could not be used */
	enum host_use host_use : 2; /* the running host needs it (inventory_host_uses) */
	bool details : 1;
	bool group_read : 1; /* its group is known: from its link or a listing */
	bool is_vf : 1;	     /* has a physfn link */
	/*
	 * Its uevent could not be read or parsed: not identified, never taken. The IDs and
	 * class are what its vendor, device and class files say, ffff where they fail too.
	 */
	bool unidentified : 1;
	/*
	 * Known by its address and IDs only (/proc/bus/pci/devices): class (0xffffff),
	 * subsystem and driver unread, as no plan looks at it. Read whole (its uevent) as soon
	 * as the scan finds it may matter.
	 */
	bool partial : 1;
};

struct gpu_models;

/* A member of a group read that is not a PCI function of this host's listing. */
struct foreign_member {
	int group;
	char name[48];
};

struct group_type {
	int group;
	char type[24]; /* DMA, DMA-FQ, identity, blocked, unmanaged */
};

struct inventory {
	/*
	 * The functions the scan read, sorted by address: those a plan may look at, the other
	 * functions of their slots, the members of their IOMMU groups (and, where the IDs of
	 * the others cannot be known without it, every function).
	 */
	struct pci_dev *dev;
	size_t n;
	size_t n_all; /* every PCI function of the node */
	struct iommu_state iommu;
	struct group_type *types; /* of the groups that hold interesting devices */
	size_t n_types;
	/*
	 * The iommu_group link of a device that matters, or the listing of its group, could
	 * not be read: no group can be judged whole.
	 */
	bool groups_unreadable;
	struct foreign_member *foreign; /* in the groups read; a group that has one is not viable */
	size_t n_foreign;
	struct strpool names; /* the devices' driver names */
	/*
	 * vm-vgpu: what pci.ids says of the NVIDIA GPUs' IDs (their architecture, vGPU
	 * method and support), set by the caller; NULL when not read.
	 */
	const struct gpu_models *models;
	/* Set by the caller before the scan: read each detailed function's numa_node too. */
	bool want_numa;
};

/* The type of an IOMMU group that was read, or NULL. */
const char *inventory_group_type(const struct inventory *inv, int group);

/*
 * Pure: parse a uevent attribute into the device's IDs and class, and its DRIVER= into
 * driver (of size size; "" when none). -EINVAL when PCI_ID or PCI_CLASS lacks, or the
 * driver is no name (too long, '/', "." or ".."). d->driver is not touched.
 */
int pci_dev_parse_uevent(struct pci_dev *d, const char *uevent, char *driver, size_t size);

/*
 * Pure: the device's modalias, as the kernel's uevent spells it (built from the same IDs
 * and class), into buf of at least MODALIAS_LEN bytes.
 */
void pci_dev_modalias(const struct pci_dev *d, char *buf, size_t size);

/* A function as the scan starts it: no driver, no group, no details. */
void pci_dev_init(struct pci_dev *d);

/*
 * Every PCI function and its vendor and device: from /proc/bus/pci alone (the devices file,
 * and the bus directories for each bus's domain: a few reads for the whole node) where
 * each bus number is one domain's; else from the listing of /sys/bus/pci/devices, with
 * the IDs from the devices file where it names a function without doubt, and from its
 * uevent where not. Where the two are out of step (a function or a group member one has
 * and the other lacks), the listing decides. Then for each function interesting() says
 * yes to: its uevent (class, subsystem, driver), and if it is still interesting, the
 * details (driver_override, physfn, sriov_totalvfs, boot_vga) and iommu_group link of it
 * and of the functions of its slot; then the members of those IOMMU groups from each
 * group's listing, read whole. interesting() first sees a function that may be partial,
 * and must decide from its address and IDs alone (the class is 0xffffff then). A function
 * it passes over (and that is in no slot or group of one it takes) is not in inv->dev: no
 * plan looks at it; inv->n_all counts it.
 */
int inventory_scan(struct inventory *inv,
		   bool (*interesting)(const struct pci_dev *d, const void *data), const void *data);
void inventory_free(struct inventory *inv);

struct pci_dev *inventory_find(const struct inventory *inv, const struct pci_addr *a);

/*
 * Pure: d has no IOMMU group yet but gets one when a driver probes it: the IOMMU is active,
 * gives groups at probe (iommu_state.groups_at_probe) and no driver has probed d. A device
 * with a driver and no group is outside any IOMMU, there too.
 */
bool inventory_group_pending(const struct inventory *inv, const struct pci_dev *d);

/* Pure: group >= 0 and every function in it belongs to the slot of addr. */
bool inventory_group_in_slot(const struct inventory *inv, int group, const struct pci_addr *addr);

#endif
