// SPDX-License-Identifier: MIT
/*
 * vgpu.c: the architecture, vGPU method and support of NVIDIA GPUs from their pci.ids
 * names: the spot checks (IDs and names as a real pci.ids has them), the odd names, and
 * every NVIDIA ID of a whole pci.ids.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "pciids.h"
#include "vgpu.h"

static const char *sup(enum vgpu_support s)
{
	return s == VGPU_SUP_YES ? "yes" : s == VGPU_SUP_NO ? "no" : "unknown";
}

/* "arch method support" of a name. */
static const char *cls(const char *name)
{
	static char out[64];
	struct gpu_model m;
	const char *meth;

	vgpu_classify(name, &m);
	meth = vgpu_method_name(m.method);
	snprintf(out, sizeof(out), "%s %s %s", gpu_arch_name(m.arch), meth ? meth : "none",
		 sup(m.support));
	return out;
}

static void spot(void)
{
	/* As Debian 12's pci.ids (2023.04.10) names them. */
	CHECK_STR(cls("GV100GL [Tesla V100 PCIe 16GB]"), "Volta mdev yes", "1db4 V100");
	CHECK_STR(cls("GA100 [A100 PCIe 80GB]"), "Ampere sriov yes", "20b5 A100");
	CHECK_STR(cls("GH100[H100 SXM5 80GB]"), "Hopper sriov yes", "2330 H100, no blank");
	CHECK_STR(cls("GA102 [GeForce RTX 3090]"), "Ampere sriov no", "2204 RTX 3090");
	CHECK_STR(cls("TU104GL [Tesla T4]"), "Turing mdev yes", "1eb8 T4");
	CHECK_STR(cls("AD102GL [L40]"), "Ada sriov yes", "26b5 L40");
	CHECK_STR(cls("GA102GL [A40]"), "Ampere sriov yes", "2235 A40");
	CHECK_STR(cls("GM204GL [Tesla M60]"), "Maxwell mdev yes", "13f2 M60");
	CHECK_STR(cls("GP102GL [Tesla P40]"), "Pascal mdev yes", "1b38 P40");
	CHECK_STR(cls("GK104GL [GRID K2]"), "Kepler mdev yes", "11bf GRID K2");
	CHECK_STR(cls("TU104 [GeForce RTX 2080 Rev. A]"), "Turing mdev no", "1e87 RTX 2080");
	CHECK_STR(cls("AD102 [GeForce RTX 4090]"), "Ada sriov no", "2684 RTX 4090");
	CHECK_STR(cls("GV100 [TITAN V]"), "Volta mdev no", "1d81 TITAN V: a data-center die");
	CHECK_STR(cls("AD102 [RTX TITAN Ada]"), "Ada sriov no", "2681 TITAN Ada");
	CHECK_STR(cls("GA100 [CMP 170HX]"), "Ampere sriov no", "2082 CMP: mining");
	CHECK_STR(cls("GA107GLM [RTX A2000 Mobile]"), "Ampere sriov no", "25b8: mobile");
	CHECK_STR(cls("GA106 [RTX A2000]"), "Ampere sriov no", "2531: no GL, no 100");
	CHECK_STR(cls("GN20-P0-R-K2 [GeForce RTX 3050 6GB Laptop GPU]"), "Ampere sriov no",
		  "25ac: notebook code GN20");
	CHECK_STR(cls("GF100GL [Quadro 6000]"), "pre-Kepler none no", "Fermi");
	CHECK_STR(cls("G80GL [Tesla C870]"), "pre-Kepler none no", "G80");
	CHECK_STR(cls("GB202GL [RTX PRO 6000 Blackwell Server Edition]"), "Blackwell sriov yes",
		  "Blackwell, a newer pci.ids");
	CHECK_STR(cls("GH100"), "Hopper sriov yes", "2302: the chip alone");
	CHECK_STR(cls(NULL), "unknown none unknown", "no name");
	CHECK_STR(cls("High Definition Audio"), "unknown none unknown", "no chip code");
	CHECK_STR(cls("Tegra K1"), "unknown none unknown", "Tegra");
	CHECK_STR(cls(""), "unknown none unknown", "empty");
	CHECK_STR(cls("  GA100  "), "Ampere sriov yes", "blanks around");
}

static void find(void)
{
	struct gpu_model m[2] = { { .device = 0x20b5 }, { .device = 0x2204 } };
	struct gpu_models ms = { m, 2, NULL };

	CHECK(gpu_model_find(&ms, 0x10de, 0x2204) == &m[1], "found by ID");
	CHECK(gpu_model_find(&ms, 0x10df, 0x2204) == NULL, "NVIDIA's only");
	CHECK(gpu_model_find(&ms, 0x10de, 0x1234) == NULL, "absent");
	CHECK(gpu_model_find(NULL, 0x10de, 0x2204) == NULL, "no models");
}

/* Every NVIDIA device of a whole pci.ids ($PCIIDS, else the host's), through pciids_name. */
static void whole(void)
{
	const char *path;
	size_t len, count = 0, known = 0, yes = 0, bad = 0;
	char *ids, *p, name[200];

	ids = unit_pciids(&len, &path);
	if (!ids)
		return;
	for (p = strstr(ids, "\n10de"); p && (p = strchr(p + 1, '\n')) && p[1] != '\n';) {
		struct gpu_model m;
		unsigned dev;

		if (p[1] != '\t' || p[2] == '\t' || sscanf(p + 2, "%4x", &dev) != 1) {
			if (p[1] != '\t' && p[1] != '#')
				break;
			continue;
		}
		count++;
		if (pciids_name(ids, len, 0x10de, (uint16_t)dev, name, sizeof(name)) < 0) {
			bad++;
			continue;
		}
		vgpu_classify(name, &m);
		known += m.arch != ARCH_UNKNOWN;
		yes += m.support == VGPU_SUP_YES;
		/* An architecture has a method (or none, before Kepler); support follows. */
		if ((m.arch == ARCH_UNKNOWN) != (m.support == VGPU_SUP_UNKNOWN) ||
		    (m.support == VGPU_SUP_YES && m.method == VGPU_NONE)) {
			if (bad++ < 5)
				printf("#   %04x '%s': %s\n", dev, name, cls(name));
		}
	}
	printf("# %s: %zu NVIDIA IDs, %zu with an architecture, %zu vGPU-capable\n", path, count,
	       known, yes);
	CHECK(count > 1000 && bad == 0 && known > count * 3 / 4 && yes > 50,
	      "%s: every NVIDIA ID classified", path);
	free(ids);
}

