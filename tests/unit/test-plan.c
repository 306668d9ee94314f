// SPDX-License-Identifier: MIT
/* The planner over in-memory inventories shaped like real machines. */
#include <errno.h>
#include <stdarg.h>

#include "log.h"
#include "plan.h"
#include "settings.h"
#include "unit.h"
#include "util.h"

static struct pci_dev devs[512];
static struct inventory inv;
static struct settings s;
static struct plan p;

static void reset(bool iommu)
{
	memset(devs, 0, sizeof(devs));
	memset(&inv, 0, sizeof(inv));
	inv.dev = devs;
	inv.iommu.active = iommu;
	inv.iommu.units = iommu;
	settings_default(&s);
}

/* Devices are added in address order, as inventory_scan leaves them. */
static struct pci_dev *add(const char *addr, unsigned vendor, unsigned device, unsigned class,
			   int group, const char *driver)
{
	struct pci_dev *d = &devs[inv.n++];

	pci_dev_init(d);
	pci_addr_parse(addr, &d->addr);
	pci_addr_format(&d->addr, d->name, sizeof(d->name));
	d->vendor = (uint16_t)vendor;
	d->device = (uint16_t)device;
	d->class = class;
	d->group = group;
	d->driver = driver ? driver : "";
	d->details = true;
	return d;
}

static size_t idx(const char *addr)
{
	struct pci_addr a;

	pci_addr_parse(addr, &a);
	return (size_t)(inventory_find(&inv, &a) - devs);
}

static void build(void)
{
	plan_free(&p);
	CHECK_INT(plan_build(&p, &s, &inv), 0, "plan builds");
}

static void expect(const char *addr, enum action a, const char *target, const char *reason_part)
{
	const struct plan_dev *pd = &p.dev[idx(addr)];

	CHECK_STR(action_name(pd->action), action_name(a), "%s: action", addr);
	CHECK_STR(pd->target, target ? target : "", "%s: target", addr);
	if (reason_part) {
		CHECK(strstr(pd->reason, reason_part) != NULL, "%s: reason says '%s'", addr,
		      reason_part);
		if (!strstr(pd->reason, reason_part))
			printf("#   reason: %s\n", pd->reason);
	}
}

static const struct plan_group *group(int id)
{
	size_t i;

	for (i = 0; i < p.n_groups; i++)
		if (p.group[i].id == id)
			return &p.group[i];
	return NULL;
}

/* A Turing consumer card: VGA, HD audio, USB and UCSI in one slot and one group. */
static void workstation(void)
{
	const struct plan_group *g;

	reset(true);
	add("0000:00:00.0", 0x8086, 0x3e30, 0x060000, 0, NULL);
	add("0000:00:01.0", 0x8086, 0x1901, 0x060400, 1, "pcieport");
	add("0000:00:14.0", 0x8086, 0xa36d, 0x0c0330, 2, "xhci_hcd");
	add("0000:00:1f.3", 0x8086, 0xa348, 0x040300, 3, "snd_hda_intel");
	add("0000:01:00.0", 0x10de, 0x1e87, 0x030000, 13, "nouveau")->boot_vga = 1;
	add("0000:01:00.1", 0x10de, 0x10f8, 0x040300, 13, "snd_hda_intel");
	add("0000:01:00.2", 0x10de, 0x1ad8, 0x0c0330, 13, "xhci_hcd");
	add("0000:01:00.3", 0x10de, 0x1ad9, 0x0c8000, 13, "nvidia-gpu");

	s.mode = MODE_VM_PASSTHROUGH;
	build();
	expect("0000:01:00.0", ACT_BIND, "vfio-pci", "selected by the default match in IOMMU group 13");
	expect("0000:01:00.1", ACT_BIND, "vfio-pci", "companion of 0000:01:00.0");
	expect("0000:01:00.2", ACT_BIND, "vfio-pci", "companion");
	expect("0000:01:00.3", ACT_BIND, "vfio-pci", "companion");
	expect("0000:00:1f.3", ACT_SKIP, NULL, "not selected");
	expect("0000:00:01.0", ACT_SKIP, NULL, "bridge");
	CHECK_INT(p.n_groups, 1, "one group planned");
	g = group(13);
	CHECK(g && g->viable && g->n_members == 4 && g->n_blocked == 0,
	      "group 13 viable with 4 members");
	CHECK_INT(p.n_modules, 1, "one module to load");
	CHECK_STR(p.modules[0], "vfio-pci", "vfio-pci");
	CHECK(p.dev[idx("0000:01:00.0")].role == ROLE_GPU &&
		      p.dev[idx("0000:01:00.3")].role == ROLE_COMPANION,
	      "roles");
	CHECK(!p.dev[idx("0000:00:14.0")].listed && p.dev[idx("0000:01:00.3")].listed,
	      "only NVIDIA's and the group's devices are listed");

	/* Already bound with the override: nothing to do, no module to load. */
	for (size_t i = idx("0000:01:00.0"); i <= idx("0000:01:00.3"); i++) {
		devs[i].driver = "vfio-pci";
		devs[i].override = "vfio-pci";
	}
	build();
	expect("0000:01:00.0", ACT_KEEP, "vfio-pci", "already on vfio-pci");
	expect("0000:01:00.3", ACT_KEEP, "vfio-pci", "already");
	CHECK_INT(p.n_modules, 0, "nothing to load when all are kept");

	/*
	 * Container because nothing set a mode (gpuvm installed, not configured): a vfio bind
	 * someone else made stays, whatever made it.
	 */
	s.mode = MODE_CONTAINER;
	CHECK(s.from[KEY_MODE] == FROM_DEFAULT, "no source has set the mode");
	build();
	expect("0000:01:00.0", ACT_KEEP, NULL, "left on vfio-pci: no mode is set");
	expect("0000:01:00.1", ACT_KEEP, NULL, "no mode is set");

	/* The same machine in container mode, as a source says: off vfio, back to the host. */
	settings_set_from(&s, KEY_MODE, FROM_CMDLINE, NULL);
	build();
	expect("0000:01:00.0", ACT_UNBIND, NULL, "back to the host driver");
	expect("0000:01:00.1", ACT_UNBIND, NULL, "companion of 0000:01:00.0");
	CHECK_INT(p.n_groups, 0, "container mode plans no groups");

	/* Only a stale override, already on the host driver: still cleared. */
	devs[idx("0000:01:00.0")].driver = "nouveau";
	build();
	expect("0000:01:00.0", ACT_UNBIND, NULL, "its vfio driver_override");

	/* Container with host_driver=: reserved for it. */
	strcpy(s.host_driver, "nvidia");
	build();
	expect("0000:01:00.0", ACT_RESERVE, "nvidia", "reserved for nvidia");
	expect("0000:01:00.1", ACT_UNBIND, NULL, NULL);
	s.host_driver[0] = '\0';

	/* Container, clean host: keep. */
	for (size_t i = idx("0000:01:00.0"); i <= idx("0000:01:00.3"); i++)
		devs[i].override = "";
	devs[idx("0000:01:00.1")].driver = "snd_hda_intel";
	build();
	expect("0000:01:00.0", ACT_KEEP, NULL, "left on nouveau");
	expect("0000:01:00.1", ACT_KEEP, NULL, "left on snd_hda_intel");
}

