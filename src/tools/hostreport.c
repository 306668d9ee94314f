// SPDX-License-Identifier: MIT
/*
 * What a command on a running host adds to a report (hostreport.h): rendered through
 * report.c's hooks, in the places report.c gives them, so that the documents read as one.
 */
#include <stdio.h>

#include "hostreport.h"
#include "inuse.h"
#include "json.h"
#include "util.h"

static const struct host_report *of(const struct report *r)
{
	return r->more->data;
}

/*
 * The mode the host is in. A live switch that refused a device left the host in the mode
 * it was in (config set judges the running boot by this).
 */
static const char *host_mode(const struct report *r)
{
	const struct live_report *l = of(r)->live;

	if (l && r->exec && r->exec->n_refused)
		return l->mode_before;
	return mode_name(r->settings->mode);
}

static void json_live(struct json *j, const struct report *r)
{
	const struct live_report *l = of(r)->live;

	if (!l)
		return;
	json_object_begin(j, "live");
	json_string(j, "mode_before", l->mode_before);
	json_string(j, "mode_requested", mode_name(r->settings->mode));
	json_int(j, "wait_s", (long long)l->wait_s);
	json_int(j, "waited_ms", (long long)l->waited_ms);
	json_int(j, "refused", (long long)(r->exec ? r->exec->n_refused : l->n_in_use));
	json_object_end(j);
}

/* apply --live: the processes that held the device at its last check. */
static void json_holders(struct json *j, const struct inuse *u)
{
	size_t k;

	json_array_begin(j, "holders");
	for (k = 0; k < u->n && k < INUSE_HOLDERS_MAX; k++) {
		json_object_begin(j, NULL);
		json_int(j, "pid", u->h[k].pid);
		json_string(j, "comm", u->h[k].comm);
		json_string(j, "node", u->h[k].node);
		json_object_end(j);
	}
	json_array_end(j);
	json_int(j, "holders_total", (long long)u->n);
}

static void json_device(struct json *j, const struct report *r, size_t i)
{
	const struct live_report *l = of(r)->live;

	if (!l)
		return;
	json_holders(j, &l->holders[i]);
	if (!r->exec && l->in_use)
		json_string(j, "in_use", l->in_use[i][0] ? l->in_use[i] : NULL);
}

/* A string that "" leaves out: null. */
static void json_opt(struct json *j, const char *key, const char *s)
{
	json_string(j, key, s[0] ? s : NULL);
}

/*
 * The next boot's judgement of the mode (nextboot.h): verdict, the words status prints,
 * the mode it runs and from where (null when unknown), the boot line's gpuvm.mode= and what
 * this boot's boot.json said.
 */
static void json_next_boot(struct json *j, const struct report *r)
{
	const struct nextboot *nb = of(r)->nb;
	const struct nb_judgement *v = of(r)->v;
	const struct nb_word *pin;
	char say[2 * NB_TEXT];

	if (!nb || !v)
		return;
	pin = nextboot_line_word(nb, "mode");
	nextboot_say(v, say, sizeof(say));
	json_object_begin(j, "next_boot");
	json_string(j, "verdict", nextboot_verdict_name(v->verdict));
	json_string(j, "says", say);
	if (v->verdict == NB_PINNED) {
		json_string(j, "mode", v->pin->value);
		json_string(j, "mode_source", v->pin->source);
	} else if (v->verdict == NB_READS) {
		json_string(j, "mode", nb->file_mode);
		json_string(j, "mode_source", nb->file_mode_source);
	} else {
		json_null(j, "mode");
		json_null(j, "mode_source");
	}
	json_opt(j, "why", v->verdict == NB_PINNED ? "" : v->why);
	json_string(j, "cmdline_mode", pin ? pin->value : NULL);
	json_string(j, "cmdline_source", pin ? pin->source : NULL);
	json_bool(j, "boot_json", nb->boot_json == 1);
	json_opt(j, "host_config", nb->boot_json == 1 ? nb->host_config : "");
	json_int(j, "bls_entries", (long long)nb->n_entries);
	if (of(r)->vg) {
		const struct nb_judgement *g = of(r)->vg;

		nextboot_say(g, say, sizeof(say));
		json_object_begin(j, "gpus");
		json_string(j, "verdict", nextboot_verdict_name(g->verdict));
		json_string(j, "says", say);
		if (g->verdict == NB_PINNED)
			json_string(j, "value", g->pin->value);
		else if (g->verdict == NB_READS)
			json_string(j, "value", nb->file_gpus[0] ? nb->file_gpus : NULL);
		else
			json_null(j, "value");
		json_object_end(j);
	}
	json_object_end(j);
}

