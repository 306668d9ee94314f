/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_CONFSOURCE_H
#define GPUVM_CONFSOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "blkdev.h"
#include "pci.h"
#include "settings.h"

/*
 * Where the settings come from: the kernel command line over a host config over the
 * defaults, the host config being the one config= names on a disk when that one can be
 * read, else the initramfs's (/etc/gpuvm/gpuvm.conf, or --config FILE).
 */
enum source_status {
	SRC_IMAGE,    /* no config=: the initramfs's config */
	SRC_DISK,     /* the config read from config='s disk */
	SRC_WAITING,  /* config='s disk is not there yet and the boot may wait for it */
	SRC_FALLBACK, /* config='s disk or file could not be used: the initramfs's config */
};

enum source_policy {
	SRC_NO_DISK, /* config= is not followed: the initramfs's config (cmdline, config) */
	SRC_LOOK,    /* one look; absent means fall back (plan, status, apply) */
	SRC_DEFER,   /* apply --defer: absent means wait (until the deadline) */
	SRC_RESUME,  /* apply --resume: the wait the pending record describes */
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
};

/*
 * Settings for a command: config_file (--config; NULL: the image's /etc/gpuvm/gpuvm.conf),
 * the command line, and config='s disk as pol says (under_root: --root, which mounts none).
 * Never fails the boot: every problem is logged and falls back.
 */
void settings_resolve(const char *config_file, bool under_root, const char *cmdline,
		      enum source_policy pol, struct settings *s, struct source *src);

const char *source_status_name(enum source_status st);

/*
 * The pending record, /run/gpuvm/pending: while it exists, GPUs are held and `gpuvm apply
 * --resume` decides. Write it with the devices held (addresses, up to SOURCE_HELD_MAX).
 */
int pending_write(const struct source *src, const struct pci_addr *held, size_t n);
int pending_remove(void);

#endif
