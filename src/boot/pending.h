/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_PENDING_H
#define GPUVM_PENDING_H

#include <stddef.h>

#include "pci.h"
#include "source.h"

/*
 * The pending record, /run/gpuvm/pending: while it exists, GPUs are held and `gpuvm apply
 * --resume` decides. Write it with the devices held (addresses, up to SOURCE_HELD_MAX).
 */
int pending_write(const struct source *src, const struct pci_addr *held, size_t n);
int pending_remove(void);
/* 0 with the deadline and the held devices in src (src->pending set), -ENOENT, -EINVAL. */
int pending_read(struct source *src);

/*
 * The root's record, /run/gpuvm/root-pending: the boot's first call ran without config=,
 * and its last call (apply --resume --sysroot DIR) decides from the root's config, or
 * applies it over what the command line did. Written with the devices held, if any, and
 * first_result: the first call's result when it applied the command line's mode (else NULL).
 */
#define ROOT_PENDING_PATH "run/gpuvm/root-pending"
int root_pending_write(const struct pci_addr *held, size_t n, const char *first_result);
int root_pending_remove(void);
/* What the first call held, into src (as pending_read; no deadline needed). */
int root_pending_read(struct source *src);

#endif