/* plan --in-use: what would be left as it is, and why. */
static void text_in_use(FILE *f, const struct report *r)
{
	const struct live_report *l = of(r)->live;
	char c[320];
	size_t i;

	if (!l || r->exec || !l->in_use)
		return;
	fprintf(f, "in use now (apply --live would leave %zu group%s as %s):\n", l->n_in_use,
		l->n_in_use == 1 ? "" : "s", l->n_in_use == 1 ? "it is" : "they are");
	for (i = 0; i < r->inv->n; i++)
		if (l->in_use[i][0]) {
			term_safe(l->in_use[i], c, sizeof(c));
			fprintf(f, "  %s: %s\n", r->inv->dev[i].name, c);
		}
}

void report_next_boot_line(FILE *f, const char *say)
{
	char a[2 * NB_TEXT];

	term_safe(say, a, sizeof(a));
	fprintf(f, "next boot: %s\n", a);
}

void report_next_boot_gpus_line(FILE *f, const char *say)
{
	char a[2 * NB_TEXT];

	term_safe(say, a, sizeof(a));
	fprintf(f, "next boot (gpus=): %s\n", a);
}

/* status: the next boot in a line, as config set and check print it; gpus= in another. */
static void text_next_boot(FILE *f, const struct report *r)
{
	char say[2 * NB_TEXT];

	if (!of(r)->v)
		return;
	nextboot_say(of(r)->v, say, sizeof(say));
	report_next_boot_line(f, say);
	if (of(r)->vg) {
		nextboot_say(of(r)->vg, say, sizeof(say));
		report_next_boot_gpus_line(f, say);
	}
}

void host_report_init(struct host_report *h, const struct live_report *live,
		      const struct nextboot *nb, const struct nb_judgement *v)
{
	*h = (struct host_report){ .more = { .data = h,
					     .host_mode = host_mode,
					     .json_head = json_live,
					     .json_device = json_device,
					     .json_tail = json_next_boot,
					     .text_groups = text_in_use,
					     .text_tail = text_next_boot },
				   .live = live,
				   .nb = nb,
				   .v = v };
}

/* What the next boot runs: the pin's mode, the host config's, or NULL when unknown. */
static const char *next_mode(const struct nextboot *nb, const struct nb_judgement *v)
{
	if (v->verdict == NB_PINNED)
		return v->pin->value;
	if (v->verdict == NB_READS)
		return nb->file_mode;
	return NULL;
}

void host_report_run(struct report_run *run, const struct nextboot *nb, const struct nb_judgement *v)
{
	run->next_verdict = nb && v ? nextboot_verdict_name(v->verdict) : NULL;
	run->next_mode = nb && v ? next_mode(nb, v) : NULL;
}

static const char *const sev_label[] = {
	[SEV_ERROR] = "ERROR",
	[SEV_WARNING] = "WARNING",
	[SEV_INFO] = "INFO",
};

