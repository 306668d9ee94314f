// SPDX-License-Identifier: MIT
/* pci.ids, found where the sandbox device plugin's copy or the host's is: read whole. */
#include <fcntl.h>

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
		if (config_read_max(root_fd(), pciids_paths[i], PCIIDS_MAX, &buf, len) == 0) {
			*which = i;
			return buf;
		}
	return NULL;
}

int pciids_read_given(const char *file, char **ids, size_t *len)
{
	return config_read_max(AT_FDCWD, file, PCIIDS_MAX, ids, len);
}
