// SPDX-License-Identifier: MIT
/* /proc/iomem and a device's resource attribute: where a firmware framebuffer sits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iomem.h"
#include "util.h"

#define IORESOURCE_MEM 0x00000200

static const char *const fb_names[] = { "BOOTFB", "efifb", "simple-framebuffer", "vesafb" };

bool iomem_is_framebuffer(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fb_names); i++)
		if (len == strlen(fb_names[i]) && !memcmp(name, fb_names[i], len))
			return true;
	return false;
}

static int parse_range(const char *s, uint64_t *start, uint64_t *end, const char **rest)
{
	char *e;

	*start = strtoull(s, &e, 16);
	if (e == s || *e != '-')
		return -1;
	s = e + 1;
	*end = strtoull(s, &e, 16);
	if (e == s || *end < *start)
		return -1;
	*rest = e;
	return 0;
}

size_t iomem_framebuffers(const char *iomem, struct mem_range *out, size_t max)
{
	const char *p = iomem;
	size_t n = 0;

	while (*p && n < max) {
		const char *nl = strchr(p, '\n'), *rest, *name;
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char line[160];
		uint64_t a, b;

		if (len < sizeof(line)) {
			memcpy(line, p, len);
			line[len] = '\0';
			name = line + strspn(line, " ");
			if (parse_range(name, &a, &b, &rest) == 0 && startswith(rest, " : ")) {
				rest += 3;
				if (iomem_is_framebuffer(rest, strlen(rest))) {
					out[n].start = a;
					out[n].end = b;
					strscpy(out[n].name, rest, sizeof(out[n].name));
					n++;
				}
			}
		}
		p += len + (nl ? 1 : 0);
	}
	return n;
}

size_t resource_mem_bars(const char *resource, struct mem_range *out, size_t max)
{
	const char *p = resource;
	size_t n = 0;
	int bar;

	for (bar = 0; bar < 6 && *p && n < max; bar++) {
		unsigned long long a, b, flags;
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char line[128], *e1, *e2, *e3;

		/* Each BAR is one line: parse a copy, so that no field comes from the next. */
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
		memcpy(line, p, len);
		line[len] = '\0';
		a = strtoull(line, &e1, 16);
		b = strtoull(e1, &e2, 16);
		flags = strtoull(e2, &e3, 16);
		if (e1 != line && e2 != e1 && e3 != e2 && (flags & IORESOURCE_MEM) && b > a) {
			out[n].start = a;
			out[n].end = b;
			snprintf(out[n].name, sizeof(out[n].name), "BAR%d", bar);
			n++;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	return n;
}
