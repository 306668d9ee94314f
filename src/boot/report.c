// SPDX-License-Identifier: MIT
/* What gpuvm tells people (text) and programs (JSON) about a plan or the host's state. */
#include <stdio.h>
#include <string.h>

#include "confsource.h"
#include "json.h"
#include "log.h"
#include "report.h"
#include "util.h"

static void json_hex(struct json *j, const char *key, unsigned v, int width)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%0*x", width, v);
	json_string(j, key, buf);
}

static bool dev_listed(const struct report *r, size_t i)
{
	if (r->plan)
		return r->plan->dev[i].listed;
	return plan_interesting(&r->inv->dev[i], r->settings);
}

/* The vfio group device and the vfio cdev that sysfs showed after the run; null when none. */
static void json_vfio_nodes(struct json *j, const struct pci_dev *d, const struct exec_dev *ed)
{
	char buf[40];

	if (ed->vfio_group) {
		snprintf(buf, sizeof(buf), "/dev/vfio/%d", exec_group(d, ed));
		json_string(j, "vfio_group", buf);
	} else {
		json_null(j, "vfio_group");
	}
	if (ed->vfio_cdev >= 0) {
		snprintf(buf, sizeof(buf), "/dev/vfio/devices/vfio%d", ed->vfio_cdev);
		json_string(j, "vfio_cdev", buf);
	} else {
		json_null(j, "vfio_cdev");
	}
}

static void json_device(struct json *j, const struct report *r, size_t i)
{
	const struct pci_dev *d = &r->inv->dev[i];

	json_object_begin(j, NULL);
	json_string(j, "address", d->name);
	json_hex(j, "vendor", d->vendor, 4);
	json_hex(j, "device", d->device, 4);
	json_hex(j, "subsystem_vendor", d->subvendor, 4);
	json_hex(j, "subsystem_device", d->subdevice, 4);
	json_hex(j, "class", d->class, 6);
	if (d->group >= 0)
		json_int(j, "iommu_group", d->group);
	else if (r->exec && r->exec->dev[i].group >= 0) /* given at probe (ARM SMMU) */
		json_int(j, "iommu_group", r->exec->dev[i].group);
	else
		json_null(j, "iommu_group");
	json_string(j, "driver", d->driver[0] ? d->driver : NULL);
	json_string(j, "driver_override", d->override[0] ? d->override : NULL);
	json_bool(j, "vf", d->is_vf);
	if (d->sriov_totalvfs >= 0)
		json_int(j, "sriov_totalvfs", d->sriov_totalvfs);
	if (d->boot_vga >= 0)
		json_bool(j, "boot_vga", d->boot_vga == 1);
	if (r->plan) {
		const struct plan_dev *pd = &r->plan->dev[i];

		json_string(j, "role", role_name(pd->role));
		json_string(j, "action", action_name(pd->action));
		json_string(j, "target", pd->target[0] ? pd->target : NULL);
		json_string(j, "reason", pd->reason);
		if (pd->vgpu != VGPU_NONE)
			json_string(j, "vgpu", vgpu_method_name(pd->vgpu));
	}
	if (r->exec) {
		const struct exec_dev *ed = &r->exec->dev[i];

		json_string(j, "driver_before", d->driver[0] ? d->driver : NULL);
		json_string(j, "driver_after", ed->after[0] ? ed->after : NULL);
		json_vfio_nodes(j, d, ed);
		json_bool(j, "verified", ed->verified);
		json_string(j, "result", dev_result_name(ed->result));
		json_string(j, "error", ed->error[0] ? ed->error : NULL);
	}
	if (r->more && r->more->json_device)
		r->more->json_device(j, r, i);
	json_object_end(j);
}