static void no_iommu(void)
{
	reset(false);
	add("0000:01:00.0", 0x10de, 0x2204, 0x030000, -1, "nouveau");
	add("0000:01:00.1", 0x10de, 0x1aef, 0x040300, -1, "snd_hda_intel");
	s.mode = MODE_VM_PASSTHROUGH;
	build();
	CHECK(p.iommu_unusable, "IOMMU unusable");
	expect("0000:01:00.0", ACT_HOLD, "vfio-pci", "IOMMU is not active");
	expect("0000:01:00.1", ACT_HOLD, "vfio-pci", "on_error=hold");
	CHECK_INT(p.n_modules, 0, "no module to load without an IOMMU");
	CHECK_INT(p.n_failed, 1, "one selected device failed");

	s.on_error = ON_ERROR_RELEASE;
	build();
	expect("0000:01:00.0", ACT_KEEP, NULL, "left on nouveau (on_error=release)");
	devs[0].driver = "vfio-pci";
	build();
	expect("0000:01:00.0", ACT_UNBIND, NULL, "released to the host driver");

	/* vm-vgpu needs no IOMMU to plan; container neither. */
	s.mode = MODE_VM_VGPU;
	build();
	CHECK(!p.iommu_unusable, "vm-vgpu does not fail without an IOMMU");
	expect("0000:01:00.0", ACT_RESERVE, "nvidia", "mediated devices");
	s.mode = MODE_CONTAINER;
	build();
	CHECK(!p.iommu_unusable, "container does not need an IOMMU");
}

static void gpu_with_nic(void)
{
	const struct plan_group *g;

	reset(true);
	add("0000:00:1c.0", 0x8086, 0xa338, 0x060400, 8, "pcieport");
	add("0000:03:00.0", 0x10de, 0x2204, 0x030000, 8, "nouveau");
	add("0000:03:00.1", 0x10de, 0x1aef, 0x040300, 8, "snd_hda_intel");
	add("0000:04:00.0", 0x8086, 0x1533, 0x020000, 8, "igb");
	s.mode = MODE_VM_PASSTHROUGH;
	build();
	g = group(8);
	CHECK(g && !g->viable, "group 8 not viable");
	CHECK(g && g->n_blocked == 1 && g->blocked_by[0] == idx("0000:04:00.0"),
	      "blocked by the NIC only");
	expect("0000:03:00.0", ACT_HOLD, "vfio-pci",
	       "0000:04:00.0 (8086:1533, igb) is neither selected");
	expect("0000:03:00.1", ACT_HOLD, "vfio-pci", "not viable");
	expect("0000:04:00.0", ACT_SKIP, NULL, "blocks IOMMU group 8");
	expect("0000:00:1c.0", ACT_SKIP, NULL, "bridge");
	CHECK(p.dev[idx("0000:04:00.0")].role == ROLE_BLOCKER, "the NIC is the blocker");
	CHECK(p.dev[idx("0000:04:00.0")].listed, "and it is listed");
	CHECK_INT(p.n_modules, 0, "nothing to load for a blocked group");
	s.on_error = ON_ERROR_RELEASE;
	build();
	expect("0000:03:00.0", ACT_KEEP, NULL, "left on nouveau");
}

static void two_gpus_one_group(void)
{
	const struct plan_group *g;

	reset(true);
	add("0000:05:00.0", 0x10b5, 0x8747, 0x060400, 20, "pcieport");
	add("0000:06:00.0", 0x10de, 0x2204, 0x030000, 20, "nouveau");
	add("0000:06:00.1", 0x10de, 0x1aef, 0x040300, 20, NULL);
	add("0000:07:00.0", 0x10de, 0x2204, 0x030000, 20, "nouveau");
	add("0000:07:00.1", 0x10de, 0x1aef, 0x040300, 20, NULL);
	s.mode = MODE_VM_PASSTHROUGH;
	build();
	g = group(20);
	CHECK(g && g->viable && g->n_members == 5, "two GPUs in one group are bound together");
	expect("0000:06:00.0", ACT_BIND, "vfio-pci", NULL);
	expect("0000:07:00.1", ACT_BIND, "vfio-pci", "companion of 0000:07:00.0");
	expect("0000:05:00.0", ACT_SKIP, NULL, "bridge: never bound");
	CHECK_INT(p.n_selected, 2, "two selected");

	pci_addr_parse("0000:07:00.0", &s.exclude[0]);
	s.n_exclude = 1;
	build();
	g = group(20);
	CHECK(g && !g->viable, "excluding one GPU of the group makes it not viable");
	CHECK(g && g->n_blocked == 2, "blocked by the excluded GPU and its audio");
	expect("0000:07:00.0", ACT_SKIP, NULL, "excluded: not taken; it blocks IOMMU group 20");
	expect("0000:06:00.0", ACT_HOLD, "vfio-pci", "0000:07:00.0");
	CHECK(p.dev[idx("0000:07:00.0")].role == ROLE_EXCLUDED, "role excluded");
}

static void hgx(void)
{
	char addr[16];
	int i;

	reset(true);
	inv.iommu.cpu = CPU_AMD;
	add("0000:00:00.0", 0x1022, 0x14d8, 0x060000, -1, NULL);
	add("0000:02:00.0", 0x1a03, 0x2000, 0x030000, 1, "ast")->boot_vga = 1;
	for (i = 0; i < 8; i++) {
		snprintf(addr, sizeof(addr), "0000:%02x:00.0", 0x18 + i * 0x10);
		add(addr, 0x10de, 0x2330, 0x030200, 30 + i, "nvidia");
		snprintf(addr, sizeof(addr), "0000:%02x:00.0", 0x19 + i * 0x10);
		add(addr, 0x15b3, 0x101b, 0x020000, 50 + i, "mlx5_core");
	}
	for (i = 0; i < 4; i++) {
		snprintf(addr, sizeof(addr), "0000:%02x:00.0", 0xa0 + i);
		add(addr, 0x10de, 0x22a3, 0x068000, 70 + i, "nvidia-nvswitch");
	}
	s.mode = MODE_VM_PASSTHROUGH;
	build();
	CHECK_INT(p.n_selected, 8, "8 GPUs selected, NVSwitches stay");
	CHECK_INT(p.n_groups, 8, "8 groups");
	expect("0000:18:00.0", ACT_BIND, "vfio-pci", "IOMMU group 30");
	expect("0000:88:00.0", ACT_BIND, "vfio-pci", NULL);
	expect("0000:a0:00.0", ACT_SKIP, NULL, "Fabric Manager");
	expect("0000:02:00.0", ACT_SKIP, NULL, "not selected");
	expect("0000:19:00.0", ACT_SKIP, NULL, "not selected");
	CHECK(p.dev[idx("0000:a0:00.0")].listed, "NVSwitches are listed");

	s.nvswitch_vm = true;
	build();
	CHECK_INT(p.n_selected, 12, "nvswitch=vm: 12 selected");
	expect("0000:a3:00.0", ACT_BIND, "vfio-pci", "NVSwitch 10de:22a3 selected");

	/* nvswitch=vm only means something for passthrough. */
	s.mode = MODE_VM_VGPU;
	build();
	CHECK_INT(p.n_selected, 8, "vm-vgpu: NVSwitches stay on the host");
	expect("0000:18:00.0", ACT_RESERVE, "nvidia", "mediated devices");

	/* ids= replaces the default match. */
	s.mode = MODE_VM_PASSTHROUGH;
	s.nvswitch_vm = false;
	pci_id_parse("15b3:101b", &s.ids[0]);
	s.n_ids = 1;
	build();
	CHECK_INT(p.n_selected, 8, "ids=15b3:101b selects the 8 NICs");
	expect("0000:19:00.0", ACT_BIND, "vfio-pci", "selected by ids=");
	expect("0000:18:00.0", ACT_SKIP, NULL, "not selected");

	/* A stale vfio bind of an NVSwitch is undone even in passthrough. */
	s.n_ids = 0;
	devs[idx("0000:a1:00.0")].driver = "vfio-pci";
	build();
	expect("0000:a1:00.0", ACT_UNBIND, NULL, "Fabric Manager");
}

