// SPDX-License-Identifier: MIT
/*
 * The metrics file, /run/gpuvm/metrics/gpuvm.prom: what an apply did, for node-exporter's
 * textfile collector, in Prometheus' text format. Rendered from the report the state file
 * is (report.c renders the same as JSON) and written with it (state_write): every boot call
 * and every later apply. Everything is a gauge: the file describes one run, so no value
 * counts across runs and none is named _total.
 */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "metrics.h"
#include "rootio.h"
#include "util.h"
#include "writefile.h"

/* "# HELP" and "# TYPE" of a family: its samples follow, before any other family's. */
static void family(FILE *f, const char *name, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/*
 * A label value as the text format reads it: backslash, quote and newline escaped; a
 * control character, a bidirectional control or a byte that is not valid UTF-8 (the
 * collector refuses the whole file for one) as '?'. NULL is "".
 */
static void label_value(FILE *f, const char *s)
{
	size_t n;

	fputc('"', f);
	while (s && *s) {
		if (*s == '\n') {
			fputs("\\n", f);
			s++;
		} else if (*s == '\\' || *s == '"') {
			fputc('\\', f);
			fputc(*s++, f);
		} else if ((n = term_char(s)) > 0) {
			fwrite(s, 1, n, f);
			s += n;
		} else {
			fputc('?', f);
			s++;
		}
	}
	fputc('"', f);
}

/* One sample: name{k1="v1",...} value; kv holds n pairs of label name and value. */
static void sample(FILE *f, const char *name, const char *const *kv, size_t n, const char *value)
{
	size_t i;

	fputs(name, f);
	for (i = 0; i < n; i++) {
		fprintf(f, "%s%s=", i ? "," : "{", kv[2 * i]);
		label_value(f, kv[2 * i + 1]);
	}
	fprintf(f, "%s %s\n", n ? "}" : "", value);
}

static void sample_u(FILE *f, const char *name, const char *const *kv, size_t n, unsigned long long v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", v);
	sample(f, name, kv, n, buf);
}

/* A state set: one sample a value of the label, 1 for the one that is, 0 for the others. */
static void state_set(FILE *f, const char *name, const char *label, const char *const *values,
		      size_t n, const char *is)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const char *kv[] = { label, values[i] };

		sample(f, name, kv, 1, is && streq(values[i], is) ? "1" : "0");
	}
}

static void devices(FILE *f, const struct report *r)
{
	size_t i;

	family(f, "gpuvm_device_info",
	       "A device the run dealt with (one the state file lists): its role, the action, the driver it was to go to (target), its driver before and after, and its result; always 1.");
	for (i = 0; r->plan && i < r->inv->n; i++) {
		const struct pci_dev *d = &r->inv->dev[i];
		const struct plan_dev *pd = &r->plan->dev[i];
		const struct exec_dev *ed = r->exec ? &r->exec->dev[i] : NULL;
		char id[16];

		if (!pd->listed)
			continue;
		snprintf(id, sizeof(id), "%04x:%04x", d->vendor, d->device);
		{
			const char *kv[] = { "address",	      d->name,
					     "pci_id",	      id,
					     "role",	      role_name(pd->role),
					     "action",	      action_name(pd->action),
					     "target",	      pd->target,
					     "driver_before", d->driver,
					     "driver_after",  ed ? ed->after : "",
					     "result",	      ed ? dev_result_name(ed->result) : "" };

			sample(f, "gpuvm_device_info", kv, 8, "1");
		}
	}
}

/* Where gpus= is set: the devices pinned for VMs, as /run/gpuvm/pinned has them. */
static void pinned(FILE *f, const struct report *r)
{
	size_t i;

	family(f, "gpuvm_pinned",
	       "A device the run pinned for VMs (a record in /run/gpuvm/pinned), with the mode; always 1. Only where gpus= is set.");
	for (i = 0; r->plan && i < r->inv->n; i++)
		if (report_pinned(r, i)) {
			const char *kv[] = { "address", r->inv->dev[i].name, "mode",
					     mode_name(r->plan->mode) };

			sample(f, "gpuvm_pinned", kv, 2, "1");
		}
}

static void groups(FILE *f, const struct report *r)
{
	size_t g;

	family(f, "gpuvm_iommu_group_viable",
	       "Whether an IOMMU group of the plan is viable (every member bound together, or the group whole for one VM): 1 or 0. A group the IOMMU gives at probe is named pending:ADDRESS (its first member).");
	for (g = 0; r->plan && g < r->plan->n_groups; g++) {
		const struct plan_group *pg = &r->plan->group[g];
		char id[64];
		const char *kv[] = { "group", id };

		if (pg->pending)
			snprintf(id, sizeof(id), "pending:%s",
				 pg->n_members ? r->inv->dev[pg->members[0]].name : "");
		else
			snprintf(id, sizeof(id), "%d", pg->id);
		sample(f, "gpuvm_iommu_group_viable", kv, 1, pg->viable ? "1" : "0");
	}
}

