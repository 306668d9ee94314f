/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_KMOD_H
#define GPUVM_KMOD_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Kernel modules, the way modprobe handles them: dependencies, softdeps, modprobe.d
 * options, blacklists for aliases, compressed modules. The only user of libkmod.
 * dirname: the module directory (NULL: /lib/modules/`uname -r`, or /usr/lib/modules);
 * given as ROOT/lib/modules/KVER (--root), modprobe.d is read under ROOT, not the host's.
 */
int mod_init(const char *dirname);
void mod_fini(void);

/*
 * Load a module by name or alias with its dependencies. 0 when loaded now, already
 * loaded or built in (*loaded tells which: 1 loaded now, 0 nothing to do). On failure,
 * -errno and a message naming the module and the path tried in msg.
 */
int mod_load(const char *name, int *loaded, char *msg, size_t size);

enum mod_state {
	MOD_MISSING,
	MOD_AVAILABLE,
	MOD_BUILTIN,
	MOD_LOADED
};

/*
 * Is a module there for this kernel? live: also ask the running kernel whether it is
 * loaded (never under --root, where /sys/module is not the tree's), also one the module
 * directory has no file of (loaded from a container).
 */
enum mod_state mod_state(const char *name, bool live);
const char *mod_dir(void);

/* The vfio variant driver that modules.alias names for a device's modalias. */
int mod_vfio_variant(const char *modalias, char *name, size_t size);

#endif