static void json_groups(struct json *j, const struct report *r)
{
	size_t g, k;

	json_array_begin(j, "groups");
	for (g = 0; r->plan && g < r->plan->n_groups; g++) {
		const struct plan_group *pg = &r->plan->group[g];

		json_object_begin(j, NULL);
		if (pg->pending)
			json_null(j, "id");
		else
			json_int(j, "id", pg->id);
		json_bool(j, "pending", pg->pending);
		json_string(j, "type", inventory_group_type(r->inv, pg->id));
		json_bool(j, "viable", pg->viable);
		json_int(j, "gpus", (long long)pg->n_gpus);
		json_array_begin(j, "members");
		for (k = 0; k < pg->n_members; k++)
			json_string(j, NULL, r->inv->dev[pg->members[k]].name);
		json_array_end(j);
		json_array_begin(j, "blocked_by");
		for (k = 0; k < pg->n_blocked; k++)
			json_string(j, NULL, r->inv->dev[pg->blocked_by[k]].name);
		for (k = 0; k < pg->n_foreign; k++)
			json_string(j, NULL, pg->foreign[k].name);
		json_array_end(j);
		json_object_end(j);
	}
	json_array_end(j);
}

/* The messages kept (LOG_KEEP_MAX), and as KEY_dropped how many past that were not. */
static void json_log(struct json *j, const char *key, enum log_level level)
{
	char dropped[32];
	size_t i;

	json_array_begin(j, key);
	for (i = 0; i < log_count(level); i++)
		json_string(j, NULL, log_get(level, i));
	json_array_end(j);
	snprintf(dropped, sizeof(dropped), "%s_dropped", key);
	json_int(j, dropped, (long long)log_dropped(level));
}

/*
 * A boot call's: which call wrote it, whether the mode is decided, and what became of the
 * host config. The same document is the boot's record (boot.json), read by config set and
 * the label mirror: what this boot's initramfs did, and from which config. A first call
 * whose mode the boot line set says "pinned": the record stays its own where the root's
 * config, read at the last call, changes nothing over the line.
 */
static void json_boot(struct json *j, const struct report *r)
{
	const struct source *src = r->source;
	const char *stage = "first", *host = "pending";
	bool failed = src->root == RC_UNREADABLE || src->root == RC_NO_ROOT;

	if (src->spec[0]) {
		stage = "disk";
		host = "disk";
	} else if (src->status == SRC_ROOT) {
		stage = "root";
		host = root_config_name(src->root);
	} else if (src->status == SRC_CMDLINE && settings_mode_pinned(r->settings)) {
		host = "pinned";
	}
	json_object_begin(j, "boot");
	json_string(j, "boot_id", r->boot_id && r->boot_id[0] ? r->boot_id : NULL);
	json_string(j, "stage", stage);
	json_bool(j, "decided", src->status != SRC_WAITING && src->status != SRC_HOLD);
	json_string(j, "host_config", host);
	json_string(j, "sysroot", src->sysroot[0] ? src->sysroot : NULL);
	json_string(j, "why", failed ? src->reason : NULL);
	json_string(j, "baked_config", src->baked ? "ignored" : NULL);
	json_object_end(j);
}

void report_json_begin(struct json *j, FILE *f, const char *command)
{
	json_init(j, f);
	json_object_begin(j, NULL);
	json_string(j, "version", GPUVM_VERSION);
	json_string(j, "command", command);
}

const char *report_host_mode(const struct report *r)
{
	if (r->more && r->more->host_mode)
		return r->more->host_mode(r);
	return mode_name(r->settings->mode);
}

bool report_pinned(const struct report *r, size_t i)
{
	const struct plan_dev *pd;

	if (!r->plan || i >= r->plan->n_dev || r->plan->mode == MODE_CONTAINER)
		return false;
	pd = &r->plan->dev[i];
	if (!pd->selected || pd->failed || streq(pd->target, HOLD_OVERRIDE))
		return false;
	if (r->exec && r->exec->dev) {
		enum dev_result x = r->exec->dev[i].result;

		return x == RES_NOOP || x == RES_OK || x == RES_UNVERIFIED;
	}
	return true;
}

