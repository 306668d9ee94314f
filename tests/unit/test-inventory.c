// SPDX-License-Identifier: MIT
/*
 * The scan (src/inventory.c) against the fake kernel: every function's IDs from
 * /proc/bus/pci/devices with no uevent read for a function no plan looks at; the uevent,
 * the details and the group of a function that may matter and of the other functions of
 * its slot; every function's uevent without the proc file; a uevent that cannot be read
 * (unidentified) and one that is gone since the listing (dropped); the order by address.
 */
#include <errno.h>
#include <string.h>

#include "fake-kernel.h"
#include "inventory.h"
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
	struct inventory inv;
	const struct pci_dev *gpu, *audio, *nic;

	host();
	CHECK_INT(inventory_scan(&inv, nvidia, NULL), 0, "scan with the proc file");
	CHECK_INT(inv.n, 4, "four functions");
	CHECK(inv.n == 4 && streq(inv.dev[0].name, "0000:00:01.0") &&
		      streq(inv.dev[3].name, "0000:41:00.0"),
	      "sorted by address");
	gpu = dev(&inv, "0000:01:00.0");
	audio = dev(&inv, "0000:01:00.1");
	nic = dev(&inv, "0000:41:00.0");
	CHECK(gpu && !gpu->partial && gpu->class == 0x030000 && streq(gpu->driver, "nouveau") &&
		      gpu->group == 2 && gpu->details,
	      "the GPU: its uevent, details and group read");
	CHECK(audio && !audio->partial && streq(audio->driver, "snd_hda_intel") && audio->group == 2,
	      "its slot's audio function: read too");
	CHECK(nic && nic->partial && nic->vendor == 0x8086 && nic->device == 0x1521 &&
		      nic->class == 0xffffff && nic->driver[0] == '\0' && !nic->details,
	      "the NIC: its IDs from the proc file, nothing else read");
	inventory_free(&inv);

	host();
	CHECK_INT(inventory_scan(&inv, nothing, NULL), 0, "a scan no function matters to");
	CHECK(inv.n == 4 && inv.dev[1].partial && inv.dev[2].partial && inv.dev[1].vendor == 0x10de,
	      "every function partial, its IDs known");
	inventory_free(&inv);
}

static void test_no_proc(void)
{
	struct inventory inv;
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
	struct inventory inv;
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
	CHECK(inv.n == 3 && !dev(&inv, "0000:41:00.0"), "it leaves the inventory");
	inventory_free(&inv);

	/* The GPU is gone when the scan looks at it after the proc file named it: dropped too. */
	host();
	fk_fault("r:sys/bus/pci/devices/0000:01:00.0/uevent", 0, -ENOENT);
	CHECK_INT(inventory_scan(&inv, nvidia, NULL), 0, "an interesting function gone");
	CHECK(inv.n == 3 && !dev(&inv, "0000:01:00.0") && dev(&inv, "0000:01:00.1"),
	      "it leaves; its slot's audio function stays");
	inventory_free(&inv);
}

int main(void)
{
	root_init(NULL);
	test_proc_then_interesting();
	test_no_proc();
	test_unreadable_and_gone();
	return unit_done();
}