static void sriov(void)
{
	char addr[24];
	int i;

	reset(true);
	add("0000:41:00.0", 0x10de, 0x26b9, 0x030200, 40, "nvidia")->sriov_totalvfs = 16;
	for (i = 0; i < 4; i++) {
		struct pci_dev *vf;

		snprintf(addr, sizeof(addr), "0000:41:00.%d", 4 + i);
		vf = add(addr, 0x10de, 0x26b9, 0x030200, 41 + i, NULL);
		vf->is_vf = true;
	}
	s.mode = MODE_VM_VGPU;
	build();
	expect("0000:41:00.0", ACT_RESERVE, "nvidia", "SR-IOV, 16 VFs");
	CHECK_STR(vgpu_method_name(p.dev[0].vgpu), "sriov", "vGPU method sriov");
	expect("0000:41:00.4", ACT_SKIP, NULL, "virtual function");
	CHECK_INT(p.n_selected, 1, "VFs are never selected");

	devs[0].override = "nvidia";
	build();
	expect("0000:41:00.0", ACT_KEEP, "nvidia", "already on nvidia");

	s.mode = MODE_VM_PASSTHROUGH;
	build();
	expect("0000:41:00.0", ACT_BIND, "vfio-pci", NULL);
	expect("0000:41:00.5", ACT_SKIP, NULL, "virtual function");
	CHECK_INT(p.n_groups, 1, "VFs' own groups are not planned");
}

/* vm-vgpu: the method follows the architecture of the pci.ids name, in inv.models. */
static void vgpu_arch(void)
{
	struct gpu_model m[3] = { { .device = 0x1eb8 }, { .device = 0x20b5 }, { .device = 0x2204 } };
	struct gpu_models ms = { m, 3, "usr/share/misc/pci.ids" };

	vgpu_classify("TU104GL [Tesla T4]", &m[0]);
	vgpu_classify("GA100 [A100 PCIe 80GB]", &m[1]);
	vgpu_classify("GA102 [GeForce RTX 3090]", &m[2]);
	reset(true);
	inv.models = &ms;
	add("0000:01:00.0", 0x10de, 0x1eb8, 0x030200, 1, "nvidia")->sriov_totalvfs = 16;
	add("0000:02:00.0", 0x10de, 0x20b5, 0x030200, 2, "nvidia")->sriov_totalvfs = 16;
	add("0000:03:00.0", 0x10de, 0x20b5, 0x030200, 3, "nvidia");
	add("0000:04:00.0", 0x10de, 0x2204, 0x030000, 4, "nouveau");
	add("0000:05:00.0", 0x10de, 0x2330, 0x030200, 5, "nvidia");
	s.mode = MODE_VM_VGPU;
	build();
	expect("0000:01:00.0", ACT_RESERVE, "nvidia", "mode vm-vgpu: Turing, mediated devices");
	CHECK_STR(vgpu_method_name(p.dev[0].vgpu), "mdev", "Turing: mdev, whatever SR-IOV says");
	expect("0000:02:00.0", ACT_RESERVE, "nvidia", "mode vm-vgpu: Ampere, SR-IOV, 16 VFs");
	CHECK_STR(vgpu_method_name(p.dev[1].vgpu), "sriov", "Ampere: SR-IOV");
	expect("0000:03:00.0", ACT_RESERVE, "nvidia",
	       "Ampere, SR-IOV expected but the device shows no SR-IOV capability");
	CHECK_STR(vgpu_method_name(p.dev[2].vgpu), "sriov", "Ampere without VFs: still SR-IOV");
	expect("0000:04:00.0", ACT_RESERVE, "nvidia", "no vGPU release supports it (Ampere");
	CHECK(p.dev[3].vgpu == VGPU_NONE, "a GeForce has no vGPU method");
	expect("0000:05:00.0", ACT_RESERVE, "nvidia", "mediated devices; architecture unknown");
	CHECK_STR(vgpu_method_name(p.dev[4].vgpu), "mdev", "unknown: sriov_totalvfs decides");
	CHECK_INT(p.n_failed, 0, "no vm-vgpu finding fails the plan: check says them");
	inv.models = NULL;
}

static void domains(void)
{
	reset(true);
	add("0000:01:00.0", 0x10de, 0x2204, 0x030000, 10, "nouveau");
	add("10000:01:00.0", 0x10de, 0x2204, 0x030000, 90, "nouveau");
	add("10000:01:00.1", 0x10de, 0x1aef, 0x040300, 90, "snd_hda_intel");
	s.mode = MODE_VM_PASSTHROUGH;
	pci_addr_parse("0000:01:00.0", &s.exclude[0]);
	s.n_exclude = 1;
	build();
	expect("10000:01:00.0", ACT_BIND, "vfio-pci", NULL);
	expect("10000:01:00.1", ACT_BIND, "vfio-pci", "companion of 10000:01:00.0");
	expect("0000:01:00.0", ACT_SKIP, NULL, "excluded");
	CHECK(!pci_same_slot(&devs[0].addr, &devs[1].addr), "same bus and slot in two domains differ");
}

static void variants_and_groupless(void)
{
	reset(true);
	add("0009:01:00.0", 0x10de, 0x2342, 0x030200, -1, NULL);
	devs[0].variant = "nvgrace_gpu_vfio_pci";
	add("0009:02:00.0", 0x10de, 0x2342, 0x030200, 5, NULL);
	devs[1].variant = "nvgrace_gpu_vfio_pci";
	s.mode = MODE_VM_PASSTHROUGH;
	build();
	expect("0009:02:00.0", ACT_BIND, "nvgrace_gpu_vfio_pci", NULL);
	CHECK_STR(p.modules[0], "nvgrace_gpu_vfio_pci", "the variant module is loaded");
	expect("0009:01:00.0", ACT_HOLD, "nvgrace_gpu_vfio_pci", "no IOMMU group");
	CHECK_INT(p.n_failed, 1, "a groupless GPU fails");
}

/*
 * An ARM SMMU gives groups at a driver's first probe. A GPU with no driver and no
 * group yet is bound (one pending group with the functions of its slot that have no group
 * yet, or a group of their own slot); a device that has a driver but no group is outside
 * the IOMMU and fails as on x86; a foreign device is never taken.
 */