void metrics_render(FILE *f, const struct report *r)
{
	static const struct report_run none = { .call = "" };
	static const char *const results[] = { "ok",	 "noop",    "partial",
					       "failed", "refused", "waiting" };
	static const char *const modes[] = { "container", "vm-passthrough", "vm-vgpu" };
	const struct report_run *run = r->run ? r->run : &none;
	const struct settings *s = r->settings;
	char buf[48];

	family(f, "gpuvm_info", "The gpuvm that wrote this file; always 1.");
	{
		const char *kv[] = { "version", GPUVM_VERSION };

		sample(f, "gpuvm_info", kv, 1, "1");
	}
	family(f, "gpuvm_run_info",
	       "The run that wrote this file: the command, the call (apply, live: apply --live, defer and resume: the boot's) and the kernel release; always 1.");
	{
		const char *kv[] = { "command", r->command, "call", run->call, "kernel", r->kernel };

		sample(f, "gpuvm_run_info", kv, 3, "1");
	}
	family(f, "gpuvm_run_timestamp_seconds", "When the run ended, in seconds since the epoch.");
	snprintf(buf, sizeof(buf), "%lld.%03lld", run->time_ms / 1000, run->time_ms % 1000);
	sample(f, "gpuvm_run_timestamp_seconds", NULL, 0, buf);
	family(f, "gpuvm_run_elapsed_seconds", "How long the run took.");
	snprintf(buf, sizeof(buf), "%llu.%06llu", r->elapsed_us / 1000000, r->elapsed_us % 1000000);
	sample(f, "gpuvm_run_elapsed_seconds", NULL, 0, buf);
	family(f, "gpuvm_result",
	       "The run's result, as the state file's: 1 for it, 0 for the others (waiting: GPUs held for the host config).");
	state_set(f, "gpuvm_result", "result", results, ARRAY_SIZE(results), r->result);
	family(f, "gpuvm_mode",
	       "The mode the host is in: 1 for it, 0 for the others (all 0 after a refused live switch with no state file before it).");
	state_set(f, "gpuvm_mode", "mode", modes, ARRAY_SIZE(modes), report_host_mode(r));
	family(f, "gpuvm_mode_info",
	       "The mode the run was asked for and where that came from (cmdline, FILE:LINE, default); always 1.");
	{
		const char *kv[] = { "mode", mode_name(s->mode), "source",
				     settings_source(s, KEY_MODE) };

		sample(f, "gpuvm_mode_info", kv, 2, "1");
	}
	family(f, "gpuvm_iommu_active", "Whether the IOMMU was active: 1 or 0.");
	sample(f, "gpuvm_iommu_active", NULL, 0, r->inv->iommu.active ? "1" : "0");
	devices(f, r);
	if (s->from[KEY_GPUS] != FROM_DEFAULT)
		pinned(f, r);
	groups(f, r);
	family(f, "gpuvm_run_warnings",
	       "Warnings the run logged (the state file keeps the first 256).");
	sample_u(f, "gpuvm_run_warnings", NULL, 0, log_count(LOG_WARNING) + log_dropped(LOG_WARNING));
	family(f, "gpuvm_run_errors", "Errors the run logged (the state file keeps the first 256).");
	sample_u(f, "gpuvm_run_errors", NULL, 0, log_count(LOG_ERR) + log_dropped(LOG_ERR));
	family(f, "gpuvm_next_boot_info",
	       "What the next boot makes of the host config's mode: verdict reads (the file), pinned (gpuvm.mode= on the boot line) or unknown, and the mode it runs (empty when unknown); always 1. No sample after a boot call, which does not judge it.");
	if (run->next_verdict) {
		const char *kv[] = { "verdict", run->next_verdict, "mode", run->next_mode };

		sample(f, "gpuvm_next_boot_info", kv, 2, "1");
	}
}

static void fill(FILE *f, void *r)
{
	metrics_render(f, r);
}

void metrics_write(const struct report *r)
{
	int e = root_write_file_with(METRICS_DIR, METRICS_FILE, fill, (void *)r);

	if (e < 0)
		log_err("cannot write /%s/%s: %s", METRICS_DIR, METRICS_FILE, wf_strerror(e));
}
