// SPDX-License-Identifier: MIT
/*
 * The flow of one command: settings (cmdline + config) -> inventory -> plan ->
 * execute -> verify -> report. main() only parses options and picks the exit status.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmdline.h"
#include "config.h"
#include "execute.h"
#include "inventory.h"
#include "iommu.h"
#include "json.h"
#include "kmod.h"
#include "log.h"
#include "plan.h"
#include "report.h"
#include "run.h"
#include "settings.h"
#include "sysfs.h"
#include "util.h"

#define STATE_PATH "run/gpuvm/state.json"
#define STATE_MAX (1024 * 1024)

/* Read the kernel command line as a string the caller frees. */
#define CMDLINE_D "etc/cmdline.d"
#define CMDLINE_MAX 4096

struct names {
	char (*name)[64];
	size_t n, cap;
};

static int collect_conf(const char *name, void *data)
{
	struct names *l = data;
	size_t len = strlen(name);

	if (len < 6 || len >= 64 || !streq(name + len - 5, ".conf") || l->n == l->cap)
		return 0;
	strscpy(l->name[l->n++], name, 64);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/*
 * The kernel command line, as dracut's getcmdline sees it: the initramfs's
 * /etc/cmdline.d/NAME.conf files in name order (dracut's kernel_cmdline= lands there), then
 * /proc/cmdline, so that the latter wins. A string the caller frees.
 */
static char *read_cmdline(const struct options *o)
{
	char (*names)[64] = NULL;
	struct names l = { .cap = 32 };
	char *all, buf[CMDLINE_MAX];
	size_t len = 0, i;
	ssize_t n;

	if (o->cmdline)
		return strdup(o->cmdline);
	all = malloc(CMDLINE_MAX * 2);
	names = malloc(l.cap * sizeof(*names));
	if (!all || !names) {
		free(all);
		free(names);
		return NULL;
	}
	all[0] = '\0';
	l.name = names;
	if (sysfs_list(CMDLINE_D, collect_conf, &l) == 0 && l.n) {
		qsort(names, l.n, sizeof(*names), name_cmp);
		for (i = 0; i < l.n; i++) {
			char path[96];

			snprintf(path, sizeof(path), CMDLINE_D "/%s", names[i]);
			if (sysfs_read(path, buf, sizeof(buf)) <= 0)
				continue;
			for (char *c = buf; *c; c++)
				if (*c == '\n' || *c == '\r')
					*c = ' ';
			if (len + strlen(buf) + 2 > CMDLINE_MAX) {
				log_warn("/%s: more than %d bytes in all; the rest ignored", CMDLINE_D,
					 CMDLINE_MAX);
				break;
			}
			len += (size_t)sprintf(all + len, "%s ", buf);
		}
	}
	free(names);
	n = sysfs_read("proc/cmdline", buf, sizeof(buf));
	if (n < 0)
		log_warn("cannot read /proc/cmdline: %s; no kernel parameters used", strerror((int)-n));
	else
		strcpy(all + len, buf);
	rstrip(all);
	return all;
}

static int load_settings(const struct options *o, const char *cmdline, struct settings *s)
{
	struct settings_input in = { .cmdline = cmdline };
	char *buf = NULL;
	size_t len = 0;
	int r;

	if (o->config) {
		in.config_path = o->config;
		r = config_read(AT_FDCWD, o->config, &buf, &len);
	} else {
		in.config_path = CONFIG_PATH;
		r = config_read(sysfs_rootfd(), CONFIG_PATH + 1, &buf, &len);
		if (r == -ENOENT)
			r = 0;	/* no host config: the command line and defaults decide */
	}
	if (r == -EFBIG)
		log_err("%s: larger than %d bytes; file ignored", in.config_path, CONFIG_MAX_SIZE);
	else if (r < 0)
		log_err("%s: cannot read: %s; file ignored", in.config_path, strerror(-r));
	in.config = buf;
	in.config_len = len;
	r = settings_load(s, &in);
	free(buf);
	return r;
}

static int scan(const struct settings *s, const char *cmdline, struct inventory *inv)
{
	int r;

	iommu_read(&inv->iommu, cmdline);
	r = inventory_scan(inv, plan_interesting, s);
	if (r < 0)
		log_err("cannot read the PCI devices in /sys/bus/pci/devices: %s", strerror(-r));
	return r;
}

static char *read_state(void)
{
	char *buf = malloc(STATE_MAX + 1);
	ssize_t n;

	if (!buf)
		return NULL;
	n = sysfs_read(STATE_PATH, buf, STATE_MAX + 1);
	if (n < 0 || n > STATE_MAX || !json_valid(buf, (size_t)n)) {
		if (n >= 0)
			log_warn("/%s: not valid JSON; ignored", STATE_PATH);
		free(buf);
		return NULL;
	}
	return buf;
}

/* The module directory of the running kernel, or of the tree under --root. */
static void modules_setup(const struct options *o, char *kver, size_t size)
{
	char dir[320];
	ssize_t n = sysfs_read("proc/sys/kernel/osrelease", kver, size);

	if (n > 0)
		rstrip(kver);
	else
		strscpy(kver, "unknown", size);
	if (!o->root) {
		if (mod_init(NULL) < 0)
			log_warn("cannot open the module directory of %s", kver);
		return;
	}
	snprintf(dir, sizeof(dir), "%s/lib/modules/%s", o->root, kver);
	if (access(dir, F_OK) < 0)
		snprintf(dir, sizeof(dir), "%s/usr/lib/modules/%s", o->root, kver);
	if (access(dir, F_OK) == 0)
		mod_init(dir);
}

/* vfio variant drivers, from modules.alias, for the devices a VM mode may bind. */
static void find_variants(const struct settings *s, struct inventory *inv)
{
	size_t i;

	if (s->mode != MODE_VM_PASSTHROUGH)
		return;
	for (i = 0; i < inv->n; i++) {
		struct pci_dev *d = &inv->dev[i];

		if (d->details && d->modalias[0] && !pci_class_is_bridge(d->class) &&
		    mod_vfio_variant(d->modalias, d->variant, sizeof(d->variant)) == 0 &&
		    streq(d->variant, "vfio_pci"))
			d->variant[0] = '\0';	/* vfio-pci itself is the default */
	}
}

static unsigned long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000;
}

