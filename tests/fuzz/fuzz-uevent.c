// SPDX-License-Identifier: MIT
/*
 * pci_dev_parse_uevent on a device's uevent attribute as sysfs hands it out (one read
 * into inventory_scan's 1 KiB buffer, NUL-terminated).
 *
 * Invariants: success only with a PCI_ID= and a PCI_CLASS= line; the class fits 24 bits;
 * driver and modalias always end terminated inside their fields, and are empty unless a
 * DRIVER= or MODALIAS= line says otherwise; a driver accepted is no path ('/', ".",
 * ".."); the parsed device, written back as a uevent, parses to the same device.
 */
#include <errno.h>

#include "fuzz.h"
#include "inventory.h"

#define UEVENT_READ 1024	/* inventory_scan's buffer */

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
	char again[512];
	int r;

	memset(&d, 0xa5, sizeof(d));	/* what the parser leaves alone stays poisoned */
	r = pci_dev_parse_uevent(&d, text);
	fuzz_assert(r == 0 || r == -EINVAL, "pci_dev_parse_uevent returned %d", r);
	fuzz_assert(memchr(d.driver, '\0', sizeof(d.driver)) &&
		    memchr(d.modalias, '\0', sizeof(d.modalias)), "driver or modalias unterminated");
	fuzz_assert(!d.driver[0] || has_line(text, "DRIVER="), "driver '%s' from nowhere", d.driver);
	fuzz_assert(!d.modalias[0] || has_line(text, "MODALIAS="), "modalias from nowhere");
	fuzz_assert(!strchr(d.driver, '\n') && !strchr(d.modalias, '\n'), "newline in a field");
	if (r < 0)
		return;
	fuzz_assert(has_line(text, "PCI_ID=") && has_line(text, "PCI_CLASS="),
		    "accepted without PCI_ID= and PCI_CLASS=");
	fuzz_assert(d.class <= 0xffffff, "class 0x%x", d.class);
	/* The driver's name becomes a path (drivers/NAME/unbind): nothing that climbs out. */
	fuzz_assert(!strchr(d.driver, '/') && strcmp(d.driver, ".") != 0 &&
		    strcmp(d.driver, "..") != 0, "driver '%s' accepted", d.driver);

	snprintf(again, sizeof(again),
		 "DRIVER=%s\nPCI_CLASS=%X\nPCI_ID=%04X:%04X\nPCI_SUBSYS_ID=%04X:%04X\nMODALIAS=%s\n",
		 d.driver, d.class, d.vendor, d.device, d.subvendor, d.subdevice, d.modalias);
	memset(&back, 0, sizeof(back));
	fuzz_assert(pci_dev_parse_uevent(&back, again) == 0, "the device written back does not parse");
	fuzz_assert(back.vendor == d.vendor && back.device == d.device && back.class == d.class &&
		    back.subvendor == d.subvendor && back.subdevice == d.subdevice &&
		    strcmp(back.driver, d.driver) == 0 && strcmp(back.modalias, d.modalias) == 0,
		    "the device written back parses to another one");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);

	check(text);
	if (size >= UEVENT_READ) {
		text[UEVENT_READ - 1] = '\0';	/* what one read of a long attribute gives */
		check(text);
	}
	free(text);
	return 0;
}
