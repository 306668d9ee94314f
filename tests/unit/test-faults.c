// SPDX-License-Identifier: MIT
/*
 * Every sysfs read and every write (module loads and the state file included) fails in
 * turn: apply against the fake kernel with the Nth read, or the Nth write, failing, for
 * every N a run reaches, in each mode. Whatever fails, the outcome must be the truth:
 *  - in vm-passthrough a group is all or nothing (the GPU and its audio function both on
 *    vfio-pci, or neither);
 *  - as many devices reached their state as the outcome says (never fewer): on vfio-pci in
 *    vm-passthrough, off vfio in container, reserved for nvidia in vm-vgpu;
 *  - a device gpuvm did not select is left exactly as it was;
 *  - a state file, when written, is valid JSON.
 * tests/unit/test-execute.c names the outcome of each fault; this one proves there is no
 * read or write left whose failure breaks those rules. The boot's first call, which holds
 * GPUs for a later call (the root's config, or config='s disk), meets every write failing
 * in turn too: a GPU is never left on gpuvm-hold unless the record that later call reads
 * names it (else the hold outlives the boot).
 */
#include <errno.h>
#include <string.h>

#include "fake-kernel.h"
#include "json.h"
#include "log.h"
#include "cmd/cmd.h"
#include "unit.h"

#define GPU "0000:01:00.0"
#define AUD "0000:01:00.1"
#define GPU2 "0000:02:00.0"

enum want {
	VFIO,
	HOST,
	NVIDIA
};

static const struct mode_case {
	const char *name;
	const char *cmdline;
	enum want want;
	bool stale; /* the GPUs start on vfio-pci, with its override */
} modes[] = {
	{ "vm-passthrough, hold", "gpuvm.mode=vm-passthrough", VFIO, false },
	{ "vm-passthrough, release", "gpuvm.mode=vm-passthrough gpuvm.on_error=release", VFIO, false },
	{ "container, stale vfio", "gpuvm.mode=container", HOST, true },
	{ "vm-vgpu", "gpuvm.mode=vm-vgpu", NVIDIA, false },
};

static void host(bool stale)
{
	fk_reset(true);
	fk_add(GPU, 0x10de, 0x2204, 0x030000, 1, stale ? "vfio-pci" : "nouveau", "nouveau");
	fk_add(AUD, 0x10de, 0x1aef, 0x040300, 1, stale ? "vfio-pci" : "snd_hda_intel", "snd_hda_intel");
	fk_add(GPU2, 0x10de, 0x2204, 0x030000, 2, stale ? "vfio-pci" : "nouveau", "nouveau");
	/* A device gpuvm must never touch. */
	fk_add("0000:03:00.0", 0x8086, 0x1533, 0x020000, 3, "igb", "igb");
	fk_driver_loaded("nouveau");
	fk_driver_loaded("snd_hda_intel");
	fk_driver_loaded("igb");
	fk_driver_loaded("nvidia");
	fk_module("vfio-pci", "vfio-pci");
	if (stale) {
		fk_driver_loaded("vfio-pci");
		fk_set_override(GPU, "vfio-pci");
		fk_set_override(AUD, "vfio-pci");
		fk_set_override(GPU2, "vfio-pci");
	}
}

static bool on_vfio(const char *a)
{
	return strcmp(fk_driver(a), "vfio-pci") == 0;
}

static bool reached(const char *a, enum want w)
{
	switch (w) {
	case VFIO:
		return on_vfio(a);
	case HOST:
		return !on_vfio(a) && strcmp(fk_override(a), "vfio-pci") != 0;
	case NVIDIA:
		return strcmp(fk_override(a), "nvidia") == 0 && !on_vfio(a);
	}
	return false;
}

/* Runs whose outcome was held against the devices (not those that ended in an error). */
static int truth_checked;