static void smmu_pending(void)
{
	const struct plan_group *g;

	reset(true);
	inv.iommu.groups_at_probe = true;
	strcpy(inv.iommu.unit, "smmu3.0x0000000009050000");
	add("0006:00:00.0", 0x10de, 0x22b2, 0x060400, 1, "pcieport");
	add("0006:01:00.0", 0x10de, 0x2204, 0x030000, -1, NULL);
	add("0006:01:00.1", 0x10de, 0x1aef, 0x040300, 7, "snd_hda_intel");
	add("0008:01:00.0", 0x10de, 0x2342, 0x030200, -1, NULL);
	add("0008:01:00.1", 0x15b3, 0x1021, 0x020000, 9, "mlx5_core");
	add("0008:02:00.0", 0x15b3, 0x1021, 0x020000, 9, "mlx5_core");
	add("0009:01:00.0", 0x10de, 0x2342, 0x030200, -1, NULL);
	devs[6].variant = "nvgrace_gpu_vfio_pci";
	add("000a:01:00.0", 0x10de, 0x2342, 0x030200, -1, "nvidia");
	s.mode = MODE_VM_PASSTHROUGH;
	build();
	expect("0006:01:00.0", ACT_BIND, "vfio-pci",
	       "IOMMU group assigned when vfio-pci probes it (smmu3.");
	expect("0006:01:00.1", ACT_BIND, "vfio-pci", "companion of 0006:01:00.0");
	expect("0008:01:00.0", ACT_BIND, "vfio-pci", NULL);
	expect("0008:01:00.1", ACT_SKIP, NULL, "not selected");
	expect("0008:02:00.0", ACT_SKIP, NULL, NULL);
	expect("0009:01:00.0", ACT_BIND, "nvgrace_gpu_vfio_pci", NULL);
	expect("000a:01:00.0", ACT_HOLD, "vfio-pci", "no IOMMU group");
	CHECK_INT(p.n_selected, 4, "SMMU: four GPUs selected");
	CHECK_INT(p.n_failed, 1, "SMMU: only the one on a driver without a group fails");
	CHECK(!p.iommu_unusable, "SMMU: the IOMMU is usable with no group yet");
	CHECK_INT(p.n_groups, 3, "SMMU: three pending groups");
	g = group(-1);
	CHECK(g && g->pending && g->viable && g->n_members == 2 &&
		      g->members[0] == idx("0006:01:00.0") && g->members[1] == idx("0006:01:00.1"),
	      "SMMU: the first pending group is the GPU and its audio function");
	CHECK(p.n_modules == 2 && strcmp(p.modules[0], "vfio-pci") == 0 &&
		      strcmp(p.modules[1], "nvgrace_gpu_vfio_pci") == 0,
	      "SMMU: vfio-pci and the variant driver are loaded");

	/* The same inventory under Intel's DMAR, which groups at boot: groupless means outside. */
	inv.iommu.groups_at_probe = false;
	strcpy(inv.iommu.unit, "dmar0");
	build();
	expect("0006:01:00.0", ACT_HOLD, "vfio-pci", "no IOMMU group");
	expect("0009:01:00.0", ACT_HOLD, "nvgrace_gpu_vfio_pci", "no IOMMU group");
	CHECK_INT(p.n_groups, 0, "DMAR: no pending group");

	/* A slot-mate's group with a member that may not go along is not taken: never half-bound. */
	reset(true);
	inv.iommu.groups_at_probe = true;
	strcpy(inv.iommu.unit, "smmu3.0x0000000009050000");
	add("0007:01:00.0", 0x10de, 0x2204, 0x030000, -1, NULL);
	add("0007:01:00.1", 0x10de, 0x1aef, 0x040300, 8, "snd_hda_intel");
	add("0007:01:00.2", 0x10de, 0x1ada, 0x0c0330, 8, "xhci_hcd");
	s.mode = MODE_VM_PASSTHROUGH;
	pci_addr_parse("0007:01:00.2", &s.exclude[0]);
	s.n_exclude = 1;
	build();
	expect("0007:01:00.0", ACT_BIND, "vfio-pci", "assigned when vfio-pci probes it");
	expect("0007:01:00.1", ACT_SKIP, NULL, NULL);
	expect("0007:01:00.2", ACT_SKIP, NULL, "excluded");
	CHECK(p.n_groups == 1 && p.group[0].n_members == 1,
	      "SMMU: the GPU's pending group is itself alone");
	s.n_exclude = 0;
	build();
	expect("0007:01:00.1", ACT_BIND, "vfio-pci", "companion of 0007:01:00.0");
	expect("0007:01:00.2", ACT_BIND, "vfio-pci", "companion of 0007:01:00.0");
	CHECK(p.n_groups == 1 && p.group[0].n_members == 3,
	      "SMMU: without exclude= group 8 goes along whole");

	/* No IOMMU at all: the problem is named, whatever the groups. */
	reset(true);
	inv.iommu.groups_at_probe = true;
	add("0006:01:00.0", 0x10de, 0x2204, 0x030000, -1, NULL);
	s.mode = MODE_VM_PASSTHROUGH;
	inv.iommu.active = false;
	inv.iommu.units = 0;
	build();
	expect("0006:01:00.0", ACT_HOLD, "vfio-pci", "IOMMU is not active");
	CHECK(p.iommu_unusable, "no IOMMU: unusable");
}

static void add_exclude(const char *addr)
{
	pci_addr_parse(addr, &s.exclude[s.n_exclude++]);
}

static void build_hold(void)
{
	plan_free(&p);
	CHECK_INT(plan_build_hold(&p, &s, &inv, "its config (config=LABEL=t)", false), 0,
		  "hold plan builds");
}

/* Mark a device as held while gpuvm waited for its config: the override, no driver. */
static void held(const char *addr)
{
	struct pci_dev *d = &devs[idx(addr)];

	d->override = HOLD_OVERRIDE;
	d->driver = "";
}

/*
 * Before the config's disk is there, the devices a VM mode would select are held
 * (driver_override gpuvm-hold, no driver) whatever the mode is going to be; nothing else.
 */