void report_json(FILE *f, const struct report *r)
{
	const struct settings *s = r->settings;
	const struct iommu_state *io = &r->inv->iommu;
	struct json j;
	char val[SETTINGS_VALUE_MAX];
	size_t i, k;

	report_json_begin(&j, f, r->command);
	if (r->exec) {
		json_string(&j, "result", r->result);
		json_string(&j, "kernel", r->kernel);
		json_int(&j, "elapsed_us", (long long)r->elapsed_us);
	}
	json_string(&j, "mode", report_host_mode(r));
	if (r->more && r->more->json_head)
		r->more->json_head(&j, r);
	json_string(&j, "mode_source", settings_source(s, KEY_MODE));
	json_object_begin(&j, "settings");
	for (k = 0; k < KEY__MAX; k++) {
		if (k == KEY_GPUS && s->from[k] == FROM_DEFAULT)
			continue; /* gpus= is listed where it is set: no selection, no change */
		settings_value(s, (enum setting_key)k, val, sizeof(val));
		json_object_begin(&j, key_name((enum setting_key)k));
		json_string(&j, "value", val[0] ? val : NULL);
		json_string(&j, "source", settings_source(s, (enum setting_key)k));
		json_object_end(&j);
	}
	json_object_end(&j);
	if (r->source && r->source->spec[0]) {
		const struct source *src = r->source;

		json_object_begin(&j, "config_disk");
		json_string(&j, "spec", src->spec);
		json_string(&j, "status", source_status_name(src->status));
		json_string(&j, "device", src->found.dev[0] ? src->found.dev : NULL);
		json_string(&j, "fstype", src->found.fstype[0] ? src->found.fstype : NULL);
		json_string(&j, "reason", src->status == SRC_FALLBACK ? src->reason : NULL);
		json_int(&j, "timeout_s", (long long)src->timeout_s);
		json_object_end(&j);
	}
	if (r->source && r->source->boot)
		json_boot(&j, r);

	json_object_begin(&j, "iommu");
	json_bool(&j, "active", io->active);
	json_string(&j, "cpu_vendor", cpu_vendor_name(io->cpu));
	json_int(&j, "units", (long long)io->units);
	json_string(&j, "unit", io->unit[0] ? io->unit : NULL);
	json_int(&j, "groups", (long long)io->groups);
	json_bool(&j, "groups_at_probe", io->groups_at_probe);
	{
		const char *why[16];
		size_t n = iommu_params_explain(&io->params, io->cpu, why, 16);

		json_array_begin(&j, "params");
		for (i = 0; i < n; i++)
			json_string(&j, NULL, why[i]);
		json_array_end(&j);
	}
	json_object_end(&j);

	if (r->plan) {
		json_bool(&j, "iommu_unusable", r->plan->iommu_unusable);
		json_int(&j, "selected", (long long)r->plan->n_selected);
		json_int(&j, "failed", (long long)r->plan->n_failed);
		if (s->from[KEY_GPUS] != FROM_DEFAULT) {
			json_array_begin(&j, "pinned");
			for (i = 0; i < r->inv->n; i++)
				if (report_pinned(r, i))
					json_string(&j, NULL, r->inv->dev[i].name);
			json_array_end(&j);
		}
		json_array_begin(&j, "modules");
		for (i = 0; i < r->plan->n_modules; i++) {
			const struct exec_module *m = r->exec ? &r->exec->modules[i] : NULL;

			json_object_begin(&j, NULL);
			json_string(&j, "name", r->plan->modules[i]);
			if (m && i < r->exec->n_modules) {
				json_bool(&j, "loaded", m->loaded);
				json_string(&j, "error", m->err ? m->msg : NULL);
			}
			json_object_end(&j);
		}
		json_array_end(&j);
	}

	json_array_begin(&j, "devices");
	for (i = 0; i < r->inv->n; i++)
		if (dev_listed(r, i))
			json_device(&j, r, i);
	json_array_end(&j);
	json_groups(&j, r);
	json_log(&j, "warnings", LOG_WARNING);
	json_log(&j, "errors", LOG_ERR);
	if (r->state_path) {
		json_string(&j, "state_file", r->state_path);
		if (r->last_state)
			json_raw(&j, "last_apply", r->last_state);
		else
			json_null(&j, "last_apply");
	}
	if (r->more && r->more->json_tail)
		r->more->json_tail(&j, r);
	json_object_end(&j);
	json_finish(&j);
}

