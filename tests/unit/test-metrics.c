// SPDX-License-Identifier: MIT
/*
 * The metrics file (src/boot/metrics.c): a report made by hand rendered to the byte (every
 * family, its HELP and TYPE, the order, label values escaped and masked), the same twice;
 * then apply against the fake kernel: the file each call writes, and a write that fails.
 */
#include <errno.h>

#include "fake-kernel.h"
#include "hostreport.h"
#include "log.h"
#include "metrics.h"
#include "nextboot.h"
#include "cmd/cmd.h"
#include "util.h"
#include "unit-log.h"
#include "unit.h"

/* Every family, in the order the file has them. */
static const char *const families[] = {
	"gpuvm_info",
	"gpuvm_run_info",
	"gpuvm_run_timestamp_seconds",
	"gpuvm_run_elapsed_seconds",
	"gpuvm_result",
	"gpuvm_mode",
	"gpuvm_mode_info",
	"gpuvm_iommu_active",
	"gpuvm_device_info",
	"gpuvm_iommu_group_viable",
	"gpuvm_run_warnings",
	"gpuvm_run_errors",
	"gpuvm_next_boot_info",
};

/*
 * A driver name and a mode source as sysfs and a config could give them: a quote, a
 * backslash, a newline, ESC (a terminal's CSI), a bidirectional override (U+202E), a
 * byte that is no UTF-8, DEL, a tab; and UTF-8 that is fine (é).
 */
#define NASTY_DRIVER "nou\"veau\\\nx\x1b[31m"
#define NASTY_SOURCE "/etc/gpuvm/gpuvm.conf:3 caf\xc3\xa9 \xe2\x80\xae \xff\x7f\tend"

static const char expected[] =
	"# HELP gpuvm_info The gpuvm that wrote this file; always 1.\n"
	"# TYPE gpuvm_info gauge\n"
	"gpuvm_info{version=\"" GPUVM_VERSION "\"} 1\n"
	"# HELP gpuvm_run_info The run that wrote this file: the command, the call (apply, live: apply --live, defer and resume: the boot's) and the kernel release; always 1.\n"
	"# TYPE gpuvm_run_info gauge\n"
	"gpuvm_run_info{command=\"apply\",call=\"live\",kernel=\"6.1.0-99-amd64\"} 1\n"
	"# HELP gpuvm_run_timestamp_seconds When the run ended, in seconds since the epoch.\n"
	"# TYPE gpuvm_run_timestamp_seconds gauge\n"
	"gpuvm_run_timestamp_seconds 1700000000.045\n"
	"# HELP gpuvm_run_elapsed_seconds How long the run took.\n"
	"# TYPE gpuvm_run_elapsed_seconds gauge\n"
	"gpuvm_run_elapsed_seconds 2.002101\n"
	"# HELP gpuvm_result The run's result, as the state file's: 1 for it, 0 for the others (waiting: GPUs held for the host config).\n"
	"# TYPE gpuvm_result gauge\n"
	"gpuvm_result{result=\"ok\"} 0\n"
	"gpuvm_result{result=\"noop\"} 0\n"
	"gpuvm_result{result=\"partial\"} 1\n"
	"gpuvm_result{result=\"failed\"} 0\n"
	"gpuvm_result{result=\"refused\"} 0\n"
	"gpuvm_result{result=\"waiting\"} 0\n"
	"# HELP gpuvm_mode The mode the host is in: 1 for it, 0 for the others (all 0 after a refused live switch with no state file before it).\n"
	"# TYPE gpuvm_mode gauge\n"
	"gpuvm_mode{mode=\"container\"} 1\n"
	"gpuvm_mode{mode=\"vm-passthrough\"} 0\n"
	"gpuvm_mode{mode=\"vm-vgpu\"} 0\n"
	"# HELP gpuvm_mode_info The mode the run was asked for and where that came from (cmdline, FILE:LINE, default); always 1.\n"
	"# TYPE gpuvm_mode_info gauge\n"
	"gpuvm_mode_info{mode=\"vm-passthrough\",source=\"/etc/gpuvm/gpuvm.conf:3 caf\xc3\xa9 ??? ???end\"} 1\n"
	"# HELP gpuvm_iommu_active Whether the IOMMU was active: 1 or 0.\n"
	"# TYPE gpuvm_iommu_active gauge\n"
	"gpuvm_iommu_active 1\n"
	"# HELP gpuvm_device_info A device the run dealt with (one the state file lists): its role, the action, the driver it was to go to (target), its driver before and after, and its result; always 1.\n"
	"# TYPE gpuvm_device_info gauge\n"
	"gpuvm_device_info{address=\"0000:01:00.0\",pci_id=\"10de:2204\",role=\"gpu\",action=\"bind\",target=\"vfio-pci\",driver_before=\"nou\\\"veau\\\\\\nx?[31m\",driver_after=\"vfio-pci\",result=\"ok\"} 1\n"
	"gpuvm_device_info{address=\"0000:01:00.1\",pci_id=\"10de:1aef\",role=\"companion\",action=\"bind\",target=\"vfio-pci\",driver_before=\"snd_hda_intel\",driver_after=\"\",result=\"failed\"} 1\n"
	"gpuvm_device_info{address=\"0000:41:00.0\",pci_id=\"10de:2330\",role=\"gpu\",action=\"hold\",target=\"vfio-pci\",driver_before=\"\",driver_after=\"\",result=\"refused\"} 1\n"
	"# HELP gpuvm_iommu_group_viable Whether an IOMMU group of the plan is viable (every member bound together, or the group whole for one VM): 1 or 0. A group the IOMMU gives at probe is named pending:ADDRESS (its first member).\n"
	"# TYPE gpuvm_iommu_group_viable gauge\n"
	"gpuvm_iommu_group_viable{group=\"1\"} 1\n"
	"gpuvm_iommu_group_viable{group=\"pending:0000:41:00.0\"} 0\n"
	"# HELP gpuvm_run_warnings Warnings the run logged (the state file keeps the first 256).\n"
	"# TYPE gpuvm_run_warnings gauge\n"
	"gpuvm_run_warnings 2\n"
	"# HELP gpuvm_run_errors Errors the run logged (the state file keeps the first 256).\n"
	"# TYPE gpuvm_run_errors gauge\n"
	"gpuvm_run_errors 1\n"
	"# HELP gpuvm_next_boot_info What the next boot makes of the host config's mode: verdict reads (the file), pinned (gpuvm.mode= on the boot line) or unknown, and the mode it runs (empty when unknown); always 1. No sample after a boot call, which does not judge it.\n"
	"# TYPE gpuvm_next_boot_info gauge\n"
	"gpuvm_next_boot_info{verdict=\"pinned\",mode=\"vm-vgpu\"} 1\n";