static void hold_plan(void)
{
	reset(true);
	add("0000:00:01.0", 0x8086, 0x1901, 0x060400, 1, "pcieport");
	add("0000:00:1f.3", 0x8086, 0xa348, 0x040300, 3, "snd_hda_intel");
	/* Before udev, as the boot's first call sees them: GPU drivers not loaded yet. */
	add("0000:01:00.0", 0x10de, 0x2204, 0x030000, 13, NULL);
	add("0000:01:00.1", 0x10de, 0x1aef, 0x040300, 13, "snd_hda_intel");
	add("0000:02:00.0", 0x10de, 0x1ad0, 0x060400, 14, "pcieport"); /* an NVIDIA bridge */
	add("0000:03:00.0", 0x10de, 0x2204, 0x030000, 15, NULL);
	add("0000:04:00.0", 0x10de, 0x22a3, 0x068000, 16, NULL);
	add("0000:05:00.0", 0x10de, 0x2204, 0x030000, 17, NULL);
	strcpy(s.config, "LABEL=gpuvm");
	s.mode = MODE_CONTAINER; /* what the image says: the disk may say otherwise */
	add_exclude("0000:03:00.0");
	held("0000:05:00.0");
	build_hold();
	expect("0000:01:00.0", ACT_HOLD, HOLD_OVERRIDE,
	       "while gpuvm waits for its config (config=LABEL=t)");
	CHECK(p.dev[idx("0000:01:00.0")].role == ROLE_GPU && p.dev[idx("0000:01:00.0")].selected,
	      "hold: the GPU selected, as under vm-passthrough");
	expect("0000:01:00.1", ACT_SKIP, NULL, "not selected");
	expect("0000:00:1f.3", ACT_SKIP, NULL, "not selected");
	expect("0000:00:01.0", ACT_SKIP, NULL, "bridge");
	expect("0000:02:00.0", ACT_SKIP, NULL, "bridge");
	expect("0000:03:00.0", ACT_SKIP, NULL, "excluded");
	expect("0000:04:00.0", ACT_SKIP, NULL, "Fabric Manager");
	expect("0000:05:00.0", ACT_KEEP, HOLD_OVERRIDE, "held while gpuvm waits");
	CHECK_INT(p.n_groups, 0, "hold: no group planned");
	CHECK_INT(p.n_modules, 0, "hold: no module to load");
	CHECK_INT(p.mode, MODE_CONTAINER, "hold: the plan keeps the mode it was given");

	/* nvswitch=vm: the NVSwitch goes to the VM too, so it is held (whatever the mode). */
	s.nvswitch_vm = true;
	build_hold();
	expect("0000:04:00.0", ACT_HOLD, HOLD_OVERRIDE, "held, claimed by no driver");
	CHECK(p.dev[idx("0000:04:00.0")].role == ROLE_NVSWITCH, "hold: an NVSwitch role");
	s.mode = MODE_VM_VGPU;
	build_hold();
	expect("0000:04:00.0", ACT_HOLD, HOLD_OVERRIDE, NULL);
	expect("0000:01:00.0", ACT_HOLD, HOLD_OVERRIDE, NULL);

	/*
	 * A driver that has a device before the hold keeps it (a built-in driver, a
	 * vfio-pci.ids= bind): the hold takes nothing; the decision does what the mode says.
	 */
	devs[idx("0000:05:00.0")].driver = "nouveau";
	devs[idx("0000:01:00.0")].driver = "vfio-pci";
	build_hold();
	expect("0000:05:00.0", ACT_KEEP, NULL, "left on nouveau while gpuvm waits");
	expect("0000:01:00.0", ACT_KEEP, NULL, "the hold takes nothing from a driver");
	devs[idx("0000:01:00.0")].driver = "";

	/* ids=: only what they match is held. */
	s.nvswitch_vm = false;
	pci_id_parse("10de:2204", &s.ids[0]);
	s.n_ids = 1;
	build_hold();
	expect("0000:01:00.0", ACT_HOLD, HOLD_OVERRIDE, NULL);
	expect("0000:04:00.0", ACT_SKIP, NULL, "not selected");

	/* A device held before that is not selected now (exclude= added): released. */
	s.n_ids = 0;
	held("0000:03:00.0");
	held("0000:01:00.1");
	build_hold();
	expect("0000:03:00.0", ACT_UNBIND, NULL, "excluded by exclude=");
	expect("0000:03:00.0", ACT_UNBIND, NULL, "held while gpuvm waited for its config: released");
	expect("0000:01:00.1", ACT_UNBIND, NULL, "released");

	/* Nothing to hold: an empty plan, and no device at all. */
	reset(true);
	add("0000:00:1f.3", 0x8086, 0xa348, 0x040300, 3, "snd_hda_intel");
	build_hold();
	expect("0000:00:1f.3", ACT_SKIP, NULL, "not selected");
	CHECK_INT(p.n_selected, 0, "hold: nothing selected");
	reset(true);
	build_hold();
	CHECK(p.dev != NULL, "hold: a plan for no device");
}

/* Then the disk's config decides: a plan releases every hold it does not keep. */
static void holds_released(void)
{
	reset(true);
	add("0000:00:01.0", 0x8086, 0x1901, 0x060400, 1, "pcieport");
	add("0000:01:00.0", 0x10de, 0x2204, 0x030000, 13, NULL);
	add("0000:01:00.1", 0x10de, 0x1aef, 0x040300, 13, "snd_hda_intel");
	add("0000:03:00.0", 0x10de, 0x2204, 0x030000, 15, NULL);
	add("0000:04:00.0", 0x10de, 0x22a3, 0x068000, 16, NULL);
	add("0000:05:00.0", 0x8086, 0x1533, 0x020000, 17, NULL);
	held("0000:01:00.0");
	held("0000:03:00.0");
	held("0000:04:00.0");
	held("0000:05:00.0"); /* held by an older config's ids= */

	/* vm-passthrough: the held GPU is bound to vfio-pci; a held device no longer selected is released. */
	s.mode = MODE_VM_PASSTHROUGH;
	add_exclude("0000:03:00.0");
	build();
	expect("0000:01:00.0", ACT_BIND, "vfio-pci", "IOMMU group 13");
	expect("0000:01:00.1", ACT_BIND, "vfio-pci", "companion");
	expect("0000:03:00.0", ACT_UNBIND, NULL, "excluded by exclude=");
	expect("0000:03:00.0", ACT_UNBIND, NULL, "held while gpuvm waited for its config: released");
	expect("0000:04:00.0", ACT_UNBIND, NULL, "Fabric Manager");
	expect("0000:04:00.0", ACT_UNBIND, NULL, "released");
	expect("0000:05:00.0", ACT_UNBIND, NULL, "not selected; held while gpuvm waited");
	expect("0000:00:01.0", ACT_SKIP, NULL, "bridge");
	CHECK_STR(p.modules[0], "vfio-pci", "passthrough after a hold: vfio-pci loaded");

	/* nvswitch=vm: the held NVSwitch is bound too. */
	s.nvswitch_vm = true;
	build();
	expect("0000:04:00.0", ACT_BIND, "vfio-pci", "NVSwitch 10de:22a3 selected");
	s.nvswitch_vm = false;

	/* Container: the held GPU goes back to the host, with the reason. */
	s.mode = MODE_CONTAINER;
	build();
	expect("0000:01:00.0", ACT_UNBIND, NULL,
	       "held while gpuvm waited for its config; released to the host driver (mode container)");
	expect("0000:01:00.1", ACT_KEEP, NULL, "left on snd_hda_intel");
	expect("0000:03:00.0", ACT_UNBIND, NULL, "released");
	expect("0000:05:00.0", ACT_UNBIND, NULL, "released");
	/* Container with host_driver=: reserved for it, which replaces the hold. */
	strcpy(s.host_driver, "nvidia");
	build();
	expect("0000:01:00.0", ACT_RESERVE, "nvidia", "reserved for nvidia");
	s.host_driver[0] = '\0';

	/* vm-vgpu: reserved for nvidia. */
	s.mode = MODE_VM_VGPU;
	build();
	expect("0000:01:00.0", ACT_RESERVE, "nvidia", "mediated devices");
	expect("0000:04:00.0", ACT_UNBIND, NULL, "released");

	/* A companion held (by hand, or an older gpuvm): released on the host side. */
	held("0000:01:00.1");
	s.mode = MODE_CONTAINER;
	build();
	expect("0000:01:00.1", ACT_UNBIND, NULL, "companion of 0000:01:00.0: held while gpuvm waited");

	/* No IOMMU: on_error=release releases the held GPU, on_error=hold holds it for vfio. */
	inv.iommu.active = false;
	inv.iommu.units = 0;
	s.mode = MODE_VM_PASSTHROUGH;
	s.on_error = ON_ERROR_RELEASE;
	build();
	CHECK(p.iommu_unusable, "no IOMMU after a hold: unusable");
	expect("0000:01:00.0", ACT_UNBIND, NULL, "released to the host driver (on_error=release)");
	expect("0000:01:00.1", ACT_UNBIND, NULL, "on_error=release");
	expect("0000:03:00.0", ACT_UNBIND, NULL, "held while gpuvm waited for its config: released");
	s.on_error = ON_ERROR_HOLD;
	build();
	expect("0000:01:00.0", ACT_HOLD, "vfio-pci", "IOMMU is not active");
	expect("0000:01:00.0", ACT_HOLD, "vfio-pci", "on_error=hold");
	expect("0000:03:00.0", ACT_UNBIND, NULL, "released");

	/* With an IOMMU, a group the hold cannot finish: on_error decides as for any failure. */
	inv.iommu.active = true;
	inv.iommu.units = 1;
	devs[idx("0000:05:00.0")].group = 13;
	devs[idx("0000:05:00.0")].override = "";
	devs[idx("0000:05:00.0")].driver = "igb";
	build();
	expect("0000:01:00.0", ACT_HOLD, "vfio-pci", "not viable");
	s.on_error = ON_ERROR_RELEASE;
	build();
	expect("0000:01:00.0", ACT_UNBIND, NULL, "not viable");
	expect("0000:05:00.0", ACT_SKIP, NULL, "blocks IOMMU group 13");
	s.on_error = ON_ERROR_HOLD;
}