/* The support matrix: each cell of doc/vgpu.md's table, and what cannot be told. */
static void matrix(void)
{
	static const struct {
		enum gpu_arch a;
		struct vgpu_host h;
		enum vgpu_framework want;
		const char *what;
	} cells[] = {
		{ ARCH_PRE_KEPLER, { 17, 6, 8 }, VGPU_FW_UNSUPPORTED, "Fermi" },
		{ ARCH_KEPLER, { 0, 0, 0 }, VGPU_FW_MDEV, "Kepler, nothing known" },
		{ ARCH_TURING, { 17, 6, 8 }, VGPU_FW_MDEV, "T4 on 17, 6.8" },
		{ ARCH_AMPERE, { 17, 6, 8 }, VGPU_FW_MDEV_VF, "A100 on 17, 6.8" },
		{ ARCH_AMPERE, { 0, 0, 0 }, VGPU_FW_MDEV_VF, "A10, nothing known" },
		{ ARCH_HOPPER, { 17, 6, 8 }, VGPU_FW_VENDOR_VFIO, "H100 on 17, 6.8" },
		{ ARCH_HOPPER, { 18, 6, 11 }, VGPU_FW_VENDOR_VFIO, "H200 on 18, 6.11" },
		{ ARCH_ADA, { 17, 7, 0 }, VGPU_FW_VENDOR_VFIO, "L40S on 17, 7.0" },
		{ ARCH_BLACKWELL, { 19, 6, 8 }, VGPU_FW_VENDOR_VFIO, "Blackwell on 19, 6.8" },
		{ ARCH_ADA, { 17, 6, 7 }, VGPU_FW_MDEV_VF, "L40S on 17, 6.7" },
		{ ARCH_HOPPER, { 16, 6, 8 }, VGPU_FW_MDEV_VF, "H100 on 16, 6.8" },
		{ ARCH_HOPPER, { 0, 6, 1 }, VGPU_FW_MDEV_VF, "an old kernel: any release" },
		{ ARCH_HOPPER, { 16, 0, 0 }, VGPU_FW_MDEV_VF, "an old release: any kernel" },
		{ ARCH_HOPPER, { 0, 6, 8 }, VGPU_FW_UNKNOWN, "6.8, release unknown" },
		{ ARCH_ADA, { 17, 0, 0 }, VGPU_FW_UNKNOWN, "17, kernel unknown" },
		{ ARCH_UNKNOWN, { 17, 6, 8 }, VGPU_FW_UNKNOWN, "architecture unknown" },
	};
	struct gpu_model m;
	size_t i;
	int a, b;

	for (i = 0; i < sizeof(cells) / sizeof(cells[0]); i++)
		CHECK_STR(vgpu_framework_name(vgpu_framework(cells[i].a, &cells[i].h)),
			  vgpu_framework_name(cells[i].want), "matrix: %s", cells[i].what);
	vgpu_classify("GA100 [A100 PCIe 80GB]", &m);
	CHECK(m.method == VGPU_SRIOV, "Ampere: VFs");
	vgpu_classify("GH100 [H100 SXM5 80GB]", &m);
	CHECK(m.method == VGPU_SRIOV, "Hopper: VFs");
	vgpu_classify("TU104GL [Tesla T4]", &m);
	CHECK(m.method == VGPU_MDEV, "Turing: mdev");

	CHECK(vgpu_kernel_parse("6.8.0-31-generic", &a, &b) == 0 && a == 6 && b == 8, "6.8.0-31");
	CHECK(vgpu_kernel_parse("5.14.0-427.el9.x86_64", &a, &b) == 0 && a == 5 && b == 14, "el9");
	CHECK(vgpu_kernel_parse("unknown", &a, &b) == -EINVAL, "unknown kernel");
	CHECK(vgpu_kernel_parse("6", &a, &b) == -EINVAL, "no minor");
	CHECK(vgpu_release_of_driver("550.54.10\n", &a) == 0 && a == 17, "R550 is 17");
	CHECK(vgpu_release_of_driver("535.183.04", &a) == 0 && a == 16, "R535 is 16");
	CHECK(vgpu_release_of_driver("580.95.02", &a) == 0 && a == 18, "past the table: its last");
	CHECK(vgpu_release_of_driver("390.157", &a) == -EINVAL, "before the table");
	CHECK(vgpu_release_of_driver("x", &a) == -EINVAL, "no version");
	CHECK(vgpu_release_parse("17", &a) == 0 && a == 17, "17");
	CHECK(vgpu_release_parse("17.4", &a) == 0 && a == 17, "17.4");
	CHECK(vgpu_release_parse("17.", &a) == -EINVAL, "17.");
	CHECK(vgpu_release_parse("0", &a) == -EINVAL, "0");
	CHECK(vgpu_release_parse("v17", &a) == -EINVAL, "v17");
}

int main(void)
{
	matrix();
	spot();
	find();
	whole();
	return unit_done();
}
