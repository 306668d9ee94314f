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
 * names it (else the hold outlives the boot). The boot's last call (--resume --sysroot)
 * meets every read failing in turn, its record and the root's config among them. The whole
 * files a run reads (the host config, pci.ids, the records) are served by the fake kernel
 * too, so each of them is one of the reads failed; the test says which it failed.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "fake-kernel.h"
#include "json.h"
#include "log.h"
#include "nextboot.h"
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
	/* gpus=: the second GPU alone (and NUMA node 0's, which the fake says none is on) */
	{ "vm-passthrough, gpus=", "gpuvm.mode=vm-passthrough gpuvm.gpus=" GPU2 ",numa:0", VFIO, false },
};

/* The whole files the runs read, and whether a run has failed a read of each. */
static struct {
	const char *path;
	bool failed;
} whole[] = {
	{ "etc/gpuvm/gpuvm.conf", false },	    /* apply: the host config */
	{ "usr/share/gpuvm/pci.ids", false },	    /* apply in vm-vgpu: the names of the GPUs */
	{ "run/gpuvm/root-pending", false },	    /* apply --resume: the first call's record */
	{ "/sysroot/etc/gpuvm/gpuvm.conf", false }, /* apply --resume: the root's config */
	{ "run/gpuvm/boot.json", false },	    /* the next boot: what this boot read */
	{ "etc/default/grub", false },		    /* the next boot: GRUB's command line */
	{ "etc/kernel/cmdline", false },	    /* the next boot: kernel-install's */
};

static void note_fault(void)
{
	size_t i;

	for (i = 0; i < sizeof(whole) / sizeof(whole[0]); i++)
		if (strcmp(fk_fault_path(), whole[i].path) == 0)
			whole[i].failed = true;
}