/*
 * ids= that matches everything of a vendor: what the host needs is never bound,
 * by class or by what the running host uses, and a group that holds one is not viable.
 */
static void host_needs_rule(void)
{
	static const struct {
		const char *addr;
		unsigned class;
		const char *why;
	} host[] = {
		{ "0000:00:17.0", 0x010601, "mass-storage" }, /* AHCI */
		{ "0000:00:1d.0", 0x010802, "mass-storage" }, /* NVMe */
		{ "0000:00:1f.0", 0x060100, "ISA/LPC bridge" },
		{ "0000:00:1f.4", 0x0c0500, "SMBus" },
		{ "0000:00:1e.0", 0x068000, "a bridge" }, /* "other bridge", not NVIDIA's */
		{ "0000:00:1c.0", 0x060700, "a bridge" }, /* CardBus */
		{ "0000:00:00.2", 0x080600, "an IOMMU" },
		{ "0000:00:08.0", 0x080000, "base system peripheral" },
	};
	const struct plan_group *g;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(host); i++) {
		reset(true);
		add("0000:00:01.0", 0x8086, 0x1901, 0x060400, 1, "pcieport");
		add(host[i].addr, 0x8086, 0x1234, host[i].class, 5, "somedrv");
		s.mode = MODE_VM_PASSTHROUGH;
		pci_id_parse("8086:*", &s.ids[0]);
		s.n_ids = 1;
		build();
		expect(host[i].addr, ACT_SKIP, NULL, "ids= matches it, but the host needs it");
		expect(host[i].addr, ACT_SKIP, NULL, host[i].why);
		CHECK(p.dev[idx(host[i].addr)].role == ROLE_HOST &&
			      !p.dev[idx(host[i].addr)].selected && p.dev[idx(host[i].addr)].listed,
		      "%06x: the host's, not selected, named", host[i].class);
		CHECK_INT(p.n_selected, 0, "%06x: nothing selected", host[i].class);
		CHECK_INT(p.n_modules, 0, "%06x: no module to load", host[i].class);
		/* Container mode reserves for host_driver= what it selects: not these either. */
		s.mode = MODE_CONTAINER;
		strcpy(s.host_driver, "nvidia");
		build();
		expect(host[i].addr, ACT_SKIP, NULL, "the host needs it");
		s.host_driver[0] = '\0';
	}

	/* The ports stay what they were (never bound, never block); an NVSwitch is no bridge. */
	CHECK(!pci_class_host_needs(0x8086, 0x060400) && !pci_class_host_needs(0x8086, 0x060000) &&
		      !pci_class_host_needs(0x8086, 0x060900) &&
		      !pci_class_host_needs(0x10de, 0x068000) &&
		      pci_class_host_needs(0x1000, 0x068000) &&
		      !pci_class_host_needs(0x8086, 0x0c8000) &&
		      !pci_class_host_needs(0x8086, 0x020000) &&
		      !pci_class_host_needs(0xffff, 0xffffff),
	      "ports, NVSwitches, serial buses, NICs and unknown classes are not the host's by class");

	/* A group that holds one is not viable: the selected members are not bound. */
	reset(true);
	add("0000:00:1f.0", 0x8086, 0x7a84, 0x060100, 28, NULL);
	add("0000:00:1f.3", 0x8086, 0x7ad0, 0x040300, 28, "snd_hda_intel");
	add("0000:00:1f.4", 0x8086, 0x7aa3, 0x0c0500, 28, "i801_smbus");
	add("0000:00:1f.5", 0x8086, 0x7aa4, 0x0c8000, 28, "intel-spi");
	s.mode = MODE_VM_PASSTHROUGH;
	pci_id_parse("8086:*", &s.ids[0]);
	s.n_ids = 1;
	build();
	g = group(28);
	CHECK(g && !g->viable && g->n_blocked == 2, "the PCH group is not viable, blocked by two");
	expect("0000:00:1f.3", ACT_HOLD, "vfio-pci",
	       "0000:00:1f.0 (8086:7a84, no driver) is needed by the host (an ISA/LPC bridge), among others");
	expect("0000:00:1f.5", ACT_HOLD, "vfio-pci", "not viable");
	expect("0000:00:1f.0", ACT_SKIP, NULL, "the host needs it");
	CHECK_INT(p.n_modules, 0, "no module to load");

	/* Where the running host says so: the root disk's NIC (iSCSI), the console's UART. */
	reset(true);
	add("0000:03:00.0", 0x8086, 0x1533, 0x020000, 7, "igb")->host_use = HOST_USE_ROOT;
	add("0000:04:00.0", 0x8086, 0x9c3d, 0x070002, 8, "serial")->host_use = HOST_USE_CONSOLE;
	add("0000:05:00.0", 0x8086, 0x1533, 0x020000, 9, "igb");
	s.mode = MODE_VM_PASSTHROUGH;
	pci_id_parse("8086:*", &s.ids[0]);
	s.n_ids = 1;
	build();
	expect("0000:03:00.0", ACT_SKIP, NULL, "the root file system's disk is behind it");
	expect("0000:04:00.0", ACT_SKIP, NULL, "a console= serial port is behind it");
	expect("0000:05:00.0", ACT_BIND, "vfio-pci", "selected by ids=");
	CHECK_INT(p.n_selected, 1, "only the other NIC is selected");
	/* exclude= on one of them: not named as a refusal, still never bound. */
	pci_addr_parse("0000:03:00.0", &s.exclude[0]);
	s.n_exclude = 1;
	build();
	CHECK(!p.dev[idx("0000:03:00.0")].listed, "excluded and the host's: not listed");
	s.n_exclude = 0;
}

