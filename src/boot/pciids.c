// SPDX-License-Identifier: MIT
/*
 * pci.ids, found where the sandbox device plugin's copy or the host's is: read whole; a
 * device's name in it, as the plugin finds it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "pciids.h"
#include "rootio.h"

const char *const pciids_paths[PCIIDS_PATHS] = { "usr/share/gpuvm/pci.ids", "usr/share/misc/pci.ids",
						 "usr/share/hwdata/pci.ids", "usr/share/pci.ids" };

char *pciids_read(size_t *len, size_t *which)
{
	char *buf;
	size_t i;

	for (i = 0; i < PCIIDS_PATHS; i++)
		if (root_read_file(pciids_paths[i], PCIIDS_MAX, ROOT_FILE_LINKS, &buf, len) == 0) {
			*which = i;
			return buf;
		}
	return NULL;
}

int pciids_read_given(const char *file, char **ids, size_t *len)
{
	return config_read_max(file, PCIIDS_MAX, ids, len);
}

/*
 * NVIDIA's sandbox device plugin (kubevirt-gpu-device-plugin, getDeviceName) reads pci.ids
 * with Go's bufio.Scanner: a line of 64 KiB or more stops it, and it then names nothing.
 */
#define SCAN_LINE_MAX 65536

int pciids_name(const char *ids, size_t len, uint16_t vendor, uint16_t device, char *out, size_t size)
{
	const char *p = ids, *end = ids + len;
	char ven[5], dev[6];
	bool in_vendor = false;
	size_t i;

	snprintf(ven, sizeof(ven), "%04x", vendor);
	snprintf(dev, sizeof(dev), "\t%04x", device);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (n >= SCAN_LINE_MAX)
			return -ENOENT;
		if (n > 0 && p[n - 1] == '\r') /* the scanner drops it */
			n--;
		if (!in_vendor) {
			/* The first line that starts with the vendor ID, whatever follows. */
			in_vendor = n >= 4 && memcmp(p, ven, 4) == 0;
		} else if (n > 0 && *p == '#') {
			;
		} else if (n == 0 || *p != '\t') {
			return -ENOENT; /* the next vendor, or a blank line: not listed */
		} else if (n >= 5 && memcmp(p, dev, 5) == 0) {
			/*
			 * Its name is what follows the ID, as it is: kv_resource_name() trims.
			 * A NUL is DEL here, a byte the plugin's name treats alike (not blank,
			 * deleted), so that the name stays a string.
			 */
			if (n - 5 >= size)
				return -ENAMETOOLONG;
			for (i = 0; i < n - 5; i++)
				out[i] = p[5 + i] ? p[5 + i] : '\x7f';
			out[i] = '\0';
			return 0;
		}
		p = nl ? nl + 1 : end;
	}
	return -ENOENT;
}

int pciids_uncertain(const char *ids, uint16_t device)
{
	char line[24];

	snprintf(line, sizeof(line), "\n#gpuvm-uncertain %04x\n", device);
	return strstr(ids, line) ? 0 : -ENOENT;
}
