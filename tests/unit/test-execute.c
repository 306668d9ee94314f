// SPDX-License-Identifier: MIT
/*
 * apply against the fake kernel: the whole flow (settings, inventory, plan, execute,
 * state file) with a fault at every step that can fail, each with its outcome.
 */
#include <errno.h>

#include "execute.h"
#include "fake-kernel.h"
#include "json.h"
#include "log.h"
#include "cmd/cmd.h"
#include "unit-log.h"
#include "unit.h"

#define GPU "0000:01:00.0"
#define AUD "0000:01:00.1"
#define NIC "0000:02:00.0"
#define PT "gpuvm.mode=vm-passthrough"

static struct outcome out;

static void apply(const char *cmdline)
{
	struct options o = { .cmdline = cmdline };

	log_close();
	log_setup(false, 0);
	memset(&out, 0, sizeof(out));
	cmd_apply.run(&o, &out);
}

static bool state_has(const char *needle)
{
	const char *st = fk_state();
	bool ok = st && strstr(st, needle);

	if (!ok)
		printf("#   state file lacks '%s'\n", needle);
	return ok;
}

/*
 * The value of key in the state file's entry for the device at addr, as the JSON text has
 * it ("null", "\"/dev/vfio/1\""), in buf; "" when there is no such entry or key.
 */
static const char *dev_value(const char *addr, const char *key, char *buf, size_t size)
{
	const char *st = fk_state(), *at, *next, *v;
	char want[64];
	size_t n;

	buf[0] = '\0';
	snprintf(want, sizeof(want), "\"address\": \"%s\"", addr);
	if (!st || !(at = strstr(st, want)))
		return buf;
	next = strstr(at + 1, "\"address\": ");
	snprintf(want, sizeof(want), "\"%s\": ", key);
	v = strstr(at, want);
	if (!v || (next && v > next))
		return buf;
	v += strlen(want);
	n = strcspn(v, ",\n}");
	snprintf(buf, size, "%.*s", (int)n, v);
	return buf;
}

/* A consumer GPU and its audio function in one group; nouveau and vfio-pci as modules. */
static void host(bool iommu)
{
	fk_reset(iommu);
	fk_add(GPU, 0x10de, 0x2204, 0x030000, 1, "nouveau", NULL);
	fk_add(AUD, 0x10de, 0x1aef, 0x040300, 1, "snd_hda_intel", NULL);
	fk_driver_loaded("nouveau");
	fk_driver_loaded("snd_hda_intel");
	fk_module("vfio-pci", "vfio-pci");
}

static void passthrough(void)
{
	const char *st;

	host(true);
	apply(PT);
	CHECK_STR(fk_driver(GPU), "vfio-pci", "GPU bound to vfio-pci");
	CHECK_STR(fk_driver(AUD), "vfio-pci", "audio bound to vfio-pci");
	CHECK_STR(fk_override(GPU), "vfio-pci", "override kept for after switch_root");
	CHECK_INT(fk_modules_loaded(), 1, "vfio-pci loaded once");
	CHECK(!out.error && out.failed == 0 && out.ok == 1, "outcome ok");
	st = fk_state();
	CHECK(st && json_valid(st, strlen(st)), "state file is valid JSON");
	CHECK(state_has("\"result\": \"ok\"") && state_has("\"driver_before\": \"nouveau\"") &&
		      state_has("\"driver_after\": \"vfio-pci\"") && state_has("\"verified\": true") &&
		      state_has("\"elapsed_us\"") && state_has("\"kernel\": \"6.1.0-fake\"") &&
		      state_has("\"mode_source\": \"cmdline\"") && state_has("\"loaded\": true"),
	      "state file fields");

	/* Without /proc/bus/pci/devices: the same from every function's uevent. */
	host(true);
	fk_no_proc_pci();
	apply(PT);
	CHECK(strcmp(fk_driver(GPU), "vfio-pci") == 0 && strcmp(fk_driver(AUD), "vfio-pci") == 0 &&
		      out.ok == 1 && out.failed == 0,
	      "without /proc/bus/pci/devices: GPU and audio on vfio-pci");
	{
		/* A function no plan looks at, named with another's IDs: it stays as it is. */
		host(true);
		fk_add(NIC, 0x8086, 0x1572, 0x020000, 2, "i40e", NULL);
		apply(PT);
		CHECK(strcmp(fk_driver(NIC), "i40e") == 0 && out.ok == 1,
		      "a NIC beside the GPU: left on i40e");
	}

	/* The race: nouveau comes again (udev, modprobe) and finds nothing to take. */
	fk_load_driver("nouveau");
	CHECK_STR(fk_driver(GPU), "vfio-pci", "a later nouveau does not take it");

	/* Idempotent. */
	{
		int before = fk_writes();

		apply(PT);
		CHECK_INT(fk_writes() - before, 0, "second run writes nothing");
		CHECK(state_has("\"result\": \"noop\""), "second run is a noop");
		CHECK(out.failed == 0, "and succeeds");
	}
}