/*
 * Text is for a terminal: every name that comes from sysfs (a driver, an override), a
 * config or a disk is shown through term_safe(), so none can move the cursor or retitle
 * the window. JSON escapes them instead.
 */
static const char *safe(const char *s, char *buf, size_t size)
{
	term_safe(s, buf, size);
	return buf;
}

static void text_device(FILE *f, const struct report *r, size_t i)
{
	const struct pci_dev *d = &r->inv->dev[i];
	const struct plan_dev *pd = &r->plan->dev[i];
	char drv[DRIVER_LEN], to[DRIVER_LEN + 4] = "", why[PLAN_REASON_LEN];

	fprintf(f, "  %-13s %04x:%04x %04x  %-14s", d->name, d->vendor, d->device,
		(unsigned)(d->class >> 8), d->driver[0] ? safe(d->driver, drv, sizeof(drv)) : "-");
	if (pd->target[0]) {
		memcpy(to, "-> ", 4);
		term_safe(pd->target, to + 3, sizeof(to) - 3);
	}
	fprintf(f, " %-7s %-22s %s\n", action_name(pd->action), to, safe(pd->reason, why, sizeof(why)));
}

void report_text(FILE *f, const struct report *r)
{
	const struct settings *s = r->settings;
	const struct iommu_state *io = &r->inv->iommu;
	size_t i, k, shown = 0;
	char a[320], b[320], c[320]; /* the longest: a source's reason, 300 */

	fprintf(f, "mode: %s (from %s)\n", mode_name(s->mode),
		safe(settings_source(s, KEY_MODE), a, sizeof(a)));
	if (s->from[KEY_GPUS] != FROM_DEFAULT) {
		char v[SETTINGS_VALUE_MAX];

		settings_value(s, KEY_GPUS, v, sizeof(v));
		fprintf(f, "gpus: %s (from %s)%s\n", v,
			safe(settings_source(s, KEY_GPUS), a, sizeof(a)),
			s->mode == MODE_CONTAINER ? ": changes nothing in mode container" : "");
	}
	if (r->source && r->source->spec[0]) {
		const struct source *src = r->source;

		safe(src->spec, a, sizeof(a));
		if (src->status == SRC_DISK)
			fprintf(f, "config: %s, read from %s (%s)\n", a,
				safe(src->found.dev, b, sizeof(b)),
				safe(src->found.fstype, c, sizeof(c)));
		else if (src->status == SRC_WAITING)
			fprintf(f, "config: %s, not there yet: GPUs held, waiting up to %u s\n", a,
				src->timeout_s);
		else
			fprintf(f, "config: not used: %s\n", safe(src->reason, b, sizeof(b)));
	}
	fprintf(f, "IOMMU: %s (cpu %s, %zu unit%s%s%s, %zu groups%s)\n",
		io->active ? "active" : "not active", cpu_vendor_name(io->cpu), io->units,
		io->units == 1 ? "" : "s", io->unit[0] ? " " : "", safe(io->unit, a, sizeof(a)),
		io->groups,
		io->groups_at_probe ? ", assigned when a driver first probes a device" : "");
	{
		const char *why[16];
		size_t n = iommu_params_explain(&io->params, io->cpu, why, 16);

		for (i = 0; i < n; i++)
			fprintf(f, "  %s\n", why[i]);
	}
	fprintf(f, "devices:\n");
	for (i = 0; i < r->inv->n; i++) {
		if (!dev_listed(r, i))
			continue;
		if (r->plan) {
			text_device(f, r, i);
		} else {
			const struct pci_dev *d = &r->inv->dev[i];
			char grp[16] = "-";

			if (d->group >= 0)
				snprintf(grp, sizeof(grp), "%d", d->group);
			fprintf(f, "  %-13s %04x:%04x %04x  %-14s group %-5s override %s\n",
				d->name, d->vendor, d->device, (unsigned)(d->class >> 8),
				d->driver[0] ? safe(d->driver, a, sizeof(a)) : "-", grp,
				d->override[0] ? safe(d->override, b, sizeof(b)) : "-");
		}
		shown++;
	}
	if (!shown)
		fprintf(f, "  (none)\n");
	if (r->plan && r->plan->n_groups) {
		fprintf(f, "groups:\n");
		for (i = 0; i < r->plan->n_groups; i++) {
			const struct plan_group *g = &r->plan->group[i];

			const char *type = inventory_group_type(r->inv, g->id);

			if (g->pending)
				fprintf(f, "  pending (the IOMMU assigns it at probe):");
			else
				fprintf(f, "  %d%s%s%s %s", g->id, type ? " (" : "",
					type ? safe(type, a, sizeof(a)) : "", type ? ")" : "",
					g->viable ? "viable" : "NOT viable");
			if (plan_group_shared(g))
				fprintf(f, ", %zu GPUs for one VM together", g->n_gpus);
			if (!g->pending)
				fputc(':', f);
			for (k = 0; k < g->n_members; k++)
				fprintf(f, " %s", r->inv->dev[g->members[k]].name);
			if (g->n_blocked + g->n_foreign) {
				fprintf(f, "; blocked by");
				for (k = 0; k < g->n_blocked; k++)
					fprintf(f, " %s", r->inv->dev[g->blocked_by[k]].name);
				for (k = 0; k < g->n_foreign; k++)
					fprintf(f, " %s", safe(g->foreign[k].name, a, sizeof(a)));
			}
			fputc('\n', f);
		}
	}
	if (r->more && r->more->text_groups)
		r->more->text_groups(f, r);
	if (r->plan && r->plan->n_modules) {
		fprintf(f, "modules:");
		for (i = 0; i < r->plan->n_modules; i++)
			fprintf(f, " %s", safe(r->plan->modules[i], a, sizeof(a)));
		fputc('\n', f);
	}
	if (r->state_path)
		fprintf(f, "last apply: %s\n",
			r->last_state ? safe(r->state_path, a, sizeof(a)) : "(no state file)");
	if (r->more && r->more->text_tail)
		r->more->text_tail(f, r);
}

