/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_SOURCE_H
#define GPUVM_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "blkdev.h"
#include "pci.h"

/*
 * Where the host config came from, as data: what confsource.c resolves and what the boot's
 * pending records (pending.c) carry between its calls. A header of its own, so that the
 * records need not know confsource, which reads them.
 */

/*
 * Where the settings come from: the kernel command line over a host config over the
 * defaults. On a running host the host config is /etc/gpuvm/gpuvm.conf (or --config FILE),
 * or the one config= names on a disk when that can be read. At boot the initramfs carries
 * none: the first call (apply --defer) knows the command line alone, and the host config is
 * read where the generator mounted the real root (apply --resume --sysroot DIR), or from
 * config='s disk.
 */
enum source_status {
	SRC_FILE,     /* no config=: the host config file (a running host's, or --config) */
	SRC_DISK,     /* the config read from config='s disk */
	SRC_WAITING,  /* config='s disk is not there yet and the boot may wait for it */
	SRC_FALLBACK, /* config='s disk or file could not be used: the file's, or none at boot */
	SRC_CMDLINE,  /* boot, first call: the command line sets the mode; acts now */
	SRC_HOLD,     /* boot: the mode waits for the root's config; GPUs held */
	SRC_ROOT,     /* boot, last call: the root's config (see root_config) */
};

/* At the boot's last call: what became of the root's /etc/gpuvm/gpuvm.conf. */
enum root_config {
	RC_NONE,       /* not looked for (not that call) */
	RC_READ,       /* read */
	RC_MISSING,    /* no such file: no host config */
	RC_UNREADABLE, /* there, but not usable (why in reason) */
	RC_NO_ROOT,    /* the root is not there (why in reason) */
};

#define SOURCE_HELD_MAX 64

struct source {
	enum source_status status;
	char spec[256];			       /* config= as given; "" without one */
	struct blkdev_found found;	       /* SRC_DISK: the device and its file system */
	char reason[300];		       /* SRC_FALLBACK: why */
	unsigned timeout_s;		       /* how long the boot waits */
	unsigned long long deadline_ms;	       /* CLOCK_BOOTTIME; 0 when no wait is pending */
	bool pending;			       /* a pending record was there */
	struct pci_addr held[SOURCE_HELD_MAX]; /* what the pending record says is held */
	size_t n_held;
	bool boot;	       /* --defer or --resume: the initramfs's calls */
	bool baked;	       /* the image carries a host config (ignored) */
	enum root_config root; /* SRC_ROOT: the root's config */
	char sysroot[256];     /* SRC_ROOT: where the root is mounted */
	char first_result[16]; /* SRC_ROOT: the first call's result, when it applied */
};

#endif
