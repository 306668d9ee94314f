// SPDX-License-Identifier: MIT
/*
 * Which vGPU method an NVIDIA GPU has and whether a vGPU release supports it, told by the
 * chip code that starts its pci.ids name ("GA100 [A100 PCIe 80GB]"). Pure.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "util.h"
#include "vgpu.h"

/*
 * The chip code's letters (and leading digits) to the architecture. Source: the chip codes
 * of pci.ids (pci-ids.ucw.cz, the 10de block). vGPU began with Kepler (GRID K1 and K2).
 * GN20 and GN21 are the notebook codes of Ampere and Ada parts.
 */
static const struct chip {
	const char *letters, *digits;
	enum gpu_arch arch;
} chips[] = {
	{ "GB", "", ARCH_BLACKWELL },	{ "GH", "", ARCH_HOPPER },
	{ "AD", "", ARCH_ADA },		{ "GN", "21", ARCH_ADA },
	{ "GA", "", ARCH_AMPERE },	{ "GN", "20", ARCH_AMPERE },
	{ "TU", "", ARCH_TURING },	{ "GV", "", ARCH_VOLTA },
	{ "GP", "", ARCH_PASCAL },	{ "GM", "", ARCH_MAXWELL },
	{ "GK", "", ARCH_KEPLER },	{ "GF", "", ARCH_PRE_KEPLER },
	{ "GT", "", ARCH_PRE_KEPLER },	{ "G", "", ARCH_PRE_KEPLER },
	{ "NV", "", ARCH_PRE_KEPLER },	{ "C", "", ARCH_PRE_KEPLER },
	{ "MCP", "", ARCH_PRE_KEPLER },
};

/*
 * The support matrix: architecture x vGPU release x kernel -> how the host makes vGPUs. The
 * first row whose architectures hold and whose release and kernel the host meets decides
 * (0: any). A row that the host might meet but cannot tell (release or kernel unknown)
 * makes the answer unknown. Sources:
 * - NVIDIA's Virtual GPU Software User Guide (Linux with KVM): vGPUs as mediated devices of
 *   the GPU before Ampere; from Ampere on (SR-IOV) on the VFs that sriov-manage enables;
 *   from vGPU 17 on, on Linux kernel 6.8 and later (Ubuntu 24.04), GPUs of Ada, Hopper and
 *   later take the "vendor-specific VFIO framework": no mdev, nvidia.ko is the VFIO driver
 *   of each VF and a vGPU type is chosen in its nvidia/current_vgpu_type
 *   (creatable_vgpu_types lists them). "A vendor-specific VFIO framework does not support
 *   the mediated VFIO mdev driver framework."
 * - Ampere (A100, A30, A10, A16, A40) keeps mediated devices on its VFs.
 * - The GPU Operator's vGPU stack (NVIDIA/gpu-operator, vgpu-device-manager, the sandbox
 *   device plugin) creates and advertises mediated devices only: VGPU_FW_VENDOR_VFIO has no
 *   operator support yet (check says so).
 */
static const struct fw_row {
	enum gpu_arch from, to;
	int release;	    /* this vGPU release or later, 0 any */
	int kmajor, kminor; /* this kernel or later, 0 any */
	enum vgpu_framework fw;
} matrix[] = {
	{ ARCH_PRE_KEPLER, ARCH_PRE_KEPLER, 0, 0, 0, VGPU_FW_UNSUPPORTED },
	{ ARCH_KEPLER, ARCH_TURING, 0, 0, 0, VGPU_FW_MDEV },
	{ ARCH_AMPERE, ARCH_AMPERE, 0, 0, 0, VGPU_FW_MDEV_VF },
	{ ARCH_ADA, ARCH_BLACKWELL, 17, 6, 8, VGPU_FW_VENDOR_VFIO },
	{ ARCH_ADA, ARCH_BLACKWELL, 0, 0, 0, VGPU_FW_MDEV_VF },
};

/* 1 the host meets the row, 0 it does not, -1 it cannot be told. */
static int row_meets(const struct fw_row *r, const struct vgpu_host *h)
{
	bool unknown = false;

	if (r->kmajor) {
		if (!h->kmajor)
			unknown = true;
		else if (h->kmajor < r->kmajor || (h->kmajor == r->kmajor && h->kminor < r->kminor))
			return 0;
	}
	if (r->release) {
		if (!h->release)
			unknown = true;
		else if (h->release < r->release)
			return 0;
	}
	return unknown ? -1 : 1;
}

