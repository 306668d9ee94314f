// SPDX-License-Identifier: MIT
/*
 * vgpu.c: the architecture, vGPU method and support of NVIDIA GPUs from their pci.ids
 * names: the spot checks (IDs and names as a real pci.ids has them), the odd names, and
 * every NVIDIA ID of a whole pci.ids.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "kvsnippet.h"
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

int main(void)
{
	spot();
	find();
	whole();
	return unit_done();
}
