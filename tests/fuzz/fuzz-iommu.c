// SPDX-License-Identifier: MIT
/*
 * /proc/cpuinfo (cpu_vendor_from_cpuinfo) and the IOMMU parameters of a command line
 * (iommu_params_parse, iommu_params_explain, iommu_mode_params), on the same text.
 *
 * Invariants: the vendor is one of the enum and round-trips through its name; the
 * vendor of the first vendor_id line decides, whatever follows; each parameter is in its
 * range; the explanations never exceed max nor write past it; the parameters printed
 * for a mode are themselves a command line that asks for that mode.
 */
#include "cmdline.h"
#include "fuzz.h"
#include "iommu.h"
#include "util.h"

#define CPUINFO_READ 4096 /* iommu_read's buffer */
#define EXPLAIN_MAX 16

/* Is word on the rest of the line that starts at at? */
static bool on_line(const char *at, const char *word)
{
	size_t len = strcspn(at, "\n");

	return memmem(at, len, word, strlen(word)) != NULL;
}

static void check_cpuinfo(const char *text)
{
	enum cpu_vendor v = cpu_vendor_from_cpuinfo(text), back;
	const char *vid = strstr(text, "vendor_id");

	fuzz_assert(v <= CPU_ARM, "vendor %d", (int)v);
	fuzz_assert(cpu_vendor_name(v) != NULL, "no name for vendor %d", (int)v);
	if (v != CPU_UNKNOWN)
		fuzz_assert(cpu_vendor_parse(cpu_vendor_name(v), &back) == 0 && back == v,
			    "vendor %s does not round-trip", cpu_vendor_name(v));
	/* The first vendor_id decides; only a text without one can be ARM's. */
	if (v == CPU_ARM)
		fuzz_assert(!vid && strstr(text, "CPU implementer"), "arm without its line");
	if (v == CPU_INTEL)
		fuzz_assert(vid && on_line(vid, "GenuineIntel"), "intel without GenuineIntel");
	if (v == CPU_AMD)
		fuzz_assert(vid && (on_line(vid, "AuthenticAMD") || on_line(vid, "HygonGenuine")),
			    "amd without its vendor string");
	if (vid && strncmp(vid, "vendor_id\t: GenuineIntel", 24) == 0)
		fuzz_assert(v == CPU_INTEL, "'vendor_id\t: GenuineIntel' is not intel");
	if (vid && strncmp(vid, "vendor_id\t: AuthenticAMD", 24) == 0)
		fuzz_assert(v == CPU_AMD, "'vendor_id\t: AuthenticAMD' is not amd");
}

static void check_params(const char *text)
{
	const struct iommu_params *p;
	struct iommu_params params;
	enum cpu_vendor v;
	size_t max, n, i;

	memset(&params, 0x5a, sizeof(params));
	iommu_params_parse(text, &params);
	p = &params;
	fuzz_assert(p->intel_iommu >= -1 && p->intel_iommu <= 1, "intel_iommu %d", p->intel_iommu);
	fuzz_assert(p->amd_iommu_off >= -1 && p->amd_iommu_off <= 1, "amd_iommu_off %d",
		    p->amd_iommu_off);
	fuzz_assert(p->iommu_pt >= -1 && p->iommu_pt <= 1, "iommu_pt %d", p->iommu_pt);
	fuzz_assert(p->passthrough >= -1 && p->passthrough <= 1, "passthrough %d", p->passthrough);
	for (v = CPU_UNKNOWN; v <= CPU_ARM; v++) {
		for (max = 0; max <= EXPLAIN_MAX; max += 3) {
			const char **out = malloc(max * sizeof(*out) + 1); /* exact for ASan */

			if (!out)
				abort();
			n = iommu_params_explain(p, v, out, max);
			fuzz_assert(n <= max, "%zu explanations for max %zu", n, max);
			for (i = 0; i < n; i++)
				fuzz_assert(out[i] && out[i][0], "explanation %zu empty", i);
			free(out);
		}
	}
}

struct seen {
	const char *want;
	bool found;
};

static int find_mode(const char *key, const char *value, void *data)
{
	struct seen *s = data;

	if (streq(key, "gpuvm.mode") && value && streq(value, s->want))
		s->found = true;
	return 0;
}

static void check_mode_params(void)
{
	static const size_t sizes[] = { 1, 2, 16, 40 };
	enum cpu_vendor v;
	int m;
	size_t i;

	for (m = MODE_CONTAINER; m <= MODE_VM_VGPU; m++) {
		for (v = CPU_UNKNOWN; v <= CPU_ARM; v++) {
			struct seen s = { .want = mode_name((enum mode)m) };
			struct iommu_params p;
			char buf[256];

			for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
				char *b = malloc(sizes[i]);

				if (!b)
					abort();
				iommu_mode_params((enum mode)m, v, b, sizes[i]);
				fuzz_assert(memchr(b, '\0', sizes[i]), "mode params unterminated");
				free(b);
			}
			iommu_mode_params((enum mode)m, v, buf, sizeof(buf));
			cmdline_parse(buf, find_mode, &s);
			fuzz_assert(s.found, "'%s' does not ask for %s", buf, s.want);
			iommu_params_parse(buf, &p);
			fuzz_assert(p.intel_iommu != 0 && p.amd_iommu_off != 1 && !p.iommu_off,
				    "'%s' turns the IOMMU off", buf);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool once;
	char *text = fuzz_cstr(data, size);

	if (!once) {
		check_mode_params();
		once = true;
	}
	check_cpuinfo(text);
	check_params(text);
	if (size >= CPUINFO_READ) {
		text[CPUINFO_READ - 1] = '\0'; /* what iommu_read's one read gives */
		check_cpuinfo(text);
	}
	free(text);
	return 0;
}
