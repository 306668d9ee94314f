/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_CONFSOURCE_H
#define GPUVM_CONFSOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "settings.h"
#include "source.h"

enum source_policy {
	SRC_NO_DISK, /* config= is not followed: the file's config (cmdline, config) */
	SRC_LOOK,    /* one look; absent means fall back (plan, status, apply) */
	SRC_DEFER,   /* apply --defer: the boot's first call; absent means wait */
	SRC_RESUME,  /* apply --resume: the wait the pending records describe */
};

/*
 * Settings for a command: config_file (--config; NULL: /etc/gpuvm/gpuvm.conf), the command
 * line, and config='s disk as pol says (under_root: --root, which mounts none). At boot
 * (SRC_DEFER, SRC_RESUME) the initramfs's own config is not read; sysroot (--sysroot: the
 * real root, mounted) gives the last call the host's. Never fails the boot: every problem is
 * logged and falls back.
 */
void source_resolve(const char *config_file, bool under_root, const char *cmdline,
		    enum source_policy pol, const char *sysroot, struct settings *s,
		    struct source *src);

const char *source_status_name(enum source_status st);
const char *root_config_name(enum root_config rc);

#endif
