// SPDX-License-Identifier: MIT
/*
 * pci_dev_parse_uevent on a device's uevent attribute as sysfs hands it out (one read
 * into inventory_scan's 1 KiB buffer, NUL-terminated).
 *
 * Invariants: success only with a PCI_ID= and a PCI_CLASS= line; the class fits 24 bits;
 * the driver always ends terminated inside its buffer, is shorter than DRIVER_LEN and is
 * empty unless a DRIVER= line says otherwise; a driver accepted is no path ('/', ".",
 * ".."); the modalias built from the device fits MODALIAS_LEN; the parsed device, written
 * back as a uevent, parses to the same device.
 */
#include <errno.h>

#include "fuzz.h"
#include "inventory.h"

#define UEVENT_READ 1024 /* inventory_scan's buffer */

static bool has_line(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	for (;;) {
		if (strncmp(s, prefix, n) == 0)
			return true;
		s = strchr(s, '\n');
		if (!s)
			return false;
		s++;
	}
}

static void check(const char *text)
{
	struct pci_dev d, back;
	char again[512], driver[DRIVER_LEN + 8], driver2[DRIVER_LEN], alias[MODALIAS_LEN + 8];
	int r;

	memset(&d, 0xa5, sizeof(d)); /* what the parser leaves alone stays poisoned */
	memset(driver, 0xa5, sizeof(driver));
	r = pci_dev_parse_uevent(&d, text, driver, DRIVER_LEN);
	fuzz_assert(r == 0 || r == -EINVAL, "pci_dev_parse_uevent returned %d", r);
	fuzz_assert(memchr(driver, '\0', DRIVER_LEN), "driver unterminated");
	if (r < 0)
		return;
	fuzz_assert(!driver[0] || has_line(text, "DRIVER="), "driver '%s' from nowhere", driver);
	fuzz_assert(!strchr(driver, '\n'), "newline in the driver");
	fuzz_assert(has_line(text, "PCI_ID=") && has_line(text, "PCI_CLASS="),
		    "accepted without PCI_ID= and PCI_CLASS=");
	fuzz_assert(d.class <= 0xffffff, "class 0x%x", d.class);
	/* The driver's name becomes a path (drivers/NAME/unbind): nothing that climbs out. */
	fuzz_assert(!strchr(driver, '/') && strcmp(driver, ".") != 0 && strcmp(driver, "..") != 0,
		    "driver '%s' accepted", driver);
	pci_dev_modalias(&d, alias, sizeof(alias));
	fuzz_assert(strlen(alias) == MODALIAS_LEN - 1, "modalias '%s' of %zu characters", alias,
		    strlen(alias));

	snprintf(again, sizeof(again),
		 "DRIVER=%s\nPCI_CLASS=%X\nPCI_ID=%04X:%04X\nPCI_SUBSYS_ID=%04X:%04X\nMODALIAS=%s\n",
		 driver, d.class, d.vendor, d.device, d.subvendor, d.subdevice, alias);
	memset(&back, 0, sizeof(back));
	fuzz_assert(pci_dev_parse_uevent(&back, again, driver2, sizeof(driver2)) == 0,
		    "the device written back does not parse");
	fuzz_assert(back.vendor == d.vendor && back.device == d.device && back.class == d.class &&
			    back.subvendor == d.subvendor && back.subdevice == d.subdevice &&
			    strcmp(driver2, driver) == 0,
		    "the device written back parses to another one");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);

	check(text);
	if (size >= UEVENT_READ) {
		text[UEVENT_READ - 1] = '\0'; /* what one read of a long attribute gives */
		check(text);
	}
	free(text);
	return 0;
}
