/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_PCIIDS_H
#define GPUVM_PCIIDS_H

#include <stddef.h>
#include <stdint.h>

#define PCIIDS_MAX ((size_t)4 * 1024 * 1024)
#define PCIIDS_PATHS 4

/*
 * Where pci.ids is looked for under the root, in order: gpuvm's copy of the sandbox device
 * plugin's NVIDIA block first (scripts/pciids-nvidia.sh), then the host's.
 */
extern const char *const pciids_paths[PCIIDS_PATHS];

/*
 * The first of pciids_paths that can be read (up to PCIIDS_MAX bytes, NUL-terminated, to
 * free()), its length in *len and its index in *which; NULL when none can.
 */
char *pciids_read(size_t *len, size_t *which);
/* FILE, a path on the host (as --config): 0 or -errno (-EFBIG past PCIIDS_MAX). */
int pciids_read_given(const char *file, char **ids, size_t *len);

/*
 * The device's name in len bytes of pci.ids text, as NVIDIA's sandbox device plugin finds
 * it: after the first line that starts with the vendor ID, the first line "\tdddd" (lower
 * case) before a line that starts with neither '\t' nor '#'; what follows the ID, untrimmed
 * (a NUL byte in it comes back as DEL, which names alike).
 * -ENOENT when it is not there (or past a line of 64 KiB, where the plugin stops),
 * -ENAMETOOLONG when it does not fit in size. Pure.
 */
int pciids_name(const char *pciids, size_t len, uint16_t vendor, uint16_t device, char *out,
		size_t size);

/*
 * Whether NUL-terminated pci.ids text lists NVIDIA's device ID as one whose name the sandbox
 * device plugin's pci.ids may give otherwise: a line "#gpuvm-uncertain dddd" (lower case),
 * as scripts/pciids-ship.sh writes them into the file gpuvm ships. 0 when it does, -ENOENT
 * when not. Pure.
 */
int pciids_uncertain(const char *pciids, uint16_t device);

#endif