static void no_iommu(void)
{
	host(false);
	apply(PT);
	CHECK(out.iommu_unusable, "IOMMU unusable reported");
	CHECK_STR(fk_driver(GPU), "", "hold: GPU on no driver");
	CHECK_STR(fk_override(GPU), "vfio-pci", "hold: override keeps other drivers off");
	CHECK_STR(fk_driver(AUD), "", "hold: audio too");
	CHECK_INT(fk_modules_loaded(), 0, "vfio-pci not loaded without an IOMMU");
	fk_load_driver("nouveau");
	CHECK_STR(fk_driver(GPU), "", "nouveau loaded later does not take a held GPU");
	CHECK(unit_logged("IOMMU is not active"), "the error says why");
	CHECK(state_has("\"result\": \"held\""), "state: held");

	host(false);
	apply(PT " gpuvm.on_error=release");
	CHECK_STR(fk_driver(GPU), "nouveau", "release: left on nouveau");
	CHECK_STR(fk_override(GPU), "", "release: no override");
	CHECK(state_has("\"result\": \"released\""), "state: released");

	/* Stale vfio bind on a host without IOMMU (impossible in life, but the code path). */
	host(false);
	fk_set_override(GPU, "vfio-pci");
	apply(PT " gpuvm.on_error=release");
	CHECK_STR(fk_override(GPU), "", "release clears a vfio override");
	CHECK_STR(fk_driver(GPU), "nouveau", "and nouveau is not blocked");
}

static void group_and_probe(void)
{
	/* A device without a group: vfio-pci's probe fails, the write succeeds. */
	fk_reset(true);
	fk_add(GPU, 0x10de, 0x2204, 0x030000, -1, "nouveau", NULL);
	fk_driver_loaded("nouveau");
	fk_module("vfio-pci", "vfio-pci");
	apply(PT);
	CHECK_STR(fk_driver(GPU), "", "groupless GPU held");
	CHECK(unit_logged("no IOMMU group"), "and the plan says why");

	/* A NIC in the group: not viable, the NIC is untouched. */
	host(true);
	fk_add(NIC, 0x8086, 0x1533, 0x020000, 1, "igb", NULL);
	fk_driver_loaded("igb");
	apply(PT);
	CHECK_STR(fk_driver(NIC), "igb", "the foreign NIC is never touched");
	CHECK_STR(fk_override(NIC), "", "not even its override");
	CHECK_STR(fk_driver(GPU), "", "GPU held");
	CHECK(unit_logged("0000:02:00.0 (8086:1533, igb)"), "the blocker is named");
	CHECK(!out.iommu_unusable && out.failed == 1 && out.ok == 0, "outcome failed");
}

struct fault_case {
	const char *what;
	int nth, err;
	const char *gpu_driver, *aud_driver, *needle;
};