/* A function whose uevent cannot be used: never taken, never silent. */
static void unidentified(void)
{
	struct pci_dev *d;
	const struct plan_group *g;

	/* The GPU itself: its vendor and device files say NVIDIA. */
	reset(true);
	d = add("0000:01:00.0", 0x10de, 0x1e87, 0x030000, 13, "");
	d->unidentified = true;
	d->unread_errno = EISDIR;
	add("0000:01:00.1", 0x10de, 0x10f8, 0x040300, 13, "snd_hda_intel");
	s.mode = MODE_VM_PASSTHROUGH;
	build();
	expect("0000:01:00.0", ACT_SKIP, NULL,
	       "not identified: its uevent could not be used (Is a directory)");
	expect("0000:01:00.0", ACT_SKIP, NULL,
	       "10de:1e87, which the default match selects, so vm-passthrough cannot be called reached");
	CHECK(p.dev[0].role == ROLE_UNIDENTIFIED && p.dev[0].failed && p.dev[0].listed &&
		      !p.dev[0].selected,
	      "unidentified: failed, listed, not selected");
	CHECK_INT(p.n_unidentified, 1, "counted against the outcome");
	CHECK_INT(p.n_selected, 0, "nothing selected");
	expect("0000:01:00.1", ACT_SKIP, NULL, "not selected");

	/* Nothing readable at all: vendor unknown. */
	d->vendor = d->device = 0xffff;
	d->class = 0xffffff;
	build();
	expect("0000:01:00.0", ACT_SKIP, NULL, "its vendor is unknown");
	CHECK_INT(p.n_unidentified, 1, "vendor unknown: counted");

	/* exclude= names it: not wanted, not counted, still reported. */
	pci_addr_parse("0000:01:00.0", &s.exclude[0]);
	s.n_exclude = 1;
	build();
	CHECK_INT(p.n_unidentified, 0, "excluded: not counted");
	CHECK(p.dev[0].listed && p.dev[0].role == ROLE_UNIDENTIFIED, "excluded: still listed");
	s.n_exclude = 0;

	/* Container: reported, not a failure. */
	s.mode = MODE_CONTAINER;
	build();
	expect("0000:01:00.0", ACT_SKIP, NULL, "left as it is");
	CHECK(!p.dev[0].failed && p.n_unidentified == 0, "container: not a failure");

	/* A companion slot-mate in the GPU's group: the group is not viable. */
	reset(true);
	add("0000:01:00.0", 0x10de, 0x2204, 0x030000, 2, "nouveau");
	d = add("0000:01:00.1", 0x10de, 0x1aef, 0x040300, 2, "");
	d->unidentified = true;
	d->unread_errno = EIO;
	s.mode = MODE_VM_PASSTHROUGH;
	build();
	g = group(2);
	CHECK(g && !g->viable && g->n_blocked == 1, "its group is not viable");
	expect("0000:01:00.0", ACT_HOLD, "vfio-pci",
	       "0000:01:00.1 could not be identified (Input/output error)");
	expect("0000:01:00.1", ACT_SKIP, NULL, "could not be used (Input/output error)");
	CHECK_INT(p.n_failed, 1, "the GPU failed");
	CHECK_INT(p.n_unidentified, 1, "and the slot-mate counts");

	/* In the slot but another group (ACS): the GPU binds, the outcome is not whole. */
	d->group = 3;
	d->vendor = 0x1b21; /* not NVIDIA: only the slot says it may belong */
	build();
	expect("0000:01:00.0", ACT_BIND, "vfio-pci", "in IOMMU group 2");
	expect("0000:01:00.1", ACT_SKIP, NULL, "it is a function of the slot of 0000:01:00.0");
	CHECK_INT(p.n_unidentified, 1, "slot-mate: counted");

	/* Elsewhere and not NVIDIA's: reported, not counted. */
	d->addr.dev = 5;
	pci_addr_format(&d->addr, d->name, sizeof(d->name));
	build();
	CHECK_INT(p.n_unidentified, 0, "a foreign unidentified function is not counted");
	CHECK(p.dev[1].listed && p.dev[1].role == ROLE_UNIDENTIFIED, "but listed");

	/* Never pending (ARM): an unidentified slot-mate is not taken along. */
	reset(true);
	inv.iommu.groups_at_probe = true;
	add("0000:01:00.0", 0x10de, 0x2204, 0x030000, -1, "");
	d = add("0000:01:00.1", 0x10de, 0x1aef, 0x040300, -1, "");
	d->unidentified = true;
	d->unread_errno = EIO;
	s.mode = MODE_VM_PASSTHROUGH;
	build();
	CHECK(!inventory_group_pending(&inv, d), "no pending group for it");
	expect("0000:01:00.1", ACT_SKIP, NULL, "never taken");
	CHECK_INT(p.n_unidentified, 1, "counted");
}

/* Group members that are no PCI function of this host: not viable, named. */
static void foreign_members(void)
{
	static struct foreign_member f[] = { { 2, "0000:05:00.0" },
					     { 2, "ACPI0007:00" },
					     { 9, "0000:06:00.0" } };
	const struct plan_group *g;

	reset(true);
	add("0000:01:00.0", 0x10de, 0x2204, 0x030000, 2, "nouveau");
	add("0000:01:00.1", 0x10de, 0x1aef, 0x040300, 2, "snd_hda_intel");
	add("0000:02:00.0", 0x10de, 0x2204, 0x030000, 4, "nouveau");
	inv.foreign = f;
	inv.n_foreign = ARRAY_SIZE(f);
	s.mode = MODE_VM_PASSTHROUGH;
	build();
	g = group(2);
	CHECK(g && !g->viable && g->n_blocked == 0 && g->n_foreign == 2,
	      "group 2: not viable, two foreign");
	CHECK(g && g->n_foreign == 2 && !strcmp(g->foreign[1].name, "ACPI0007:00"), "named");
	expect("0000:01:00.0", ACT_HOLD, "vfio-pci",
	       "its member 0000:05:00.0 is not a PCI function this host lists");
	expect("0000:01:00.0", ACT_HOLD, "vfio-pci", "among others");
	expect("0000:01:00.1", ACT_HOLD, "vfio-pci", "not viable");
	g = group(4);
	CHECK(g && g->viable && g->n_foreign == 0, "group 4 (no foreign member) is viable");
	expect("0000:02:00.0", ACT_BIND, "vfio-pci", "in IOMMU group 4");
	inv.foreign = NULL;
	inv.n_foreign = 0;
}

static void add_gpu_pick(const char *addr, int numa)
{
	struct gpu_pick *g = &s.gpus[s.n_gpus++];

	g->numa = numa;
	if (addr)
		pci_addr_parse(addr, &g->addr);
}

/*
 * gpus=: in a VM mode only what it selects goes to vfio; the other GPUs stay with the host,
 * a group that holds both stays whole with the host, container mode is unchanged, and the
 * hold takes every candidate while the config is not known.
 */
