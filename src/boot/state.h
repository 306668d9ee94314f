/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_STATE_H
#define GPUVM_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include "report.h"

#define STATE_PATH "run/gpuvm/state.json" /* under the root */
/* The boot's own record: the state file of its last boot call, which nothing else writes. */
#define BOOT_STATE_PATH "run/gpuvm/boot.json"

/* The last state file, valid JSON, NUL-terminated, for the caller to free; NULL when none. */
char *state_read(void);
/*
 * Write the report as the state file (and, for a boot call, boot.json), then as the metrics
 * file (metrics.h), each atomically; a failure is logged, never fatal.
 */
void state_write(struct report *rep);
/* The string at key a (and b inside it) of a state file's text; false when not one. */
bool state_string(const char *state, const char *a, const char *b, char *buf, size_t size);
/* A top-level string of the last state file ("mode", "result"). */
bool state_top(const char *key, char *buf, size_t size);
/*
 * The same, with why not: 0; -ENOENT when there is no state file (or none that is JSON,
 * or no memory to read it) or no such key; -EINVAL when the value is not a string (null);
 * -E2BIG when it does not fit in size.
 */
int state_top_get(const char *key, char *buf, size_t size);

#endif