void report_warn_shared_groups(const struct plan *p)
{
	size_t i;

	for (i = 0; i < p->n_groups; i++)
		if (plan_group_shared(&p->group[i]))
			log_warn(PLAN_SHARED_GROUP_FMT, p->group[i].id, p->group[i].n_gpus);
}

/*
 * The cause of every outcome that is not a success, kept for the report's "errors" (and,
 * for what is only a warning, "warnings"): a VM mode without an IOMMU, what the host needs
 * and ids= would have taken, an unidentified function. The devices that fail are told here
 * for plan; apply tells them after execution, with what became of them (log_outcome).
 */
void report_log_plan(const struct inventory *inv, const struct plan *p, const struct settings *s,
		     bool devices)
{
	size_t i;

	if (p->iommu_unusable)
		log_result(LOG_ERR,
			   "%s needs an active IOMMU and none is active: %zu selected device%s %s (on_error=%s); `gpuvm check` says what to change",
			   mode_name(p->mode), p->n_selected, p->n_selected == 1 ? "" : "s",
			   s->on_error == ON_ERROR_HOLD ? "held" : "left to the host",
			   s->on_error == ON_ERROR_HOLD ? "hold" : "release");
	report_warn_shared_groups(p);
	for (i = 0; i < inv->n; i++) {
		const struct plan_dev *pd = &p->dev[i];

		if (devices && pd->failed)
			log_result(LOG_ERR, "%s: %s", inv->dev[i].name, pd->reason);
		else if (!pd->failed &&
			 ((pd->role == ROLE_HOST && pd->listed) || pd->role == ROLE_UNIDENTIFIED))
			log_warn("%s: %s", inv->dev[i].name, pd->reason);
	}
}