static void faults(void)
{
	static const struct fault_case t[] = {
		/* The GPU's override write refused: the group stops, both held. */
		{ GPU "/driver_override", 1, -EPERM, "", "",
		  "write 'vfio-pci' to driver_override: Operation not permitted" },
		/* Hot-unplugged between scan and bind. */
		{ GPU "/driver_override", 1, -ENOENT, "", "", "No such file or directory" },
		/* nouveau will not let go, every time: it stays, with the override set. */
		{ "drivers/nouveau/unbind", 0, -EBUSY, "nouveau", "",
		  "unbind from nouveau: Device or resource busy" },
		/* A driver that hangs in remove(). */
		{ "drivers/nouveau/unbind", 0, -ETIMEDOUT, "nouveau", "", "no answer in time" },
		/* The companion fails after the GPU bound: the GPU is taken off vfio-pci too. */
		{ "drivers/snd_hda_intel/unbind", 0, -EIO, "", "snd_hda_intel",
		  "unbind from snd_hda_intel: Input/output error" },
		{ "drivers_probe", 1, -EIO, "", "", "write to drivers_probe: Input/output error" },
		/* The probe write "succeeds" and nothing binds: only the link tells. */
		{ "drivers_probe", 2, -EINVAL, "", "", "probe did not bind vfio-pci" },
		{ "mod:vfio-pci", 1, -ENOENT, "", "",
		  "vfio-pci (/lib/modules/6.1.0-fake/vfio-pci.ko): No such file" },
		{ "mod:vfio-pci", 1, -EPERM, "", "", "Operation not permitted" },
		{ "mod:vfio-pci", 1, -ENOEXEC, "", "", "Exec format error" },
		/* Hot-unplugged before the scan read it: gone, whichever way it looks again. */
		{ "r:" GPU "/uevent", 0, -ENOENT, "nouveau", "snd_hda_intel", NULL },
		/* The GPU's group cannot be read, by its link or by its listing: held, not bound. */
		{ "r:" GPU "/iommu_group", 1, -EACCES, "", "", "an IOMMU group could not be read" },
		{ "r:sys/kernel/iommu_groups/1/devices", 1, -EIO, "", "",
		  "an IOMMU group could not be read" },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		host(true);
		fk_fault(t[i].what, t[i].nth, t[i].err);
		apply(PT);
		CHECK_STR(fk_driver(GPU), t[i].gpu_driver, "fault %zu (%s %d): GPU driver", i,
			  t[i].what, t[i].err);
		CHECK_STR(fk_driver(AUD), t[i].aud_driver, "fault %zu: audio driver", i);
		if (!t[i].needle) {
			/* Vanished before the scan: not seen, nothing selected, nothing done. */
			CHECK(out.failed == 0 && out.selected == 0, "fault %zu: nothing selected", i);
			continue;
		}
		CHECK(unit_logged(t[i].needle), "fault %zu: error names the step", i);
		CHECK(out.failed == 1 && out.ok == 0, "fault %zu: outcome failed", i);
		CHECK(fk_state() && json_valid(fk_state(), strlen(fk_state())),
		      "fault %zu: state file valid", i);
		/* Whatever failed, nouveau coming later must not take a GPU meant for a VM... */
		if (strcmp(t[i].gpu_driver, "nouveau") != 0) {
			fk_load_driver("nouveau");
			CHECK(strcmp(fk_driver(GPU), "nouveau") != 0,
			      "fault %zu: GPU stays off nouveau (hold)", i);
		}
	}

	/* A function no plan looks at: its group is never read, so its link cannot stop a bind. */
	host(true);
	fk_add(NIC, 0x8086, 0x1572, 0x020000, 2, "i40e", NULL);
	fk_fault("r:" NIC "/iommu_group", 0, -EACCES);
	apply(PT);
	CHECK_STR(fk_driver(GPU), "vfio-pci",
		  "a foreign NIC's unreadable iommu_group link: the GPU is bound");
	CHECK(fk_faults_fired() == 0, "and that link was never read (its group is not the GPU's)");

	/*
	 * The module directory is gone (or libkmod cannot use it) while vfio-pci is in the
	 * kernel already: the driver is registered, so the binds go on.
	 */
	host(true);
	fk_load_driver("vfio-pci");
	fk_fault("mod:vfio-pci", 1, -ENOENT);
	apply(PT);
	CHECK_STR(fk_driver(GPU), "vfio-pci", "no module directory, vfio-pci registered: bound");
	CHECK(out.failed == 0 && out.ok == 1, "and the outcome is ok");

	/* on_error=release after a failed companion: both back on the host. */
	host(true);
	fk_fault("drivers/snd_hda_intel/unbind", 0, -EIO);
	apply(PT " gpuvm.on_error=release");
	CHECK_STR(fk_driver(GPU), "nouveau", "release: the bound GPU goes back to nouveau");
	CHECK_STR(fk_override(GPU), "", "release: override cleared");
	CHECK_STR(fk_driver(AUD), "snd_hda_intel", "release: audio stays");
	CHECK(state_has("\"result\": \"released\""), "state says released");

	/* The state file cannot be written: logged, the outcome stands. */
	host(true);
	fk_fault("state", 1, -EROFS);
	apply(PT);
	CHECK(unit_logged("cannot write /run/gpuvm/state.json: Read-only file system"),
	      "state write failure logged");
	CHECK_STR(fk_driver(GPU), "vfio-pci", "and the bind stands");
	CHECK(out.failed == 0, "outcome still ok");

	/* The device list cannot be read at all: neither /proc/bus/pci nor the listing. */
	host(true);
	fk_fault("r:proc/bus/pci", 0, -EACCES);
	fk_fault("r:sys/bus/pci/devices", 0, -EACCES);
	apply(PT);
	CHECK(out.error, "an unreadable /sys/bus/pci/devices is an error");
	CHECK(unit_logged("cannot read the PCI devices"), "and says so");
}

