// SPDX-License-Identifier: MIT
/*
 * The scan (src/boot/inventory.c) against the fake kernel: every function's IDs from
 * /proc/bus/pci/devices with no uevent read for a function no plan looks at; the uevent,
 * the details and the group of a function that may matter and of the other functions of
 * its slot; /proc/bus/pci alone where each bus is one domain's, the listing only for a bus
 * two domains have; every function's uevent without the proc file; a uevent that cannot be
 * read (unidentified) and one that is gone since the listing (dropped), or since the proc
 * file named it (the scan starts again from the listing); the order by address.
 */
#include <errno.h>
#include <string.h>

#include "fake-kernel.h"
#include "inventory.h"
#include "iommu.h"
#include "rootio.h"
#include "unit.h"
#include "util.h"

static bool nvidia(const struct pci_dev *d, const void *data)
{
	(void)data;
	return d->vendor == 0x10de;
}

static bool nothing(const struct pci_dev *d, const void *data)
{
	(void)d;
	(void)data;
	return false;
}

/* A GPU with its audio function, a NIC, a bridge; added out of address order. */
static void host(void)
{
	fk_reset(true);
	fk_add("0000:41:00.0", 0x8086, 0x1521, 0x020000, 20, "igb", "igb");
	fk_add("0000:01:00.1", 0x10de, 0x10f8, 0x040300, 2, "snd_hda_intel", "snd_hda_intel");
	fk_add("0000:01:00.0", 0x10de, 0x1e87, 0x030000, 2, "nouveau", "nouveau");
	fk_add("0000:00:01.0", 0x8086, 0x1901, 0x060400, 1, "pcieport", "pcieport");
}

static const struct pci_dev *dev(const struct inventory *inv, const char *addr)
{
	size_t i;

	for (i = 0; i < inv->n; i++)
		if (streq(inv->dev[i].name, addr))
			return &inv->dev[i];
	return NULL;
}

static void test_proc_then_interesting(void)
{
	struct inventory inv = { 0 }; /* the caller's inputs (want_numa, models) unset */
	const struct pci_dev *gpu, *audio;

	host();
	CHECK_INT(inventory_scan(&inv, nvidia, NULL), 0, "scan with the proc file");
	CHECK_INT(inv.n_all, 4, "four functions");
	CHECK(inv.n == 2 && streq(inv.dev[0].name, "0000:01:00.0") &&
		      streq(inv.dev[1].name, "0000:01:00.1"),
	      "the GPU and its slot's audio function read, by address");
	gpu = dev(&inv, "0000:01:00.0");
	audio = dev(&inv, "0000:01:00.1");
	CHECK(gpu && !gpu->partial && gpu->class == 0x030000 && streq(gpu->driver, "nouveau") &&
		      gpu->group == 2 && gpu->details,
	      "the GPU: its uevent, details and group read");
	CHECK(audio && !audio->partial && streq(audio->driver, "snd_hda_intel") && audio->group == 2,
	      "its slot's audio function: read too");
	CHECK(!dev(&inv, "0000:41:00.0") && !dev(&inv, "0000:00:01.0"),
	      "the NIC and the bridge: counted, not read");
	inventory_free(&inv);

	host();
	CHECK_INT(inventory_scan(&inv, nothing, NULL), 0, "a scan no function matters to");
	CHECK(inv.n == 0 && inv.n_all == 4, "no function read, four counted");
	inventory_free(&inv);

	/* /proc/bus/pci says it all: the listing of sysfs is not read. */
	host();
	fk_fault("r:sys/bus/pci/devices", 0, -EIO);
	CHECK_INT(inventory_scan(&inv, nvidia, NULL), 0, "/proc/bus/pci alone, the listing unread");
	CHECK(inv.n == 2 && inv.n_all == 4 && dev(&inv, "0000:01:00.0"), "the same functions");
	inventory_free(&inv);
}

/*
 * Bus 01 in two domains: which of its lines is whose the listing says, and only the
 * functions on bus 01 are taken from it. Two identical GPUs at 01:00.0, and one more
 * function at 0001:01:00.1 that only the listing places.
 */