static void gpus_split(void)
{
	const struct plan_group *g;
	char addr[16];
	int i;

	reset(true);
	for (i = 0; i < 8; i++) {
		snprintf(addr, sizeof(addr), "0000:%02x:00.0", 0x18 + i * 0x10);
		add(addr, 0x10de, 0x2330, 0x030200, 30 + i, "nvidia")->numa = (int8_t)(i / 4);
		snprintf(addr, sizeof(addr), "0000:%02x:00.1", 0x18 + i * 0x10);
		add(addr, 0x10de, 0x22ba, 0x040300, 30 + i, "snd_hda_intel");
	}
	s.mode = MODE_VM_PASSTHROUGH;
	settings_set_from(&s, KEY_MODE, FROM_CONFIG, "gpuvm.conf:1");
	add_gpu_pick(NULL, 1); /* GPUs 4-7 */
	build();
	CHECK_INT(p.n_selected, 4, "gpus=numa:1: 4 GPUs selected");
	CHECK_INT(p.n_groups, 4, "gpus=numa:1: their 4 groups");
	expect("0000:58:00.0", ACT_BIND, "vfio-pci", "selected by gpus= in IOMMU group 34");
	expect("0000:58:00.1", ACT_BIND, "vfio-pci", "companion of 0000:58:00.0");
	expect("0000:18:00.0", ACT_KEEP, NULL, "not selected by gpus= (default): left on nvidia");
	expect("0000:18:00.1", ACT_KEEP, NULL, "companion of 0000:18:00.0: left on snd_hda_intel");
	CHECK(p.dev[idx("0000:18:00.0")].pick == PICK_OUT && !p.dev[idx("0000:18:00.0")].selected,
	      "gpus=: picked out, not selected");

	/* An address: that GPU alone. One on vfio-pci from before goes back to the host. */
	s.n_gpus = 0;
	add_gpu_pick("0000:28:00.0", -1);
	devs[idx("0000:78:00.0")].driver = "vfio-pci";
	devs[idx("0000:78:00.0")].override = "vfio-pci";
	build();
	CHECK_INT(p.n_selected, 1, "gpus=ADDR: one GPU");
	expect("0000:28:00.0", ACT_BIND, "vfio-pci", "selected by gpus=");
	expect("0000:78:00.0", ACT_UNBIND, NULL, "not selected by gpus= (default): off vfio-pci");
	expect("0000:18:00.0", ACT_KEEP, NULL, "not selected by gpus=");

	/* exclude= wins over gpus=. */
	add_exclude("0000:28:00.0");
	build();
	CHECK_INT(p.n_selected, 0, "exclude= wins over gpus=");
	expect("0000:28:00.0", ACT_SKIP, NULL, "excluded by exclude=");
	s.n_exclude = 0;

	/* ids= narrows what gpus= may take: a GPU it does not match is not taken. */
	pci_id_parse("10de:2204", &s.ids[0]);
	s.n_ids = 1;
	build();
	CHECK_INT(p.n_selected, 0, "ids= and gpus= both: a GPU must match both");
	expect("0000:28:00.0", ACT_SKIP, NULL, "not selected");
	s.n_ids = 0;

	/* vm-vgpu: the selected GPU reserved for nvidia, the others left as they are. */
	s.mode = MODE_VM_VGPU;
	build();
	expect("0000:28:00.0", ACT_RESERVE, "nvidia", "GPU 10de:2330 selected by gpus=");
	expect("0000:38:00.0", ACT_KEEP, NULL, "not selected by gpus=");

	/* Container mode: gpus= changes nothing. */
	s.mode = MODE_CONTAINER;
	build();
	CHECK_INT(p.n_selected, 8, "container: gpus= changes nothing");
	expect("0000:38:00.0", ACT_KEEP, NULL, "selected by the default match");

	/* The hold at boot takes every candidate: the config may select any of them. */
	held("0000:38:00.0");
	devs[idx("0000:18:00.0")].driver = "";
	build_hold();
	expect("0000:18:00.0", ACT_HOLD, HOLD_OVERRIDE, "while gpuvm waits");
	expect("0000:38:00.0", ACT_KEEP, HOLD_OVERRIDE, "held while gpuvm waits");
	/* ... and the plan with the config releases the held ones it does not select. */
	s.mode = MODE_VM_PASSTHROUGH;
	build();
	expect("0000:38:00.0", ACT_UNBIND, NULL,
	       "not selected by gpus= (default): held while gpuvm waited for its config; released");
	expect("0000:28:00.0", ACT_BIND, "vfio-pci", NULL);

	/* Two GPUs in one group, one selected: the group is not split, the host keeps both. */
	reset(true);
	add("0000:05:00.0", 0x10b5, 0x8747, 0x060400, 20, "pcieport");
	add("0000:06:00.0", 0x10de, 0x2204, 0x030000, 20, "nvidia");
	add("0000:06:00.1", 0x10de, 0x1aef, 0x040300, 20, NULL);
	add("0000:07:00.0", 0x10de, 0x2204, 0x030000, 20, "nvidia");
	add("0000:07:00.1", 0x10de, 0x1aef, 0x040300, 20, NULL);
	add("0000:08:00.0", 0x10de, 0x2204, 0x030000, 21, "vfio-pci")->override = "vfio-pci";
	s.mode = MODE_VM_PASSTHROUGH;
	settings_set_from(&s, KEY_MODE, FROM_CONFIG, "gpuvm.conf:1");
	add_gpu_pick("0000:06:00.0", -1);
	add_gpu_pick("0000:08:00.0", -1);
	build();
	CHECK_INT(p.n_selected, 1, "split group: only the GPU of a whole group stays selected");
	CHECK_INT(p.n_failed, 0, "split group: no failure, the host keeps it");
	g = group(20);
	CHECK(g == NULL, "split group: group 20 not planned for vfio");
	expect("0000:06:00.0", ACT_KEEP, NULL,
	       "but IOMMU group 20 also holds 0000:07:00.0, which gpus= does not select");
	CHECK(p.dev[idx("0000:06:00.0")].pick == PICK_SPLIT, "split group: picked, then refused");
	expect("0000:07:00.0", ACT_KEEP, NULL, "not selected by gpus=");
	expect("0000:08:00.0", ACT_KEEP, "vfio-pci", "selected by gpus= in IOMMU group 21");
	/* A GPU of the split group on vfio-pci goes back to the host. */
	devs[idx("0000:06:00.0")].driver = "vfio-pci";
	build();
	expect("0000:06:00.0", ACT_UNBIND, NULL, "a group is not split");
	/* Both selected: the group goes whole. */
	add_gpu_pick("0000:07:00.0", -1);
	build();
	CHECK_INT(p.n_selected, 3, "both GPUs of the group selected: 3");
	expect("0000:07:00.0", ACT_BIND, "vfio-pci", "selected by gpus= in IOMMU group 20");
	expect("0000:06:00.0", ACT_BIND, "vfio-pci", NULL);
	plan_free(&p);
}

int main(void)
{
	log_setup(false, 0);
	/* A node may have 10,000 functions: the plan keeps one of these each. */
	CHECK(sizeof(struct plan_dev) <= 24, "a plan entry takes %zu bytes, at most 24",
	      sizeof(struct plan_dev));
	workstation();
	no_iommu();
	gpu_with_nic();
	two_gpus_one_group();
	hgx();
	sriov();
	vgpu_arch();
	domains();
	variants_and_groupless();
	smmu_pending();
	hold_plan();
	holds_released();
	host_needs_rule();
	unidentified();
	foreign_members();
	gpus_split();
	plan_free(&p);
	log_close();
	return unit_done();
}
