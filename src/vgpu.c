// SPDX-License-Identifier: MIT
/*
 * Which vGPU method an NVIDIA GPU has and whether a vGPU release supports it, told by the
 * chip code that starts its pci.ids name ("GA100 [A100 PCIe 80GB]"). Pure.
 */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "util.h"
#include "vgpu.h"

/*
 * The chip code's letters (and leading digits) to the architecture, and the vGPU method of
 * each. Sources: the chip codes of pci.ids (pci-ids.ucw.cz, the 10de block), and NVIDIA's
 * per-architecture vGPU method as the guide of the project's background gives it (mediated
 * devices before Ampere, SR-IOV VFs from Ampere on; NVIDIA's vGPU user guide, "Virtual GPU
 * Manager on KVM"). vGPU began with Kepler (GRID K1 and K2). GN20 and GN21 are the notebook
 * codes of Ampere and Ada parts.
 */
static const struct chip {
	const char *letters, *digits;
	enum gpu_arch arch;
	enum vgpu_method method;
} chips[] = {
	{ "GB", "", ARCH_BLACKWELL, VGPU_SRIOV },  { "GH", "", ARCH_HOPPER, VGPU_SRIOV },
	{ "AD", "", ARCH_ADA, VGPU_SRIOV },	   { "GN", "21", ARCH_ADA, VGPU_SRIOV },
	{ "GA", "", ARCH_AMPERE, VGPU_SRIOV },	   { "GN", "20", ARCH_AMPERE, VGPU_SRIOV },
	{ "TU", "", ARCH_TURING, VGPU_MDEV },	   { "GV", "", ARCH_VOLTA, VGPU_MDEV },
	{ "GP", "", ARCH_PASCAL, VGPU_MDEV },	   { "GM", "", ARCH_MAXWELL, VGPU_MDEV },
	{ "GK", "", ARCH_KEPLER, VGPU_MDEV },	   { "GF", "", ARCH_PRE_KEPLER, VGPU_NONE },
	{ "GT", "", ARCH_PRE_KEPLER, VGPU_NONE },  { "G", "", ARCH_PRE_KEPLER, VGPU_NONE },
	{ "NV", "", ARCH_PRE_KEPLER, VGPU_NONE },  { "C", "", ARCH_PRE_KEPLER, VGPU_NONE },
	{ "MCP", "", ARCH_PRE_KEPLER, VGPU_NONE },
};

/* Consumer parts, by a word of the name: no vGPU release supports them. */
static const char *const consumer[] = { "GeForce", "TITAN", "CMP" };

const char *gpu_arch_name(enum gpu_arch a)
{
	static const char *const names[] = {
		[ARCH_UNKNOWN] = "unknown",
		[ARCH_PRE_KEPLER] = "pre-Kepler",
		[ARCH_KEPLER] = "Kepler",
		[ARCH_MAXWELL] = "Maxwell",
		[ARCH_PASCAL] = "Pascal",
		[ARCH_VOLTA] = "Volta",
		[ARCH_TURING] = "Turing",
		[ARCH_AMPERE] = "Ampere",
		[ARCH_ADA] = "Ada",
		[ARCH_HOPPER] = "Hopper",
		[ARCH_BLACKWELL] = "Blackwell",
	};

	return (size_t)a < ARRAY_SIZE(names) ? names[a] : "unknown";
}

const char *vgpu_method_name(enum vgpu_method m)
{
	if (m == VGPU_SRIOV)
		return "sriov";
	return m == VGPU_MDEV ? "mdev" : NULL;
}

/* A word of name, whole and in any case. */
static bool has_word(const char *name, const char *word)
{
	size_t n = strlen(word);
	const char *p;

	for (p = name; *p; p++)
		if (strncasecmp(p, word, n) == 0 && (p == name || !isalnum((unsigned char)p[-1])) &&
		    !isalnum((unsigned char)p[n]))
			return true;
	return false;
}

void vgpu_classify(const char *name, struct gpu_model *m)
{
	char letters[8] = "", digits[8] = "", suffix[8] = "";
	const char *p = name;
	size_t i, n;

	m->arch = ARCH_UNKNOWN;
	m->support = VGPU_SUP_UNKNOWN;
	m->method = VGPU_NONE;
	m->why = "";
	m->name[0] = '\0';
	if (!name)
		return;
	while (*p == ' ' || *p == '\t')
		p++;
	strscpy(m->name, p, sizeof(m->name));
	rstrip(m->name);
	/* The chip code: letters, digits, a suffix of letters ("GK110BGL", "GH100[..."). */
	for (n = 0; isupper((unsigned char)*p) && n + 1 < sizeof(letters); p++)
		letters[n++] = *p;
	letters[n] = '\0';
	for (n = 0; isdigit((unsigned char)*p) && n + 1 < sizeof(digits); p++)
		digits[n++] = *p;
	digits[n] = '\0';
	for (n = 0; isupper((unsigned char)*p) && n + 1 < sizeof(suffix); p++)
		suffix[n++] = *p;
	suffix[n] = '\0';
	if (!digits[0])
		return;
	for (i = 0; i < ARRAY_SIZE(chips); i++)
		if (streq(letters, chips[i].letters) &&
		    strncmp(digits, chips[i].digits, strlen(chips[i].digits)) == 0)
			break;
	if (i == ARRAY_SIZE(chips))
		return;
	m->arch = chips[i].arch;
	m->method = chips[i].method;
	m->support = VGPU_SUP_NO;
	if (m->arch == ARCH_PRE_KEPLER) {
		m->why = "its architecture predates vGPU, which began with Kepler";
		return;
	}
	for (i = 0; i < ARRAY_SIZE(consumer); i++)
		if (has_word(name, consumer[i])) {
			m->why = "a GeForce, TITAN or CMP part: vGPU is for data-center and professional GPUs";
			return;
		}
	if (strchr(suffix, 'M')) {
		m->why = "a mobile part";
		return;
	}
	/* A professional chip (..GL), or a data-center die (GP100, GV100, GA100, GH100, GB100). */
	if (strstr(suffix, "GL") || streq(digits, "100"))
		m->support = VGPU_SUP_YES;
	else
		m->why = "neither a data-center (..100) nor a professional (..GL) chip";
}

const struct gpu_model *gpu_model_find(const struct gpu_models *ms, uint16_t vendor, uint16_t device)
{
	size_t i;

	if (!ms || vendor != 0x10de)
		return NULL;
	for (i = 0; i < ms->n; i++)
		if (ms->m[i].device == device)
			return &ms->m[i];
	return NULL;
}
