/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_CMDLINE_H
#define GPUVM_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Called for each word of a kernel command line, in order. value is NULL for a word
 * without '='. Quotes are already removed. A non-zero return stops the walk.
 */
typedef int (*cmdline_cb)(const char *key, const char *value, void *data);

/* Split a command line as the kernel and systemd do: whitespace, double quotes. */
int cmdline_parse(const char *line, cmdline_cb cb, void *data);

/*
 * If key is "PREFIX.NAME" or "rd.PREFIX.NAME", store NAME with '-' turned into '_'
 * in out and return true.
 */
bool cmdline_key(const char *key, const char *prefix, char *out, size_t size);

#endif