static char *render(const struct report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	metrics_render(f, r);
	fclose(f);
	return buf;
}

/* The first line where a and b differ, for a failure's message. */
static void show_diff(const char *got, const char *want)
{
	size_t line = 1, i;

	for (i = 0; got[i] && got[i] == want[i]; i++)
		if (got[i] == '\n')
			line++;
	printf("#   first difference at line %zu:\n#   got:  %.120s\n#   want: %.120s\n", line,
	       got + i, want + i);
}

/*
 * The text format's shape: each line a HELP, a TYPE (gauge) or a sample of the family
 * whose TYPE came last, every family's HELP then TYPE once, in the order of families[];
 * no control byte but the newline ending each line.
 */
static bool well_formed(const char *text)
{
	size_t fam = 0, i;
	const char *line = text, *nl;
	char cur[64] = "";

	if (!text) {
		printf("#   no file\n");
		return false;
	}
	for (i = 0; text[i]; i++)
		if (((unsigned char)text[i] < 0x20 && text[i] != '\n') || text[i] == 0x7f) {
			printf("#   control byte %#x at %zu\n", (unsigned char)text[i], i);
			return false;
		}
	for (; *line; line = nl + 1) {
		char want[160];

		nl = strchr(line, '\n');
		if (!nl)
			return false; /* the last line ends in a newline too */
		if (strncmp(line, "# HELP ", 7) == 0) {
			if (fam >= ARRAY_SIZE(families))
				return false;
			snprintf(want, sizeof(want), "# HELP %s ", families[fam]);
			if (strncmp(line, want, strlen(want)) != 0) {
				printf("#   HELP out of order: %.60s\n", line);
				return false;
			}
			snprintf(cur, sizeof(cur), "%s", families[fam++]);
			snprintf(want, sizeof(want), "# TYPE %s gauge\n", cur);
			if (strncmp(nl + 1, want, strlen(want)) != 0)
				return false;
			nl = strchr(nl + 1, '\n');
		} else if (!cur[0] || strncmp(line, cur, strlen(cur)) != 0 ||
			   (line[strlen(cur)] != ' ' && line[strlen(cur)] != '{')) {
			printf("#   a sample outside its family: %.60s\n", line);
			return false;
		}
	}
	return fam == ARRAY_SIZE(families);
}

