// SPDX-License-Identifier: MIT
/*
 * src/boot/kmod.c against the real libkmod and a module tree whose modules.alias carries the
 * alias lines of nvgrace_gpu_vfio_pci, the vfio variant driver for Grace Hopper and Grace
 * Blackwell. The lines are what the kernel's file2alias makes of the driver's
 * MODULE_DEVICE_TABLE (drivers/vfio/pci/nvgrace-gpu/main.c, Linux 6.18: GH200 120GB 0x2342
 * and 480GB 0x2345 since 6.10, GH200 SKU 0x2348 since 6.13, GB200 0x2941, GB300 0x31C2 since
 * 6.18; PCI_DRIVER_OVERRIDE_DEVICE_VFIO gives the "vfio_pci:" prefix and the wildcard subsystem
 * and class), and vfio_pci's own catch-all. No Debian kernel builds the driver (bookworm's
 * 6.1.0-57-arm64 predates it; trixie's 6.12.117 and sid's 7.2.13 arm64 kernels have
 * CONFIG_NVGRACE_GPU_VFIO_PCI unset), so the tree is made here: modules whose .modinfo carries
 * those aliases (tests/fixture/lib.sh's fx_kmod) and depmod's real indexes (fx_depmod).
 * The test first checks that depmod wrote exactly those lines into modules.alias.
 */
#include <stdlib.h>
#include <unistd.h>

#include "kmod.h"
#include "unit.h"

#define KVER "6.1.0-99-arm64"
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

static const char *const nvgrace_ids[] = { "2342", "2345", "2348", "2941", "31C2" };

static char tmp[] = "/tmp/gpuvm-test-kmod.XXXXXX";

/* Run a shell command line; 0 when it exited 0. */
static int sh(const char *cmd)
{
	int r = system(cmd);

	return r == 0 ? 0 : -1;
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;

	if (!f)
		return NULL;
	buf = calloc(1, 1 << 20);
	if (buf) {
		n = fread(buf, 1, (1 << 20) - 1, f);
		buf[n] = '\0';
	}
	fclose(f);
	return buf;
}

static bool build_tree(const char *top, bool variant)
{
	char cmd[2048];
	size_t i, n;

	n = (size_t)snprintf(cmd, sizeof(cmd),
			     ". '%s/tests/fixture/lib.sh' && R='%s' && "
			     "fx_init \"$R\" --cpu arm --iommu smmu --kver " KVER " && "
			     "fx_kmod \"$R\" vfio_pci 'alias=vfio_pci:v*d*sv*sd*bc*sc*i*'",
			     top, tmp);
	if (variant) {
		n += (size_t)snprintf(cmd + n, sizeof(cmd) - n,
				      " && fx_kmod \"$R\" nvgrace_gpu_vfio_pci");
		for (i = 0; i < ARRAY_SIZE(nvgrace_ids); i++)
			n += (size_t)snprintf(cmd + n, sizeof(cmd) - n,
					      " 'alias=vfio_pci:v000010DEd0000%ssv*sd*bc*sc*i*'",
					      nvgrace_ids[i]);
	}
	snprintf(cmd + n, sizeof(cmd) - n, " && fx_depmod \"$R\"");
	return sh(cmd) == 0;
}

int main(void)
{
	const char *top = getenv("GPUVM_TOP") ? getenv("GPUVM_TOP") : ".";
	char dir[256], path[320], line[160], name[64], modalias[96];
	char *alias;
	size_t i;

	if (!mkdtemp(tmp)) {
		printf("Bail out! mkdtemp failed\n");
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/lib/modules/" KVER, tmp);

	CHECK(build_tree(top, true), "a module tree with nvgrace_gpu_vfio_pci and vfio_pci");
	snprintf(path, sizeof(path), "%s/modules.alias", dir);
	alias = read_all(path);
	CHECK(alias != NULL, "depmod wrote modules.alias");
	for (i = 0; alias && i < ARRAY_SIZE(nvgrace_ids); i++) {
		snprintf(line, sizeof(line),
			 "alias vfio_pci:v000010DEd0000%ssv*sd*bc*sc*i* nvgrace_gpu_vfio_pci\n",
			 nvgrace_ids[i]);
		CHECK(strstr(alias, line) != NULL, "modules.alias has the line for 10de:%s",
		      nvgrace_ids[i]);
	}
	CHECK(alias && strstr(alias, "alias vfio_pci:v*d*sv*sd*bc*sc*i* vfio_pci\n"),
	      "modules.alias has vfio_pci's catch-all");
	free(alias);

	CHECK_INT(mod_init(dir), 0, "libkmod opens the tree");
	for (i = 0; i < ARRAY_SIZE(nvgrace_ids); i++) {
		/* A GH200's modalias as sysfs spells it (class 0302: 3D controller). */
		snprintf(modalias, sizeof(modalias),
			 "pci:v000010DEd0000%ssv000010DEsd00001809bc03sc02i00", nvgrace_ids[i]);
		name[0] = '\0';
		CHECK_INT(mod_vfio_variant(modalias, name, sizeof(name)), 0, "10de:%s: found",
			  nvgrace_ids[i]);
		CHECK_STR(name, "nvgrace_gpu_vfio_pci", "10de:%s: the variant, not vfio_pci itself",
			  nvgrace_ids[i]);
	}
	name[0] = '\0';
	CHECK_INT(mod_vfio_variant("pci:v000010DEd00002204sv00001458sd00004037bc03sc00i00", name,
				   sizeof(name)),
		  0, "an RTX 3090: found");
	CHECK_STR(name, "vfio_pci", "an RTX 3090: vfio_pci itself");
	CHECK_STR(mod_dir(), dir, "libkmod reads the fixture's tree");
	mod_fini();

	/* Without the variant module only vfio_pci answers, for a GH200 too. */
	snprintf(path, sizeof(path), "rm -rf '%s'", tmp);
	sh(path);
	CHECK(build_tree(top, false), "a module tree with vfio_pci only");
	CHECK_INT(mod_init(dir), 0, "libkmod opens it");
	name[0] = '\0';
	CHECK_INT(mod_vfio_variant("pci:v000010DEd00002342sv000010DEsd00001809bc03sc02i00", name,
				   sizeof(name)),
		  0, "a GH200: found");
	CHECK_STR(name, "vfio_pci", "a GH200 without the variant module: vfio_pci");
	/*
	 * A module in the running kernel that the tree has no file of (the GPU Operator's vGPU
	 * Manager loads nvidia_vgpu_vfio from its container): the running kernel says so.
	 * printk stands in for it: every kernel has /sys/module/printk, and no tree a file.
	 */
	CHECK_INT(mod_state("printk", false), MOD_MISSING, "not in the tree, not asked live");
	if (access("/sys/module/printk", F_OK) == 0)
		CHECK(mod_state("printk", true) != MOD_MISSING,
		      "not in the tree, in the running kernel: not missing");
	else
		printf("ok %d # skip no /sys/module/printk here\n", ++unit_n);
	CHECK_INT(mod_state("gpuvm_no_such_module", true), MOD_MISSING, "in neither");
	mod_fini();

	sh(path);
	return unit_done();
}
