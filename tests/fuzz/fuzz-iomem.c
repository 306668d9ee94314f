// SPDX-License-Identifier: MIT
/*
 * /proc/iomem (iomem_framebuffers) and a PCI function's resource attribute
 * (resource_mem_bars), on the same text.
 *
 * Invariants: never more than max entries, never a write past them (exact buffers);
 * a smaller max gives a prefix of what a larger one gives; every framebuffer found is
 * named as the kernel names one and spans start <= end; every line in the kernel's own
 * format (indented "%08llx-%08llx : NAME") that names a framebuffer is found; BARs are
 * numbered 0-5 in increasing order, each a memory range with start < end, and each
 * comes from one line of the attribute, not from pieces of two.
 */
#include <ctype.h>

#include "fuzz.h"
#include "iomem.h"
#include "util.h"

#define FB_MAX 64
#define IORESOURCE_MEM 0x200

static const char *const fb_names[] = { "BOOTFB", "efifb", "simple-framebuffer", "vesafb" };

static bool is_fb_name(const char *s)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fb_names); i++)
		if (streq(s, fb_names[i]))
			return true;
	return false;
}

/* A run of 1-16 lowercase hex digits, as the kernel prints addresses. */
static size_t hex_run(const char *s, size_t n, unsigned long long *v)
{
	size_t i = 0;

	*v = 0;
	while (i < n && i < 17 && (isdigit((unsigned char)s[i]) || (s[i] >= 'a' && s[i] <= 'f'))) {
		*v = *v * 16 +
			(unsigned long long)(isdigit((unsigned char)s[i]) ? s[i] - '0' :
									    s[i] - 'a' + 10);
		i++;
	}
	return i >= 1 && i <= 16 ? i : 0;
}

/* Framebuffer lines in the kernel's format; such a line must be found. */
static size_t kernel_fb_lines(const char *text)
{
	const char *p = text;
	size_t count = 0;

	while (*p) {
		size_t len = strcspn(p, "\n"), i = 0, k;
		unsigned long long a, b;

		while (i < len && p[i] == ' ')
			i++;
		k = hex_run(p + i, len - i, &a);
		if (len < 160 && k && p[i + k] == '-') {
			i += k + 1;
			k = hex_run(p + i, len - i, &b);
			if (k && a <= b && len - i - k > 3 && memcmp(p + i + k, " : ", 3) == 0) {
				char name[160];

				memcpy(name, p + i + k + 3, len - i - k - 3);
				name[len - i - k - 3] = '\0';
				count += is_fb_name(name);
			}
		}
		p += len + (p[len] ? 1 : 0);
	}
	return count;
}

static void check_iomem(const char *text)
{
	struct mem_range *all = calloc(FB_MAX, sizeof(*all));
	size_t n = iomem_framebuffers(text, all, FB_MAX), max, i, m;

	if (!all)
		abort();
	fuzz_assert(n <= FB_MAX, "%zu framebuffers", n);
	for (i = 0; i < n; i++) {
		fuzz_assert(memchr(all[i].name, '\0', sizeof(all[i].name)) && is_fb_name(all[i].name),
			    "framebuffer %zu named '%.32s'", i, all[i].name);
		fuzz_assert(all[i].start <= all[i].end, "framebuffer %zu: %llx-%llx", i,
			    (unsigned long long)all[i].start, (unsigned long long)all[i].end);
	}
	if (n < FB_MAX)
		fuzz_assert(n >= kernel_fb_lines(text), "%zu framebuffers found, %zu in the text",
			    n, kernel_fb_lines(text));
	for (max = 0; max <= 4; max++) {
		struct mem_range *out = malloc(max * sizeof(*out) + 1); /* exact for ASan */

		if (!out)
			abort();
		m = iomem_framebuffers(text, out, max);
		fuzz_assert(m <= max && m == (n < max ? n : max),
			    "%zu found for max %zu, %zu in all", m, max, n);
		for (i = 0; i < m; i++)
			fuzz_assert(out[i].start == all[i].start && out[i].end == all[i].end &&
					    streq(out[i].name, all[i].name),
				    "max %zu: entry %zu differs", max, i);
		free(out);
	}
	free(all);
}

/* Do these values come from one "START END FLAGS" line, whole or cut at cut bytes? */
static bool line_has_bar(const char *p, size_t len, size_t cut, unsigned long long a,
			 unsigned long long b)
{
	unsigned long long x, y, f;
	char *line = malloc(len + 1);
	bool ok;

	if (!line)
		abort();
	memcpy(line, p, len);
	line[len < cut ? len : cut] = '\0';
	ok = sscanf(line, "%llx %llx %llx", &x, &y, &f) == 3 && x == a && y == b &&
		(f & IORESOURCE_MEM);
	free(line);
	return ok;
}

/*
 * Is there one line that holds the BAR? The parser may read only the start of an overlong
 * line (the kernel writes 56 bytes a line): 127 bytes is what it reads now.
 */
static bool bar_on_one_line(const char *text, unsigned long long a, unsigned long long b)
{
	const char *p = text;

	while (*p) {
		size_t len = strcspn(p, "\n");

		if (line_has_bar(p, len, len, a, b) || line_has_bar(p, len, 127, a, b))
			return true;
		p += len + (p[len] ? 1 : 0);
	}
	return false;
}

static void check_resource(const char *text)
{
	struct mem_range all[6];
	size_t n = resource_mem_bars(text, all, ARRAY_SIZE(all)), i, max, m;
	int last = -1;

	fuzz_assert(n <= 6, "%zu BARs", n);
	for (i = 0; i < n; i++) {
		int bar;

		fuzz_assert(sscanf(all[i].name, "BAR%d", &bar) == 1 && bar > last && bar <= 5,
			    "BAR %zu named '%.32s'", i, all[i].name);
		last = bar;
		fuzz_assert(all[i].start < all[i].end, "BAR%d: %llx-%llx", bar,
			    (unsigned long long)all[i].start, (unsigned long long)all[i].end);
		fuzz_assert(bar_on_one_line(text, all[i].start, all[i].end),
			    "BAR%d %llx-%llx is not on one line of the attribute", bar,
			    (unsigned long long)all[i].start, (unsigned long long)all[i].end);
	}
	for (max = 0; max <= 6; max += 2) {
		struct mem_range *out = malloc(max * sizeof(*out) + 1);

		if (!out)
			abort();
		m = resource_mem_bars(text, out, max);
		fuzz_assert(m == (n < max ? n : max), "%zu BARs for max %zu, %zu in all", m, max, n);
		free(out);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);

	check_iomem(text);
	check_resource(text);
	free(text);
	return 0;
}