static void by_hand(void)
{
	struct settings s;
	struct pci_dev dev[4] = {
		{ .name = "0000:01:00.0",
		  .vendor = 0x10de,
		  .device = 0x2204,
		  .group = 1,
		  .driver = NASTY_DRIVER,
		  .override = "" },
		{ .name = "0000:01:00.1",
		  .vendor = 0x10de,
		  .device = 0x1aef,
		  .group = 1,
		  .driver = "snd_hda_intel",
		  .override = "" },
		{ .name = "0000:02:00.0",
		  .vendor = 0x8086,
		  .device = 0x1533,
		  .group = 2,
		  .driver = "igb",
		  .override = "" },
		{ .name = "0000:41:00.0",
		  .vendor = 0x10de,
		  .device = 0x2330,
		  .group = -1,
		  .driver = "",
		  .override = "" },
	};
	struct plan_dev pd[4] = {
		{ .target = "vfio-pci", .reason = "", .role = ROLE_GPU, .action = ACT_BIND, .listed = true },
		{ .target = "vfio-pci",
		  .reason = "",
		  .role = ROLE_COMPANION,
		  .action = ACT_BIND,
		  .listed = true },
		{ .target = "", .reason = "", .role = ROLE_NONE, .action = ACT_SKIP },
		{ .target = "vfio-pci", .reason = "", .role = ROLE_GPU, .action = ACT_HOLD, .listed = true },
	};
	size_t m1[] = { 0, 1 }, m2[] = { 3 };
	struct plan_group grp[2] = {
		{ .id = 1, .viable = true, .members = m1, .n_members = 2, .n_gpus = 1 },
		{ .id = -1, .pending = true, .members = m2, .n_members = 1, .n_gpus = 1 },
	};
	struct exec_dev ed[4] = {
		{ .after = "vfio-pci", .error = "", .result = RES_OK },
		{ .after = "", .error = "", .result = RES_FAILED },
		{ .after = "igb", .error = "", .result = RES_NOOP },
		{ .after = "", .error = "", .result = RES_REFUSED },
	};
	struct inventory inv = { .dev = dev, .n = 4 };
	struct plan p = {
		.mode = MODE_VM_PASSTHROUGH, .dev = pd, .n_dev = 4, .group = grp, .n_groups = 2
	};
	struct exec_result x = { .dev = ed, .n_dev = 4, .n_ok = 1, .n_failed = 1, .n_refused = 1 };
	struct live_report live = { .mode_before = "container" };
	struct nb_word pin = { .key = "mode", .value = "vm-vgpu", .source = "/etc/default/grub:4" };
	struct nextboot nb = { .file_mode = "vm-passthrough" };
	struct nb_judgement v = { .verdict = NB_PINNED, .pin = &pin };
	struct report_run run = { .call = "live", .time_ms = 1700000000045LL };
	struct host_report more;
	struct report r = { .command = "apply",
			    .settings = &s,
			    .inv = &inv,
			    .plan = &p,
			    .exec = &x,
			    .result = "partial",
			    .kernel = "6.1.0-99-amd64",
			    .elapsed_us = 2002101,
			    .more = &more.more,
			    .run = &run };
	char *a, *b;

	host_report_init(&more, &live, NULL, NULL);
	host_report_run(&run, &nb, &v);
	settings_default(&s);
	s.mode = MODE_VM_PASSTHROUGH;
	settings_set_from(&s, KEY_MODE, FROM_CONFIG, NASTY_SOURCE);
	inv.iommu.active = true;
	log_close();
	log_setup(false, 0);
	log_warn("one");
	log_warn("two");
	log_err("three");

	a = render(&r);
	CHECK(strcmp(a, expected) == 0, "a live switch refused, rendered to the byte");
	if (strcmp(a, expected) != 0)
		show_diff(a, expected);
	b = render(&r);
	CHECK(strcmp(a, b) == 0, "the same report renders the same bytes again");
	CHECK(well_formed(a), "every family once, HELP then TYPE, in order; no control byte");
	CHECK(!strstr(a, "0000:02:00.0"), "a device the state file does not list is left out");
	free(a);
	free(b);

	/* A boot call: the next boot not judged, the mode the one asked for. */
	r.more = NULL;
	run.call = "defer";
	host_report_run(&run, NULL, NULL);
	r.result = "waiting";
	a = render(&r);
	CHECK(well_formed(a), "a boot call's file: every family still there");
	CHECK(!strstr(a, "gpuvm_next_boot_info{"), "no next-boot sample after a boot call");
	CHECK(strstr(a, "gpuvm_mode{mode=\"vm-passthrough\"} 1\n") != NULL,
	      "without --live the host is in the mode asked for");
	CHECK(strstr(a, "gpuvm_result{result=\"waiting\"} 1\n") != NULL, "result waiting");
	free(a);

	/* A refused live switch with no state file before it: the host's mode unknown. */
	r.more = &more.more;
	live.mode_before = NULL;
	a = render(&r);
	CHECK(!strstr(a, "gpuvm_mode{mode=\"container\"} 1") &&
		      !strstr(a, "gpuvm_mode{mode=\"vm-passthrough\"} 1") &&
		      !strstr(a, "gpuvm_mode{mode=\"vm-vgpu\"} 1"),
	      "mode unknown: every gpuvm_mode sample 0");
	free(a);
	log_close();
}