enum vgpu_framework vgpu_framework(enum gpu_arch a, const struct vgpu_host *h)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(matrix); i++) {
		const struct fw_row *r = &matrix[i];
		int m;

		if (a < r->from || a > r->to)
			continue;
		m = row_meets(r, h);
		if (m < 0)
			return VGPU_FW_UNKNOWN;
		if (m > 0)
			return r->fw;
	}
	return VGPU_FW_UNKNOWN;
}

/* The architecture's method whatever the host: VFs where the matrix has them. */
static enum vgpu_method arch_method(enum gpu_arch a)
{
	static const struct vgpu_host any_old = { 0 }, any_new = { 99, 99, 0 };
	enum vgpu_framework o = vgpu_framework(a, &any_old), n = vgpu_framework(a, &any_new);

	if (n == VGPU_FW_MDEV_VF || n == VGPU_FW_VENDOR_VFIO || o == VGPU_FW_MDEV_VF)
		return VGPU_SRIOV;
	return n == VGPU_FW_MDEV ? VGPU_MDEV : VGPU_NONE;
}

const char *vgpu_framework_name(enum vgpu_framework f)
{
	static const char *const names[] = {
		[VGPU_FW_UNKNOWN] = "unknown",
		[VGPU_FW_UNSUPPORTED] = "unsupported",
		[VGPU_FW_MDEV] = "mdev",
		[VGPU_FW_MDEV_VF] = "mdev-vf",
		[VGPU_FW_VENDOR_VFIO] = "vendor-vfio",
	};

	return (size_t)f < ARRAY_SIZE(names) ? names[f] : "unknown";
}

const char *vgpu_framework_words(enum vgpu_framework f)
{
	static const char *const words[] = {
		[VGPU_FW_UNKNOWN] = "cannot be told",
		[VGPU_FW_UNSUPPORTED] = "no vGPU",
		[VGPU_FW_MDEV] = "mediated devices on the GPU",
		[VGPU_FW_MDEV_VF] = "mediated devices on its SR-IOV VFs",
		[VGPU_FW_VENDOR_VFIO] = "NVIDIA's vendor-specific VFIO on its SR-IOV VFs, no mdev",
	};

	return (size_t)f < ARRAY_SIZE(words) ? words[f] : "cannot be told";
}

/* Leading digits of s into *v (at most 5): the rest, or NULL when none. */
static const char *number(const char *s, int *v)
{
	int n = 0, k = 0;

	while (isdigit((unsigned char)*s) && k < 5) {
		n = n * 10 + (*s++ - '0');
		k++;
	}
	if (!k || isdigit((unsigned char)*s))
		return NULL;
	*v = n;
	return s;
}

int vgpu_kernel_parse(const char *kver, int *major, int *minor)
{
	const char *p = kver ? number(kver, major) : NULL;

	if (!p || *p != '.' || !number(p + 1, minor) || *major == 0)
		return -EINVAL;
	return 0;
}

int vgpu_release_parse(const char *s, int *release)
{
	const char *p = number(s, release);
	int minor;

	if (!p || *release == 0)
		return -EINVAL;
	if (*p == '.' && (p = number(p + 1, &minor)) == NULL)
		return -EINVAL;
	return *p ? -EINVAL : 0;
}

/*
 * The vGPU Manager's driver branch to its vGPU release (NVIDIA's release notes, "NVIDIA vGPU
 * Software Driver Versions": 13 is R470, 14 R510, 15 R525, 16 R535, 17 R550, 18 R570).
 */
static const struct {
	int branch, release;
} branches[] = { { 470, 13 }, { 510, 14 }, { 525, 15 }, { 535, 16 }, { 550, 17 }, { 570, 18 } };

int vgpu_release_of_driver(const char *version, int *release)
{
	const char *p = version;
	int major;
	size_t i;

	while (p && (*p == ' ' || *p == '\t'))
		p++;
	p = p ? number(p, &major) : NULL;
	if (!p || *p != '.' || major < branches[0].branch)
		return -EINVAL;
	for (i = ARRAY_SIZE(branches); i-- > 0;)
		if (major >= branches[i].branch)
			break;
	*release = branches[i].release;
	return 0;
}

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
	m->method = arch_method(m->arch);
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