static void container_and_vgpu(void)
{
	/* A stale vfio bind undone. */
	host(true);
	fk_load_driver("vfio-pci");
	fk_set_override(GPU, "vfio-pci");
	fk_set_override(AUD, "vfio-pci");
	fk_reset(true);
	fk_add(GPU, 0x10de, 0x2204, 0x030000, 1, "vfio-pci", "nouveau");
	fk_add(AUD, 0x10de, 0x1aef, 0x040300, 1, "vfio-pci", "snd_hda_intel");
	fk_set_override(GPU, "vfio-pci");
	fk_set_override(AUD, "vfio-pci");
	fk_driver_loaded("vfio-pci");
	fk_driver_loaded("nouveau");
	fk_driver_loaded("snd_hda_intel");
	apply("gpuvm.mode=container");
	CHECK_STR(fk_driver(GPU), "nouveau", "container: GPU back on nouveau");
	CHECK_STR(fk_driver(AUD), "snd_hda_intel", "container: audio back on snd_hda_intel");
	CHECK_STR(fk_override(GPU), "", "container: override cleared");
	CHECK(out.failed == 0 && out.ok == 1, "container outcome ok");

	/* vfio-pci.ids= put the device on vfio-pci by ID: the ID must go, or it comes back. */
	fk_reset(true);
	fk_add(GPU, 0x10de, 0x2204, 0x030000, 1, "vfio-pci", "nouveau");
	fk_driver_loaded("vfio-pci");
	fk_driver_loaded("nouveau");
	fk_dynid("vfio-pci", 0x10de, 0x2204);
	apply("gpuvm.mode=container");
	CHECK_STR(fk_driver(GPU), "nouveau", "container: a vfio-pci.ids= bind is undone");
	CHECK(out.failed == 0, "and that is success");
	fk_load_driver("vfio-pci");
	CHECK_STR(fk_driver(GPU), "nouveau", "vfio-pci no longer claims the ID");

	/* vm-vgpu: reserved for nvidia, which is not loaded yet in the initramfs. */
	host(true);
	fk_set_sriov(GPU, 0);
	apply("gpuvm.mode=vm-vgpu");
	CHECK_STR(fk_override(GPU), "nvidia", "vgpu: reserved for nvidia");
	CHECK_STR(fk_driver(GPU), "", "vgpu: off nouveau");
	CHECK_STR(fk_driver(AUD), "snd_hda_intel", "vgpu: audio untouched");
	CHECK(state_has("\"vgpu\": \"mdev\""), "vgpu method reported");
	fk_load_driver("nouveau");
	CHECK_STR(fk_driver(GPU), "", "nouveau cannot take a reserved GPU");
	fk_load_driver("nvidia");
	CHECK_STR(fk_driver(GPU), "nvidia", "nvidia can");
	CHECK(out.failed == 0, "vgpu outcome ok");
}