static const char *apply_result(const struct exec_result *x)
{
	if (x->n_failed == 0)
		return x->n_changed ? "ok" : "noop";
	return x->n_ok ? "partial" : "failed";
}

static void log_outcome(const struct inventory *inv, const struct plan *p,
			const struct exec_result *x, double ms)
{
	size_t i, gpus = 0, comp = 0;
	const char *target = "vfio-pci";

	for (i = 0; i < x->n_modules; i++)
		if (x->modules[i].err)
			log_err("cannot load %s", x->modules[i].msg);
		else if (x->modules[i].loaded)
			log_info("loaded %s", x->modules[i].name);
	for (i = 0; i < inv->n; i++) {
		const struct plan_dev *pd = &p->dev[i];
		const struct exec_dev *ed = &x->dev[i];
		bool bad = pd->failed || ed->result == RES_FAILED || ed->result == RES_HELD ||
			   ed->result == RES_RELEASED;

		if (bad) {
			log_err("%s: %s", inv->dev[i].name, ed->error[0] ? ed->error : pd->reason);
			continue;
		}
		if (ed->result == RES_OK || ed->result == RES_UNVERIFIED)
			log_info("%s: %s -> %s (%s%s)", inv->dev[i].name,
				 ed->before[0] ? ed->before : "no driver",
				 ed->result == RES_OK ? (ed->after[0] ? ed->after : "no driver") :
				 pd->target[0] ? pd->target : "the host driver",
				 action_name(pd->action),
				 ed->result == RES_UNVERIFIED ? ", not verified: no kernel under --root" : "");
		if (pd->action == ACT_SKIP)
			continue;
		if (pd->selected)
			gpus++;
		else if (pd->role == ROLE_COMPANION)
			comp++;
		if (pd->target[0])
			target = pd->target;
	}
	if (p->mode == MODE_VM_PASSTHROUGH)
		log_info("%s: %zu GPU%s and %zu companion function%s on %s, %zu failed, in %.1f ms",
			 mode_name(p->mode), gpus, gpus == 1 ? "" : "s", comp, comp == 1 ? "" : "s",
			 target, x->n_failed, ms);
	else
		log_info("%s: %zu GPU%s in place for the host driver, %zu failed, in %.1f ms",
			 mode_name(p->mode), gpus, gpus == 1 ? "" : "s", x->n_failed, ms);
}