static void host(bool stale)
{
	fk_reset(true);
	fk_file("etc/gpuvm/gpuvm.conf", "# the command line's mode decides\n");
	fk_file("usr/share/gpuvm/pci.ids",
		"10de  NVIDIA Corporation\n\t2204  GA102 [GeForce RTX 3090]\n");
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
	if (read)
		note_fault();
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
	/* A pinned record (/run/gpuvm/pinned) says only what is true: a VM mode's device there. */
	CHECK(!fk_pinned(GPU) ||
		      (m->want != HOST && reached(GPU, m->want) && !strstr(m->cmdline, "gpus=")),
	      "%s, %s %d fails: a pinned record for GPU only where it is pinned", m->name,
	      read ? "read" : "write", n);
	CHECK(!fk_pinned(GPU2) || (m->want != HOST && reached(GPU2, m->want)),
	      "%s, %s %d fails: a pinned record for GPU2 only where it is pinned", m->name,
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

/*
 * apply --resume --sysroot after a first call that held both GPUs (no mode on the line),
 * with the Nth read failing: the NIC untouched, a state file valid, and a GPU left on
 * gpuvm-hold only with an error or a failure said (exit 1). False when no fault fired.
 */
static bool resume_one(int n)
{
	struct options first = { .cmdline = "quiet", .defer = true };
	struct options last = { .cmdline = "quiet", .resume = true, .sysroot = "/sysroot" };
	struct outcome out;
	const char *st;
	bool fired, held;

	fk_reset(true);
	fk_add(GPU, 0x10de, 0x2204, 0x030000, 1, NULL, "nouveau");
	fk_add(GPU2, 0x10de, 0x2204, 0x030000, 2, NULL, "nouveau");
	fk_add("0000:03:00.0", 0x8086, 0x1533, 0x020000, 3, "igb", "igb");
	fk_driver_loaded("nouveau");
	fk_driver_loaded("igb");
	fk_module("vfio-pci", "vfio-pci");
	fk_file("/sysroot/etc/gpuvm/gpuvm.conf", "mode=vm-passthrough\n");
	log_setup(false, 0);
	memset(&out, 0, sizeof(out));
	cmd_apply.run(&first, &out);
	CHECK(n > 1 || fk_record("root-pending"), "resume: the first call left its record");
	fk_fault("r:", n, -EIO);
	memset(&out, 0, sizeof(out));
	cmd_apply.run(&last, &out);
	fired = fk_faults_fired() > 0;
	if (fired) {
		note_fault();
		held = strcmp(fk_override(GPU), "gpuvm-hold") == 0 ||
			strcmp(fk_override(GPU2), "gpuvm-hold") == 0;
		CHECK(!held || out.error || out.failed > 0,
		      "resume, read %d fails (%s): a GPU left held is said (exit 1)", n,
		      fk_fault_path());
		CHECK(strcmp(fk_driver("0000:03:00.0"), "igb") == 0,
		      "resume, read %d fails: the NIC untouched", n);
		st = fk_state();
		CHECK(!st || json_valid(st, strlen(st)), "resume, read %d fails: state file valid", n);
	} else {
		CHECK(on_vfio(GPU) && on_vfio(GPU2) && !out.error,
		      "resume, no fault: the root's config bound both GPUs");
	}
	log_close();
	return fired;
}

/*
 * What the next boot makes of the host config (config set, status, check), with the Nth
 * read failing: the boot-loader files pin the mode; a read that fails may make the verdict
 * unknown, never another one. False when no fault fired.
 */
static bool nextboot_one(int n, enum nb_verdict *clean)
{
	struct nextboot nb = { 0 };
	struct nb_judgement j;
	bool fired;
	int r;

	fk_reset(true);
	fk_file("etc/gpuvm/gpuvm.conf", "mode=vm-passthrough\n");
	fk_file("run/gpuvm/boot.json", "{\"version\": 1, \"boot\": {\"boot_id\": \"x\"}}\n");
	fk_file("etc/default/grub", "GRUB_CMDLINE_LINUX=\"quiet gpuvm.mode=container\"\n");
	fk_file("etc/kernel/cmdline", "root=/dev/sda1 gpuvm.mode=container\n");
	if (n)
		fk_fault("r:", n, -EIO);
	log_setup(false, 0);
	r = nextboot_judge(&nb, NULL, "quiet");
	fired = fk_faults_fired() > 0;
	nextboot_verdict(&nb, "mode", "vm-passthrough", &j);
	if (!n) {
		*clean = j.verdict;
		CHECK(r == 0 && j.verdict == NB_PINNED, "next boot, no fault: pinned (%s)",
		      nextboot_verdict_name(j.verdict));
	} else if (fired) {
		note_fault();
		CHECK(r == 0 && (j.verdict == *clean || j.verdict == NB_UNKNOWN),
		      "next boot, read %d fails (%s): %s, the clean verdict or unknown", n,
		      fk_fault_path(), nextboot_verdict_name(j.verdict));
	}
	nextboot_fini(&nb);
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
			/* With no fault, a VM mode's GPU2 is pinned, and GPU only where gpus= is not set. */
			CHECK(!fk_pinned(GPU2) == (modes[i].want == HOST),
			      "%s: with no fault, GPU2's pinned record %s", modes[i].name,
			      fk_pinned(GPU2) ? "written" : "none");
			CHECK(!fk_pinned(GPU) ==
				      (modes[i].want == HOST || strstr(modes[i].cmdline, "gpus=")),
			      "%s: with no fault, GPU's pinned record %s", modes[i].name,
			      fk_pinned(GPU) ? "written" : "none");
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
	{
		int n = 1;

		while (resume_one(n))
			n++;
		CHECK(n > 3, "resume: %d reads failed in turn", n - 1);
	}
	{
		enum nb_verdict clean = NB_UNKNOWN;
		int n = 1;

		nextboot_one(0, &clean);
		while (nextboot_one(n, &clean))
			n++;
		CHECK(n > 3, "next boot: %d reads failed in turn", n - 1);
	}
	for (i = 0; i < sizeof(whole) / sizeof(whole[0]); i++)
		CHECK(whole[i].failed, "a read of %s failed in turn", whole[i].path);
	fk_reset(false);
	return unit_done();
}