static void variant(void)
{
	fk_reset(true);
	fk_add("0009:01:00.0", 0x10de, 0x2342, 0x030200, 3, NULL, NULL);
	fk_module("vfio-pci", "vfio-pci");
	fk_module("nvgrace_gpu_vfio_pci", "nvgrace_gpu_vfio_pci");
	fk_variant("pci:v000010DEd00002342", "nvgrace_gpu_vfio_pci");
	apply(PT);
	CHECK_STR(fk_driver("0009:01:00.0"), "nvgrace_gpu_vfio_pci", "bound to the variant driver");
	CHECK_STR(fk_override("0009:01:00.0"), "nvgrace_gpu_vfio_pci", "override names the variant");
}

/*
 * An ARM SMMUv3 described by firmware gives a device its IOMMU group at its first
 * probe. Before gpuvm runs, the GH200 stand-in and its NVMe neighbour's slot-mate have none.
 */
static void smmu_groups_at_probe(void)
{
	const char *gh = "0009:01:00.0", *nvme = "0008:01:00.0";

	fk_reset(true);
	fk_smmu();
	fk_add(gh, 0x10de, 0x2342, 0x030200, -1, NULL, NULL);
	fk_add(nvme, 0x144d, 0xa80a, 0x010802, 7, "nvme", NULL);
	fk_driver_loaded("nvme");
	fk_module("vfio-pci", "vfio-pci");
	apply(PT);
	CHECK_STR(fk_driver(gh), "vfio-pci", "SMMU: bound although it had no group before");
	CHECK_STR(fk_driver(nvme), "nvme", "SMMU: the NVMe device is left alone");
	CHECK(!out.error && out.failed == 0 && out.ok == 1, "SMMU: outcome ok");
	CHECK(state_has("\"groups_at_probe\": true") && state_has("\"pending\": true") &&
		      state_has("\"iommu_group\": 100") && state_has("\"unit\": \"smmu3.0x"),
	      "SMMU: the state file has the group the probe gave");

	/* The same device without a group under Intel's DMAR is outside the IOMMU: held. */
	fk_reset(true);
	fk_add(gh, 0x10de, 0x2342, 0x030200, -1, NULL, NULL);
	fk_module("vfio-pci", "vfio-pci");
	apply(PT);
	CHECK_STR(fk_driver(gh), "", "DMAR: a device without a group is not bound");
	CHECK_STR(fk_override(gh), "vfio-pci", "DMAR: held (on_error=hold)");
	CHECK(out.failed == 1 && unit_logged("no IOMMU group"),
	      "DMAR: it fails, naming the missing group");

	/* No IOMMU at all on arm64: the problem is still named. */
	fk_reset(false);
	fk_add(gh, 0x10de, 0x2342, 0x030200, -1, NULL, NULL);
	fk_module("vfio-pci", "vfio-pci");
	apply(PT);
	CHECK_STR(fk_driver(gh), "", "no IOMMU: not bound");
	CHECK(out.failed == 1 && unit_logged("IOMMU is not active"), "no IOMMU: named");
}

/*
 * The vfio nodes in the state file, as each kernel shows them: the group's /dev/vfio/GROUP
 * (class vfio's device), and the device's own /dev/vfio/devices/vfioN where vfio-dev/vfioN
 * has a char device (CONFIG_VFIO_DEVICE_CDEV); from 6.1 vfio-dev/vfioN is there without one.
 */