static void write_state(struct report *rep)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int r;

	if (!f) {
		log_err("cannot write /%s: out of memory", STATE_PATH);
		return;
	}
	report_json(f, rep);
	if (fclose(f) != 0) {
		log_err("cannot write /%s: out of memory", STATE_PATH);
		free(buf);
		return;
	}
	r = sysfs_write_file("run/gpuvm", "state.json", buf, len);
	if (r < 0)
		log_err("cannot write /%s: %s", STATE_PATH, strerror(-r));
	free(buf);
}

static void cmd_plan(const struct options *o, const char *command, bool status, bool apply,
		     struct outcome *out)
{
	struct inventory inv = { 0 };
	struct settings s;
	struct plan p = { 0 };
	struct exec_result x = { 0 };
	struct report rep = { .command = command, .settings = &s, .inv = &inv };
	unsigned long long t0 = now_us();
	char *cmdline = read_cmdline(o), *state = NULL, kver[128];
	int r;

	if (!cmdline) {
		log_err("out of memory");
		out->error = true;
		return;
	}
	load_settings(o, cmdline, &s);
	r = scan(&s, cmdline, &inv);
	if (r < 0) {
		out->error = true;
		goto out;
	}
	if (status) {
		state = read_state();
		rep.state_path = "/" STATE_PATH;
		rep.last_state = state;
		goto print;
	}
	modules_setup(o, kver, sizeof(kver));
	find_variants(&s, &inv);
	r = plan_build(&p, &s, &inv);
	if (r < 0) {
		log_err("cannot build the plan: %s", strerror(-r));
		out->error = true;
		goto out;
	}
	rep.plan = &p;
	out->iommu_unusable = p.iommu_unusable;
	out->selected = p.n_selected;
	out->failed = p.n_failed;
	out->ok = p.n_selected - p.n_failed;
	if (apply) {
		struct exec_opts eo = {
			.load_modules = !o->root,
			.verify = !o->root,
			.timeout_ms = s.write_timeout_ms,
		};

		r = execute(&p, &s, &inv, &eo, &x);
		if (r < 0) {
			log_err("cannot apply the plan: %s", strerror(-r));
			out->error = true;
			goto out;
		}
		rep.exec = &x;
		rep.result = apply_result(&x);
		rep.kernel = kver;
		rep.elapsed_us = now_us() - t0;
		log_outcome(&inv, &p, &x, (double)rep.elapsed_us / 1000.0);
		write_state(&rep);
		out->ok = x.n_ok;
		out->failed = x.n_failed;
		if (!o->json)
			goto out;
	}
print:
	if (o->json)
		report_json(stdout, &rep);
	else
		report_text(stdout, &rep);
out:
	exec_result_free(&x);
	plan_free(&p);
	inventory_free(&inv);
	mod_fini();
	free(state);
	free(cmdline);
}

/* The running command line's last value per key, for comparison. */
struct have_ctx {
	const char *key;
	const char *value;
	bool found;
};

static int find_param(const char *key, const char *value, void *data)
{
	struct have_ctx *h = data;
	char name[64];

	if (streq(key, h->key) ||
	    (startswith(h->key, "gpuvm.") && cmdline_key(key, "gpuvm", name, sizeof(name)) &&
	     streq(name, h->key + 6)))
		h->found = value && streq(value, h->value);
	return 0;
}

struct want_ctx {
	const char *running;
	char missing[512];
};

static int check_param(const char *key, const char *value, void *data)
{
	struct want_ctx *w = data;
	struct have_ctx h = { .key = key, .value = value ? value : "" };

	cmdline_parse(w->running, find_param, &h);
	if (!h.found) {
		size_t n = strlen(w->missing);

		snprintf(w->missing + n, sizeof(w->missing) - n, "%s%s=%s", n ? " " : "", key,
			 value ? value : "");
	}
	return 0;
}