static void check_json(FILE *f, const struct check_report *c)
{
	struct json j;
	size_t i;

	report_json_begin(&j, f, "check");
	json_string(&j, "mode", mode_name(c->s->mode));
	json_string(&j, "mode_source", settings_source(c->s, KEY_MODE));
	if (c->s->from[KEY_GPUS] != FROM_DEFAULT) {
		char v[SETTINGS_VALUE_MAX];

		settings_value(c->s, KEY_GPUS, v, sizeof(v));
		json_object_begin(&j, "gpus");
		json_string(&j, "value", v);
		json_string(&j, "source", settings_source(c->s, KEY_GPUS));
		json_object_end(&j);
	}
	json_string(&j, "cpu_vendor", cpu_vendor_name(c->cpu));
	json_string(&j, "kernel", c->kver);
	json_bool(&j, "ready", c->errors == 0);
	json_int(&j, "errors", (long long)c->errors);
	json_int(&j, "warnings", (long long)c->warnings);
	json_array_begin(&j, "findings");
	for (i = 0; i < c->n; i++) {
		json_object_begin(&j, NULL);
		json_string(&j, "severity", severity_name(c->f[i].sev));
		json_string(&j, "what", c->f[i].what);
		json_string(&j, "fix", c->f[i].fix);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_begin(&j, "next_boot");
	json_string(&j, "verdict", nextboot_verdict_name(c->v->verdict));
	json_string(&j, "says", c->say);
	if (c->gpus_say)
		json_string(&j, "gpus_says", c->gpus_say);
	json_object_end(&j);
	json_object_end(&j);
	json_finish(&j);
}

/* Findings name drivers from sysfs and framebuffers from /proc/iomem: masked. */
static void check_text(FILE *f, const struct check_report *c)
{
	const char *mode = mode_name(c->s->mode);
	char from[SOURCE_LEN], kver[128], what[sizeof(c->f->what)];
	size_t i;

	term_safe(settings_source(c->s, KEY_MODE), from, sizeof(from));
	term_safe(c->kver, kver, sizeof(kver));
	fprintf(f, "gpuvm check: %s (from %s) on %s, kernel %s\n", mode, from,
		cpu_vendor_name(c->cpu), kver);
	if (c->s->from[KEY_GPUS] != FROM_DEFAULT) {
		char v[SETTINGS_VALUE_MAX];

		settings_value(c->s, KEY_GPUS, v, sizeof(v));
		term_safe(settings_source(c->s, KEY_GPUS), from, sizeof(from));
		fprintf(f, "gpus: %s (from %s)%s\n", v, from,
			c->s->mode == MODE_CONTAINER ? ": changes nothing in mode container" : "");
	}
	report_next_boot_line(f, c->say);
	if (c->gpus_say)
		report_next_boot_gpus_line(f, c->gpus_say);
	for (i = 0; i < c->n; i++) {
		term_safe(c->f[i].what, what, sizeof(what));
		fprintf(f, "%-8s %s\n         fix: %s\n", sev_label[c->f[i].sev], what, c->f[i].fix);
	}
	if (c->errors)
		fprintf(f, "not ready for %s: %zu error%s, %zu warning%s\n", mode, c->errors,
			c->errors == 1 ? "" : "s", c->warnings, c->warnings == 1 ? "" : "s");
	else
		fprintf(f, "ready for %s (%zu warning%s)\n", mode, c->warnings,
			c->warnings == 1 ? "" : "s");
}

void report_check(FILE *f, const struct check_report *c, bool json)
{
	(json ? check_json : check_text)(f, c);
}

void report_cmdline(FILE *out, FILE *err, const struct cmdline_report *c, bool json)
{
	char missing[512];
	size_t i;

	if (json) {
		struct json j;

		report_json_begin(&j, out, "cmdline");
		json_string(&j, "mode", c->mode); /* null: the host config's to decide */
		json_string(&j, "cpu_vendor", cpu_vendor_name(c->cpu));
		json_string(&j, "params", c->params);
		json_string(&j, "missing", c->missing);
		json_array_begin(&j, "conflicts");
		for (i = 0; i < c->n_conflicts; i++)
			json_string(&j, NULL, c->conflicts[i]);
		json_array_end(&j);
		json_object_end(&j);
		json_finish(&j);
		return;
	}
	/* The parameters come from a table; what the running line lacks is a copy of them. */
	term_safe(c->missing, missing, sizeof(missing));
	/* No parameter: no empty line (a script's $(gpuvm cmdline) is "" all the same). */
	if (c->params[0])
		fprintf(out, "%s\n", c->params);
	else if (c->cpu == CPU_ARM)
		fputs("gpuvm: no kernel parameter is needed on arm: its SMMU has no switch such as intel_iommu=\n",
		      err);
	else
		fputs("gpuvm: the CPU vendor is unknown: give --cpu intel, amd or arm\n", err);
	if (missing[0])
		fprintf(err, "gpuvm: the running command line lacks: %s\n", missing);
	for (i = 0; i < c->n_conflicts; i++)
		fprintf(err, "gpuvm: the running command line conflicts: %s\n", c->conflicts[i]);
}