static void vfio_nodes(void)
{
	char b[64];

	/* 6.1 (the fake's default): the group device, no cdev. */
	host(true);
	apply(PT);
	CHECK_STR(dev_value(GPU, "vfio_group", b, sizeof(b)), "\"/dev/vfio/1\"",
		  "6.1: GPU's group device");
	CHECK_STR(dev_value(AUD, "vfio_group", b, sizeof(b)), "\"/dev/vfio/1\"", "6.1: audio's too");
	CHECK_STR(dev_value(GPU, "vfio_cdev", b, sizeof(b)), "null", "6.1: vfio-dev/vfio0 but no cdev");

	/* With CONFIG_VFIO_DEVICE_CDEV: one cdev a device, in the order they were bound. */
	host(true);
	fk_vfio(2, true);
	apply(PT);
	CHECK_STR(dev_value(GPU, "vfio_group", b, sizeof(b)), "\"/dev/vfio/1\"", "cdev: group device");
	CHECK_STR(dev_value(GPU, "vfio_cdev", b, sizeof(b)), "\"/dev/vfio/devices/vfio0\"",
		  "cdev: the GPU's");
	CHECK_STR(dev_value(AUD, "vfio_cdev", b, sizeof(b)), "\"/dev/vfio/devices/vfio1\"",
		  "cdev: the audio function's");
	/* Already there at the next apply (nothing written): still reported. */
	apply(PT);
	CHECK(state_has("\"result\": \"noop\""), "cdev: the second apply is a noop");
	CHECK_STR(dev_value(GPU, "vfio_cdev", b, sizeof(b)), "\"/dev/vfio/devices/vfio0\"",
		  "cdev: a device kept on vfio-pci has its nodes reported");
	CHECK_STR(dev_value(AUD, "vfio_group", b, sizeof(b)), "\"/dev/vfio/1\"",
		  "cdev: and its group device");

	/* 5.10: no vfio-dev at all. */
	host(true);
	fk_vfio(0, true);
	apply(PT);
	CHECK_STR(dev_value(GPU, "vfio_group", b, sizeof(b)), "\"/dev/vfio/1\"", "5.10: group device");
	CHECK_STR(dev_value(GPU, "vfio_cdev", b, sizeof(b)), "null", "5.10: no cdev");

	/* A kernel with the cdev and without group devices (CONFIG_VFIO_GROUP unset). */
	host(true);
	fk_vfio(2, false);
	apply(PT);
	CHECK_STR(dev_value(GPU, "vfio_group", b, sizeof(b)), "null", "cdev only: no group device");
	CHECK_STR(dev_value(GPU, "vfio_cdev", b, sizeof(b)), "\"/dev/vfio/devices/vfio0\"",
		  "cdev only: the cdev");

	/* The listing cannot be read: no cdev named, the bind stands. */
	host(true);
	fk_vfio(2, true);
	fk_fault("r:" GPU "/vfio-dev", 0, -EACCES);
	apply(PT);
	CHECK_STR(dev_value(GPU, "vfio_cdev", b, sizeof(b)), "null", "unreadable vfio-dev: null");
	CHECK(fk_faults_fired() == 1 && out.failed == 0 && out.ok == 1, "and the outcome is ok");

	/* Held without an IOMMU: on no driver, no node. */
	host(false);
	fk_vfio(2, true);
	apply(PT);
	CHECK_STR(dev_value(GPU, "vfio_group", b, sizeof(b)), "null", "held: no group device");
	CHECK_STR(dev_value(GPU, "vfio_cdev", b, sizeof(b)), "null", "held: no cdev");

	/* Container mode takes a stale bind off vfio-pci: its nodes are gone. */
	fk_reset(true);
	fk_vfio(2, true);
	fk_add(GPU, 0x10de, 0x2204, 0x030000, 1, "vfio-pci", "nouveau");
	fk_set_override(GPU, "vfio-pci");
	fk_driver_loaded("vfio-pci");
	fk_driver_loaded("nouveau");
	apply("gpuvm.mode=container");
	CHECK_STR(fk_driver(GPU), "nouveau", "container: back on nouveau");
	CHECK_STR(dev_value(GPU, "vfio_group", b, sizeof(b)), "null", "container: no group device");
	CHECK_STR(dev_value(GPU, "vfio_cdev", b, sizeof(b)), "null", "container: no cdev");

	/* An SMMU: the group the probe gave names the group device. */
	fk_reset(true);
	fk_smmu();
	fk_add("0009:01:00.0", 0x10de, 0x2342, 0x030200, -1, NULL, NULL);
	fk_module("vfio-pci", "vfio-pci");
	apply(PT);
	CHECK_STR(dev_value("0009:01:00.0", "vfio_group", b, sizeof(b)), "\"/dev/vfio/100\"",
		  "SMMU: the group device of the group given at probe");
}

int main(void)
{
	/* A node may have 10,000 functions: the results keep one of these each. */
	CHECK(sizeof(struct exec_dev) <= 24, "a result entry takes %zu bytes, at most 24",
	      sizeof(struct exec_dev));
	passthrough();
	no_iommu();
	group_and_probe();
	faults();
	container_and_vgpu();
	variant();
	smmu_groups_at_probe();
	vfio_nodes();
	fk_reset(false);
	log_close();
	return unit_done();
}