static struct outcome out;

static void host(void)
{
	fk_reset(true);
	fk_add("0000:01:00.0", 0x10de, 0x2204, 0x030000, 1, "nouveau", NULL);
	fk_add("0000:01:00.1", 0x10de, 0x1aef, 0x040300, 1, "snd_hda_intel", NULL);
	fk_driver_loaded("nouveau");
	fk_driver_loaded("snd_hda_intel");
	fk_module("vfio-pci", "vfio-pci");
}

static void apply(struct options *o)
{
	log_close();
	log_setup(false, 0);
	memset(&out, 0, sizeof(out));
	cmd_apply.run(o, &out);
}

static bool has(const char *text, const char *needle)
{
	bool ok = text && strstr(text, needle);

	if (!ok)
		printf("#   lacks '%s'\n", needle);
	return ok;
}

static void with_apply(void)
{
	struct options o = { .cmdline = "gpuvm.mode=vm-passthrough" };

	host();
	apply(&o);
	CHECK(well_formed(fk_metrics()), "apply writes the metrics file, whole");
	CHECK(has(fk_metrics(),
		  "gpuvm_run_info{command=\"apply\",call=\"apply\",kernel=\"6.1.0-fake\"} 1\n"),
	      "the command, the call and the kernel");
	CHECK(has(fk_metrics(), "gpuvm_result{result=\"ok\"} 1\n"), "result ok, as the state file");
	CHECK(has(fk_state(), "\"result\": \"ok\""), "which says ok");
	CHECK(has(fk_metrics(),
		  "gpuvm_device_info{address=\"0000:01:00.0\",pci_id=\"10de:2204\",role=\"gpu\",action=\"bind\",target=\"vfio-pci\",driver_before=\"nouveau\",driver_after=\"vfio-pci\",result=\"ok\"} 1\n"),
	      "the GPU: nouveau before, vfio-pci after");
	CHECK(has(fk_metrics(), "gpuvm_next_boot_info{verdict=\"unknown\",mode=\"\"} 1\n"),
	      "apply by hand judges the next boot (no boot.json here: unknown)");

	host();
	o.defer = true;
	apply(&o);
	CHECK(has(fk_metrics(), "call=\"defer\""), "a boot call writes it too");
	CHECK(fk_metrics() && !strstr(fk_metrics(), "gpuvm_next_boot_info{"),
	      "and judges no next boot");
	o.defer = false;

	/* The metrics file cannot be written: logged; the state file and the outcome stand. */
	host();
	fk_fault("metrics", 1, -EROFS);
	apply(&o);
	CHECK(unit_logged("cannot write /run/gpuvm/metrics/gpuvm.prom: Read-only file system"),
	      "a metrics write that fails is logged");
	CHECK(fk_metrics() == NULL, "and nothing is there");
	CHECK(has(fk_state(), "\"result\": \"ok\""), "the state file is written all the same");
	CHECK(out.failed == 0 && !out.error, "and the outcome stands");

	/* The state file cannot be written: the metrics file still is. */
	host();
	fk_fault("state", 1, -EROFS);
	apply(&o);
	CHECK(unit_logged("cannot write /run/gpuvm/state.json"), "a failed state write is logged");
	CHECK(has(fk_metrics(), "gpuvm_run_errors 1\n"), "and counted in the metrics file");
	log_close();
}

int main(void)
{
	by_hand();
	with_apply();
	return unit_done();
}