static void test_shared_bus(void)
{
	struct inventory inv = { 0 }; /* the caller's inputs (want_numa, models) unset */
	const struct pci_dev *d;

	host();
	fk_add("0001:01:00.0", 0x10de, 0x1e87, 0x030000, 7, "nouveau", "nouveau");
	fk_add("0001:01:00.1", 0x10de, 0x10f8, 0x040300, 7, "snd_hda_intel", "snd_hda_intel");
	fk_add("0001:42:00.0", 0x8086, 0x1521, 0x020000, 8, "igb", "igb");
	CHECK_INT(inventory_scan(&inv, nvidia, NULL), 0, "a bus number two domains have");
	CHECK(inv.n == 4 && inv.n_all == 7, "both GPUs and their audio functions read, seven counted");
	d = dev(&inv, "0001:01:00.0");
	CHECK(d && d->group == 7 && streq(d->driver, "nouveau"),
	      "the second domain's GPU, its own group");
	inventory_free(&inv);

	/* Without the listing, the shared bus cannot be placed: the scan fails as it says. */
	fk_fault("r:sys/bus/pci/devices", 0, -EIO);
	CHECK_INT(inventory_scan(&inv, nvidia, NULL), -EIO, "the listing needed and unreadable: -EIO");
	inventory_free(&inv);
}
static void test_no_proc(void)
{
	struct inventory inv = { 0 }; /* the caller's inputs (want_numa, models) unset */
	size_t i;
	bool all = true;

	host();
	fk_no_proc_pci();
	CHECK_INT(inventory_scan(&inv, nothing, NULL), 0, "scan without the proc file");
	for (i = 0; i < inv.n; i++)
		all &= !inv.dev[i].partial && inv.dev[i].class != 0xffffff;
	CHECK(inv.n == 4 && all, "every function read from its uevent");
	CHECK(dev(&inv, "0000:41:00.0") && streq(dev(&inv, "0000:41:00.0")->driver, "igb"),
	      "the NIC's driver from its uevent");
	inventory_free(&inv);
}

static void test_unreadable_and_gone(void)
{
	struct inventory inv = { 0 }; /* the caller's inputs (want_numa, models) unset */
	const struct pci_dev *d;

	/* The GPU's uevent cannot be read: unidentified, never taken. */
	host();
	fk_fault("r:sys/bus/pci/devices/0000:01:00.0/uevent", 0, -EACCES);
	CHECK_INT(inventory_scan(&inv, nvidia, NULL), 0, "an unreadable uevent: the scan goes on");
	d = dev(&inv, "0000:01:00.0");
	CHECK(d && d->unidentified && d->unread_errno == EACCES,
	      "the GPU unidentified, the cause kept");
	inventory_free(&inv);

	/* The NIC is gone when its uevent is read (no proc file: every uevent is): dropped. */
	host();
	fk_no_proc_pci();
	fk_fault("r:sys/bus/pci/devices/0000:41:00.0/uevent", 0, -ENOENT);
	CHECK_INT(inventory_scan(&inv, nothing, NULL), 0, "a function gone since the listing");
	CHECK(inv.n == 3 && inv.n_all == 3 && !dev(&inv, "0000:41:00.0"), "it leaves the inventory");
	inventory_free(&inv);

	/* The GPU is gone when the scan looks at it after the proc file named it: dropped too. */
	host();
	fk_fault("r:sys/bus/pci/devices/0000:01:00.0/uevent", 0, -ENOENT);
	CHECK_INT(inventory_scan(&inv, nvidia, NULL), 0, "an interesting function gone");
	CHECK(inv.n == 1 && inv.n_all == 3 && !dev(&inv, "0000:01:00.0") && dev(&inv, "0000:01:00.1"),
	      "it leaves; its slot's audio function stays");
	inventory_free(&inv);

	/*
	 * The proc file names a GPU sysfs no longer has (unplugged between the two): out of
	 * step, the listing decides, and the GPU is not there.
	 */
	host();
	fk_fault("r:sys/bus/pci/devices/0000:01:00.0/uevent", 1, -ENOENT);
	CHECK_INT(inventory_scan(&inv, nvidia, NULL), 0, "out of step: the scan starts again");
	CHECK(inv.n == 2 && dev(&inv, "0000:01:00.0") && dev(&inv, "0000:01:00.1"),
	      "from the listing, once: the GPU read the second time (only the first read failed)");
	inventory_free(&inv);
}

/* The number of IOMMU groups: the directory's link count less 2, or where that cannot be had, its listing's. */
static void test_group_count(void)
{
	struct iommu_state st;

	host();
	iommu_read(&st, "");
	CHECK_INT(st.groups, 3, "three groups, from the link count");
	host();
	fk_fault("r:sys/kernel/iommu_groups#links", 0, -ENOSYS);
	iommu_read(&st, "");
	CHECK_INT(st.groups, 3, "three groups, from the listing where the link count cannot be had");
}

int main(void)
{
	root_init(NULL);
	test_proc_then_interesting();
	test_shared_bus();
	test_no_proc();
	test_unreadable_and_gone();
	test_group_count();
	return unit_done();
}