static void conflicts(const struct iommu_params *ip, enum mode m, enum cpu_vendor cpu,
		      const char *out[], size_t *n)
{
	*n = 0;
	if (m != MODE_CONTAINER) {
		if (ip->intel_iommu == 0 && cpu == CPU_INTEL)
			out[(*n)++] = "intel_iommu=off turns the IOMMU off";
		if (ip->iommu_off)
			out[(*n)++] = "iommu=off turns the IOMMU off";
		if (ip->amd_iommu_off == 1 && cpu == CPU_AMD)
			out[(*n)++] = "amd_iommu=off turns the IOMMU off";
		if (ip->vfio_blacklisted)
			out[(*n)++] = "a module blacklist on the command line names a vfio module";
	} else if (ip->vfio_ids) {
		out[(*n)++] = "vfio-pci.ids= hands devices to vfio-pci in mode container";
	}
	if (ip->amd_iommu_on)
		out[(*n)++] = "amd_iommu=on is not a value the kernel knows (AMD-Vi is on by default)";
}

static void cmd_cmdline(const struct options *o, struct outcome *out)
{
	struct settings s;
	struct iommu_params ip;
	enum mode m;
	enum cpu_vendor cpu;
	struct want_ctx w = { 0 };
	const char *conf[8];
	char line[256], cpuinfo[4096];
	char *running = read_cmdline(o);
	size_t n, i;

	if (!running) {
		log_err("out of memory");
		out->error = true;
		return;
	}
	load_settings(o, running, &s);
	m = s.mode;
	if (o->mode && mode_parse(o->mode, &m) < 0) {
		log_err("--mode: unknown mode '%s' (expected container, vm-passthrough or vm-vgpu)",
			o->mode);
		free(running);
		out->usage = true;
		return;
	}
	if (!o->cpu || streq(o->cpu, "auto")) {
		cpu = sysfs_read("proc/cpuinfo", cpuinfo, sizeof(cpuinfo)) > 0 ?
			      cpu_vendor_from_cpuinfo(cpuinfo) : CPU_UNKNOWN;
	} else if (cpu_vendor_parse(o->cpu, &cpu) < 0) {
		log_err("--cpu: unknown vendor '%s' (expected intel, amd, arm or auto)", o->cpu);
		free(running);
		out->usage = true;
		return;
	}
	iommu_mode_params(m, cpu, line, sizeof(line));
	w.running = running;
	cmdline_parse(line, check_param, &w);
	iommu_params_parse(running, &ip);
	conflicts(&ip, m, cpu, conf, &n);

	if (o->json) {
		struct json j;

		json_init(&j, stdout);
		json_object_begin(&j, NULL);
		json_string(&j, "mode", mode_name(m));
		json_string(&j, "cpu_vendor", cpu_vendor_name(cpu));
		json_string(&j, "params", line);
		json_string(&j, "missing", w.missing);
		json_array_begin(&j, "conflicts");
		for (i = 0; i < n; i++)
			json_string(&j, NULL, conf[i]);
		json_array_end(&j);
		json_object_end(&j);
		json_finish(&j);
	} else {
		printf("%s\n", line);
		if (w.missing[0])
			fprintf(stderr, "gpuvm: the running command line lacks: %s\n", w.missing);
		for (i = 0; i < n; i++)
			fprintf(stderr, "gpuvm: the running command line conflicts: %s\n", conf[i]);
	}
	free(running);
}

void run(const struct options *o, enum command c, struct outcome *out)
{
	memset(out, 0, sizeof(*out));
	switch (c) {
	case CMD_CMDLINE:
		cmd_cmdline(o, out);
		break;
	case CMD_STATUS:
		cmd_plan(o, "status", true, false, out);
		break;
	case CMD_APPLY:
		cmd_plan(o, "apply", false, true, out);
		break;
	case CMD_PLAN:
		cmd_plan(o, "plan", false, false, out);
		break;
	}
}