/* One run with the Nth read (read) or write failing; false when no fault fired. */
static bool run_one(const struct mode_case *m, bool read, int n)
{
	struct options o = { .cmdline = m->cmdline };
	struct outcome out;
	const char *st;
	bool fired;

	host(m->stale);
	fk_fault(read ? "r:" : "", n, -EIO);
	log_setup(false, 0);
	memset(&out, 0, sizeof(out));
	cmd_apply.run(&o, &out);
	fired = fk_faults_fired() > 0;
	if (!fired) {
		log_close();
		return false;
	}
	if (m->want == VFIO) /* a host-side mode releases functions one by one */
		CHECK(on_vfio(GPU) == on_vfio(AUD), "%s, %s %d fails: group 1 whole (GPU %s, audio %s)",
		      m->name, read ? "read" : "write", n, fk_driver(GPU), fk_driver(AUD));
	/*
	 * What the outcome says reached its state did (a failed verification may make it say
	 * less than reality: never more).
	 */
	if (!out.error) {
		truth_checked++;
		CHECK((size_t)(reached(GPU, m->want) + reached(GPU2, m->want)) >= out.ok,
		      "%s, %s %d fails: the outcome is true (ok %zu failed %zu; GPU %s/%s, GPU2 %s/%s)",
		      m->name, read ? "read" : "write", n, out.ok, out.failed, fk_driver(GPU),
		      fk_override(GPU), fk_driver(GPU2), fk_override(GPU2));
	}
	CHECK(strcmp(fk_driver("0000:03:00.0"), "igb") == 0 &&
		      strcmp(fk_override("0000:03:00.0"), "") == 0,
	      "%s, %s %d fails: the NIC untouched", m->name, read ? "read" : "write", n);
	st = fk_state();
	CHECK(!st || json_valid(st, strlen(st)), "%s, %s %d fails: state file valid", m->name,
	      read ? "read" : "write", n);
	log_close();
	return true;
}

/*
 * apply --defer before udev (no driver has the GPUs), with the Nth write failing (the
 * record, a hold's writes, the state file): whatever is held, the record names. False when
 * no fault fired.
 */
static bool hold_one(const char *cmdline, const char *record, int n)
{
	static const char *const gpus[] = { GPU, GPU2 };
	struct options o = { .cmdline = cmdline, .defer = true };
	struct outcome out;
	const char *rec;
	char line[32];
	bool fired;
	size_t i;

	fk_reset(true);
	fk_add(GPU, 0x10de, 0x2204, 0x030000, 1, NULL, "nouveau");
	fk_add(GPU2, 0x10de, 0x2204, 0x030000, 2, NULL, "nouveau");
	fk_add("0000:03:00.0", 0x8086, 0x1533, 0x020000, 3, "igb", "igb");
	fk_driver_loaded("nouveau");
	fk_driver_loaded("igb");
	fk_fault("", n, -ENOSPC);
	log_setup(false, 0);
	memset(&out, 0, sizeof(out));
	cmd_apply.run(&o, &out);
	fired = fk_faults_fired() > 0;
	rec = fk_record(record);
	for (i = 0; fired && i < sizeof(gpus) / sizeof(gpus[0]); i++) {
		snprintf(line, sizeof(line), "held=%s\n", gpus[i]);
		CHECK(strcmp(fk_override(gpus[i]), "gpuvm-hold") != 0 || (rec && strstr(rec, line)),
		      "%s, write %d fails: %s on gpuvm-hold only with /run/gpuvm/%s naming it (%s)",
		      cmdline, n, gpus[i], record, rec ? "written" : "none written");
	}
	CHECK(!fired || !rec == out.error, "%s, write %d fails: no record is exit status 1 (%s)",
	      cmdline, n, rec ? "written" : "none");
	log_close();
	return fired;
}

int main(void)
{
	size_t i;
	int rw;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		for (rw = 0; rw < 2; rw++) {
			int n = 1;

			truth_checked = 0;
			while (run_one(&modes[i], rw == 0, n))
				n++;
			CHECK(n > 3, "%s: %d %s reached and failed in turn", modes[i].name, n - 1,
			      rw == 0 ? "reads" : "writes");
			/* An outcome that is always an error would leave the rule above unchecked. */
			CHECK(truth_checked > 0,
			      "%s, %s: %d outcomes without an error held to the truth",
			      modes[i].name, rw == 0 ? "reads" : "writes", truth_checked);
		}
	}
	for (i = 0; i < 2; i++) {
		const char *cl = i ? "gpuvm.config=LABEL=gpuvm-conf" : "quiet";
		const char *rec = i ? "pending" : "root-pending";
		int n = 1;

		while (hold_one(cl, rec, n))
			n++;
		CHECK(n > 3, "%s: %d writes of the first call failed in turn", cl, n - 1);
		/* No fault at all: both GPUs held, the record names both. */
		CHECK(strcmp(fk_override(GPU), "gpuvm-hold") == 0 &&
			      strcmp(fk_override(GPU2), "gpuvm-hold") == 0,
		      "%s: with no fault, both GPUs held", cl);
	}
	fk_reset(false);
	return unit_done();
}
