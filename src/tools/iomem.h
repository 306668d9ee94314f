/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_IOMEM_H
#define GPUVM_IOMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mem_range {
	uint64_t start, end; /* inclusive, as the kernel prints them */
	char name[32];
};

/*
 * Firmware framebuffer regions (BOOTFB, efifb, simple-framebuffer, vesafb) in /proc/iomem
 * text, at any nesting depth. Returns how many were stored (at most max).
 */
size_t iomem_framebuffers(const char *iomem, struct mem_range *out, size_t max);
/* Whether name (len bytes, no NUL needed) is one of those regions' names. */
bool iomem_is_framebuffer(const char *name, size_t len);

/*
 * The memory BARs (0-5) of a PCI function's resource attribute: "0xSTART 0xEND 0xFLAGS"
 * lines; unused ones are zero. name is "BARn". Returns how many were stored.
 */
size_t resource_mem_bars(const char *resource, struct mem_range *out, size_t max);

#endif
