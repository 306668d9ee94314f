// SPDX-License-Identifier: MIT
/*
 * The flow of one command: settings (cmdline + config) -> inventory -> plan ->
 * execute -> verify -> report. main() only parses options and picks the exit status.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "cluster.h"
#include "cmdline.h"
#include "config.h"
#include "execute.h"
#include "hostdev.h"
#include "iomem.h"
#include "inventory.h"
#include "iommu.h"
#include "json.h"
#include "kmod.h"
#include "log.h"
#include "plan.h"
#include "report.h"
#include "run.h"
#include "settings.h"
#include "source.h"
#include "tag.h"
#include "sysfs.h"
#include "util.h"
#include "writefile.h"

#define STATE_PATH "run/gpuvm/state.json"
#define STATE_MAX ((size_t)1024 * 1024)
#define IOMEM_MAX ((size_t)256 * 1024)
#define PCIIDS_MAX ((size_t)4 * 1024 * 1024)

/*
 * The kernel command line: bootconfig makes it 32 KiB and more, far past one read's page,
 * so it is read to its end; CMDLINE_MAX, well above that, bounds /proc/cmdline and, in all,
 * the initramfs's /etc/cmdline.d. Past it, the rest is cut at a word and said.
 */
#define CMDLINE_D "etc/cmdline.d"
#define CMDLINE_MAX ((size_t)128 * 1024)
/* What is past the bound is only counted, and only so far: the file need not end. */
#define CMDLINE_COUNT_MAX ((size_t)16 * 1024 * 1024)

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

/* What a cut-short read keeps of the bytes past its bound: enough to name the first word. */
#define PEEK_LEN 48

/*
 * Read the regular file path (under the root) to its end: up to max bytes into buf (of max
 * + 1), NUL-terminated, in *len; the bytes past max are counted in *over (up to
 * CMDLINE_COUNT_MAX) and not kept but for the first ones, in peek. -errno.
 */
static int read_to_eof(const char *path, char *buf, size_t max, size_t *len, size_t *over,
		       char peek[PEEK_LEN])
{
	char skip[4096];
	struct stat st;
	int fd, r = 0;

	*len = *over = 0;
	buf[0] = peek[0] = '\0';
	fd = openat(sysfs_rootfd(), path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto out;
	}
	while (*over < CMDLINE_COUNT_MAX) {
		bool keep = *len < max;
		ssize_t n = read(fd, keep ? buf + *len : skip, keep ? max - *len : sizeof(skip));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		if (keep) {
			*len += (size_t)n;
			continue;
		}
		if (*over == 0) {
			size_t p = (size_t)n < PEEK_LEN - 1 ? (size_t)n : PEEK_LEN - 1;

			memcpy(peek, skip, p);
			peek[p] = '\0';
		}
		*over += (size_t)n;
	}
out:
	buf[*len] = '\0';
	close(fd);
	return r;
}

/*
 * Text cut at max bytes: keep only whole words (a blank outside quotes ends one), so that
 * no half of a gpuvm.KEY=VALUE is taken for the whole. The new length.
 */
static size_t cut_at_word(const char *s, size_t len)
{
	size_t i, cut = 0;
	bool quoted = false;

	for (i = 0; i < len; i++) {
		if (s[i] == '"')
			quoted = !quoted;
		else if (!quoted && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n'))
			cut = i;
	}
	return cut;
}

/*
 * Say what is ignored past the bound: the bytes from offset from of the len kept at s (a
 * word cut there), over more, and the word they start with (its rest in peek).
 */
static void say_cut(const char *head, const char *s, size_t from, size_t len, size_t over,
		    const char *peek)
{
	char word[PEEK_LEN + 48];
	size_t n, kept;

	while (from < len && (s[from] == ' ' || s[from] == '\t' || s[from] == '\n'))
		from++;
	kept = len - from < 48 ? len - from : 48;
	snprintf(word, sizeof(word), "%.*s%s", (int)kept, s + from,
		 kept ? peek : peek + strspn(peek, " \t\n"));
	n = strcspn(word, " \t\n\r");
	if (n > 40)
		memcpy(word + 40, "...", 4);
	else
		word[n] = '\0';
	log_warn("%s; the last %s%zu bytes ignored%s%s%s", head,
		 over >= CMDLINE_COUNT_MAX ? "more than " : "", len - from + over,
		 n ? ", from '" : "", word, n ? "'" : "");
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
	char *all, peek[PEEK_LEN];
	size_t len = 0, n, over, i;
	int r;

	if (o->cmdline)
		return strdup(o->cmdline);
	/* cmdline.d in all, then /proc/cmdline, each up to CMDLINE_MAX: neither crowds out the other */
	all = malloc(2 * CMDLINE_MAX + 2);
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
			char path[96], head[160];

			snprintf(path, sizeof(path), CMDLINE_D "/%s", names[i]);
			if (read_to_eof(path, all + len, CMDLINE_MAX - len, &n, &over, peek) < 0)
				continue;
			n = strnlen(all + len, n);	/* a NUL ends a file's text */
			for (char *c = all + len; *c; c++)
				if (*c == '\n' || *c == '\r')
					*c = ' ';
			if (over) {
				size_t cut = cut_at_word(all + len, n);

				snprintf(head, sizeof(head), "/%s: past %zu bytes of /%s in all", path,
					 CMDLINE_MAX, CMDLINE_D);
				say_cut(head, all + len, cut, n, over, peek);
				n = cut;
			}
			len += n;
			if (n && len < CMDLINE_MAX)
				all[len++] = ' ';
		}
	}
	free(names);
	all[len] = '\0';
	r = read_to_eof("proc/cmdline", all + len, CMDLINE_MAX, &n, &over, peek);
	if (r < 0) {
		log_warn("cannot read /proc/cmdline: %s; no kernel parameters used", strerror(-r));
	} else if (over) {
		size_t cut = cut_at_word(all + len, n);
		char head[64];

		snprintf(head, sizeof(head), "/proc/cmdline: longer than %zu bytes", CMDLINE_MAX);
		say_cut(head, all + len, cut, n, over, peek);
		all[len + cut] = '\0';
	}
	rstrip(all);
	return all;
}

/* The initramfs's config and the command line, config= not followed (cmdline, config set). */
static int load_settings(const struct options *o, const char *cmdline, struct settings *s)
{
	struct source src;

	return settings_resolve(o, cmdline, SRC_NO_DISK, s, &src);
}

/* The devices to read in detail: what the plan looks at, and what a pending record held. */
struct interest {
	const struct settings *s;
	const struct source *src;
};

static bool interesting(const struct pci_dev *d, const void *data)
{
	const struct interest *in = data;
	size_t i;

	if (plan_interesting(d, in->s))
		return true;
	for (i = 0; i < in->src->n_held; i++)
		if (pci_addr_cmp(&in->src->held[i], &d->addr) == 0)
			return true;
	return false;
}

static int scan_for(const struct settings *s, const struct source *src, const char *cmdline,
		    struct inventory *inv)
{
	struct interest in = { .s = s, .src = src };
	int r;

	iommu_read(&inv->iommu, cmdline);
	r = inventory_scan(inv, interesting, &in);
	if (r < 0)
		log_err("cannot read the PCI devices in /sys/bus/pci/devices: %s", strerror(-r));
	else if (s->n_ids)
		hostdev_mark(inv, cmdline);	/* the default match cannot take them */
	return r;
}

static char *read_state(void)
{
	char *buf = malloc(STATE_MAX + 1);
	ssize_t n;

	if (!buf)
		return NULL;
	n = sysfs_read(STATE_PATH, buf, STATE_MAX + 1);
	if (n < 0 || (size_t)n > STATE_MAX || !json_valid(buf, (size_t)n)) {
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
		else if (mod_dir() && access(mod_dir(), F_OK) < 0)
			log_warn("cannot open the module directory %s: %s; only drivers already in the kernel can be used",
				 mod_dir(), strerror(errno));
		return;
	}
	snprintf(dir, sizeof(dir), "%s/lib/modules/%s", o->root, kver);
	if (access(dir, F_OK) < 0)
		snprintf(dir, sizeof(dir), "%s/usr/lib/modules/%s", o->root, kver);
	if (access(dir, F_OK) == 0)
		mod_init(dir);
}

/* vfio variant drivers, from modules.alias, for the devices a VM mode may bind. -ENOMEM. */
static int find_variants(const struct settings *s, struct inventory *inv)
{
	size_t i;

	if (s->mode != MODE_VM_PASSTHROUGH)
		return 0;
	for (i = 0; i < inv->n; i++) {
		struct pci_dev *d = &inv->dev[i];
		char alias[MODALIAS_LEN], variant[DRIVER_LEN];
		const char *v;

		/* An unidentified function, a bridge, what the host needs: never bound, no lookup. */
		if (!d->details || d->unidentified || pci_class_is_bridge(d->class) ||
		    pci_class_host_needs(d->vendor, d->class) || d->host_use != HOST_USE_NONE)
			continue;
		pci_dev_modalias(d, alias, sizeof(alias));
		if (mod_vfio_variant(alias, variant, sizeof(variant)) < 0 ||
		    streq(variant, "vfio_pci"))	/* vfio-pci itself is the default */
			continue;
		v = strpool_add(&inv->names, variant);
		if (!v)
			return -ENOMEM;
		d->variant = v;
	}
	return 0;
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

/* The outcome: log_result() lines, which no flood of messages before them holds back. */
static void log_outcome(const struct inventory *inv, const struct plan *p,
			const struct exec_result *x, double ms)
{
	size_t i, gpus = 0, comp = 0;
	const char *target = "vfio-pci";

	for (i = 0; i < x->n_modules; i++)
		if (x->modules[i].err)
			log_result(LOG_ERR, "cannot load %s", x->modules[i].msg);
		else if (x->modules[i].loaded)
			log_result(LOG_INFO, "loaded %s", x->modules[i].name);
	for (i = 0; i < inv->n; i++) {
		const struct plan_dev *pd = &p->dev[i];
		const struct exec_dev *ed = &x->dev[i];
		bool bad = pd->failed || ed->result == RES_FAILED || ed->result == RES_HELD ||
			   ed->result == RES_RELEASED;

		if (bad) {
			log_result(LOG_ERR, "%s: %s", inv->dev[i].name,
				   ed->error[0] ? ed->error : pd->reason);
			continue;
		}
		if (ed->result == RES_OK || ed->result == RES_UNVERIFIED)
			log_result(LOG_INFO, "%s: %s -> %s (%s%s)", inv->dev[i].name,
				   inv->dev[i].driver[0] ? inv->dev[i].driver : "no driver",
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
		log_result(LOG_INFO,
			   "%s: %zu GPU%s and %zu companion function%s on %s, %zu failed, in %.1f ms",
			   mode_name(p->mode), gpus, gpus == 1 ? "" : "s", comp, comp == 1 ? "" : "s",
			   target, x->n_failed, ms);
	else
		log_result(LOG_INFO, "%s: %zu GPU%s in place for the host driver, %zu failed, in %.1f ms",
			   mode_name(p->mode), gpus, gpus == 1 ? "" : "s", x->n_failed, ms);
}

/*
 * The cause of every outcome that is not a success, kept for the report's "errors" (and,
 * for what is only a warning, "warnings"): a VM mode without an IOMMU, what the host needs
 * and ids= would have taken, an unidentified function. The devices that fail are told here
 * for plan; apply tells them after execution, with what became of them (log_outcome).
 */
static void log_plan(const struct inventory *inv, const struct plan *p, const struct settings *s,
		     bool devices)
{
	size_t i;

	if (p->iommu_unusable)
		log_result(LOG_ERR, "%s needs an active IOMMU and none is active: %zu selected device%s %s (on_error=%s); `gpuvm check` says what to change",
			mode_name(p->mode), p->n_selected, p->n_selected == 1 ? "" : "s",
			s->on_error == ON_ERROR_HOLD ? "held" : "left to the host",
			s->on_error == ON_ERROR_HOLD ? "hold" : "release");
	for (i = 0; i < inv->n; i++) {
		const struct plan_dev *pd = &p->dev[i];

		if (devices && pd->failed)
			log_result(LOG_ERR, "%s: %s", inv->dev[i].name, pd->reason);
		else if (!pd->failed && ((pd->role == ROLE_HOST && pd->listed) ||
					 pd->role == ROLE_UNIDENTIFIED))
			log_warn("%s: %s", inv->dev[i].name, pd->reason);
	}
}

static void fill_state(FILE *f, void *rep)
{
	report_json(f, rep);
}

/* Streamed into the file: at 10,000 functions the text is a third of a megabyte. */
static void write_state(struct report *rep)
{
	int r = sysfs_write_file_with("run/gpuvm", "state.json", fill_state, rep);

	if (r < 0)
		log_err("cannot write /%s: %s", STATE_PATH, wf_strerror(r));
}

/* apply while config='s disk is awaited: record what is held and until when. */
static void record_wait(const struct source *src, const struct inventory *inv,
			const struct plan *p)
{
	struct pci_addr held[SOURCE_HELD_MAX];
	size_t i, n = 0;
	int r;

	for (i = 0; i < inv->n && n < SOURCE_HELD_MAX; i++)
		if (p->dev[i].selected)
			held[n++] = inv->dev[i].addr;
	r = pending_write(src, held, n);
	if (r < 0)
		log_err("cannot write /run/gpuvm/pending: %s; the GPUs stay held", wf_strerror(r));
	log_result(LOG_WARNING, "config=%s: not there yet; %zu GPU%s held, waiting up to %u s for it",
		   src->spec, n, n == 1 ? "" : "s", src->timeout_s);
}

static void cmd_plan(const struct options *o, const char *command, bool status, bool apply,
		     struct outcome *out)
{
	struct inventory inv = { 0 };
	struct settings s;
	struct source src;
	struct plan p = { 0 };
	struct exec_result x = { 0 };
	struct report rep = { .command = command, .settings = &s, .inv = &inv, .source = &src };
	unsigned long long t0 = now_us();
	enum source_policy pol = SRC_LOOK;
	char *cmdline = read_cmdline(o), *state = NULL, kver[128];
	int r;

	if (!cmdline) {
		log_err("out of memory");
		out->error = true;
		return;
	}
	if (apply && o->resume && !sysfs_exists("run/gpuvm/pending")) {
		log_debug("apply --resume: nothing is pending");
		goto out;
	}
	if (apply)
		pol = o->defer ? SRC_DEFER : o->resume ? SRC_RESUME : SRC_LOOK;
	modules_setup(o, kver, sizeof(kver));
	settings_resolve(o, cmdline, pol, &s, &src);
	if (src.status == SRC_WAITING && o->resume) {
		out->pending = true;	/* still waiting: nothing changes */
		goto out;
	}
	r = scan_for(&s, &src, cmdline, &inv);
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
	if (src.status == SRC_WAITING) {
		r = plan_build_hold(&p, &s, &inv);
	} else {
		r = find_variants(&s, &inv);
		if (r == 0)
			r = plan_build(&p, &s, &inv);
	}
	if (r < 0) {
		log_err("cannot build the plan: %s", strerror(-r));
		out->error = true;
		goto out;
	}
	rep.plan = &p;
	log_plan(&inv, &p, &s, !apply);
	out->iommu_unusable = p.iommu_unusable;
	out->selected = p.n_selected;
	out->failed = p.n_failed + p.n_unidentified;
	out->ok = p.n_selected - p.n_failed;
	out->pending = src.status == SRC_WAITING;
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
		rep.result = src.status == SRC_WAITING ? "waiting" : apply_result(&x);
		rep.kernel = kver;
		rep.elapsed_us = now_us() - t0;
		if (src.status == SRC_WAITING) {
			record_wait(&src, &inv, &p);
		} else {
			log_outcome(&inv, &p, &x, (double)rep.elapsed_us / 1000.0);
			if (src.pending || o->defer || o->resume) {
				r = pending_remove();
				if (r < 0)
					log_err("cannot remove /run/gpuvm/pending: %s", wf_strerror(r));
			}
		}
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
		/* The parameters come from a table; what the running line lacks is a copy of them. */
		term_safe(w.missing, w.missing, sizeof(w.missing));
		printf("%s\n", line);
		if (w.missing[0])
			fprintf(stderr, "gpuvm: the running command line lacks: %s\n", w.missing);
		for (i = 0; i < n; i++)
			fprintf(stderr, "gpuvm: the running command line conflicts: %s\n", conf[i]);
	}
	free(running);
}

/* gpuvm check: the plan for the mode asked, and what stands between it and the host. */
struct res_ctx {
	const struct inventory *inv;
	char buf[2048];
};

static const char *read_resource(size_t i, void *data)
{
	struct res_ctx *c = data;
	char path[96];

	snprintf(path, sizeof(path), "sys/bus/pci/devices/%s/resource", c->inv->dev[i].name);
	return sysfs_read(path, c->buf, sizeof(c->buf)) > 0 ? c->buf : NULL;
}

static void cmd_check(const struct options *o, struct outcome *out)
{
	struct inventory inv = { 0 };
	struct settings s;
	struct source src;
	struct plan p = { 0 };
	struct finding f[48];
	struct mem_range fb[8];
	struct res_ctx rc = { .inv = &inv };
	struct check_input in = { .s = &s, .inv = &inv, .plan = &p, .fb = fb, .resource = read_resource,
				  .data = &rc };
	char *cmdline = read_cmdline(o), kver[128], *iomem = NULL;
	size_t n, i, errors = 0, warnings = 0;

	if (!cmdline) {
		out->error = true;
		return;
	}
	settings_resolve(o, cmdline, SRC_LOOK, &s, &src);
	if (o->mode && mode_parse(o->mode, &s.mode) < 0) {
		log_err("--mode: unknown mode '%s' (expected container, vm-passthrough or vm-vgpu)", o->mode);
		out->usage = true;
		goto out;
	}
	if (o->mode)
		strscpy(s.source[KEY_MODE], "--mode", SOURCE_LEN);
	if (scan_for(&s, &src, cmdline, &inv) < 0) {
		out->error = true;
		goto out;
	}
	modules_setup(o, kver, sizeof(kver));
	if (find_variants(&s, &inv) < 0 || plan_build(&p, &s, &inv) < 0) {
		log_err("cannot build the plan: out of memory");
		out->error = true;
		goto out;
	}
	in.kver = kver;
	in.vfio = mod_state("vfio-pci", !o->root);
	iomem = malloc(IOMEM_MAX);
	if (iomem && sysfs_read("proc/iomem", iomem, IOMEM_MAX) > 0)
		in.n_fb = iomem_framebuffers(iomem, fb, ARRAY_SIZE(fb));
	n = check_findings(&in, f, ARRAY_SIZE(f));
	for (i = 0; i < n; i++) {
		errors += f[i].sev == SEV_ERROR;
		warnings += f[i].sev == SEV_WARNING;
	}
	out->not_ready = errors > 0;
	if (o->json) {
		struct json j;

		json_init(&j, stdout);
		json_object_begin(&j, NULL);
		json_string(&j, "mode", mode_name(s.mode));
		json_string(&j, "mode_source", s.source[KEY_MODE]);
		json_string(&j, "cpu_vendor", cpu_vendor_name(inv.iommu.cpu));
		json_string(&j, "kernel", kver);
		json_bool(&j, "ready", errors == 0);
		json_int(&j, "errors", (long long)errors);
		json_int(&j, "warnings", (long long)warnings);
		json_array_begin(&j, "findings");
		for (i = 0; i < n; i++) {
			json_object_begin(&j, NULL);
			json_string(&j, "severity", severity_name(f[i].sev));
			json_string(&j, "what", f[i].what);
			json_string(&j, "fix", f[i].fix);
			json_object_end(&j);
		}
		json_array_end(&j);
		json_object_end(&j);
		json_finish(&j);
	} else {
		/* Findings name drivers from sysfs and framebuffers from /proc/iomem: masked. */
		term_safe(s.source[KEY_MODE], s.source[KEY_MODE], SOURCE_LEN);
		term_safe(kver, kver, sizeof(kver));
		printf("gpuvm check: %s (from %s) on %s, kernel %s\n", mode_name(s.mode),
		       s.source[KEY_MODE], cpu_vendor_name(inv.iommu.cpu), kver);
		for (i = 0; i < n; i++) {
			term_safe(f[i].what, f[i].what, sizeof(f[i].what));
			printf("%-8s %s\n         fix: %s\n", f[i].sev == SEV_ERROR ? "ERROR" :
			       f[i].sev == SEV_WARNING ? "WARNING" : "INFO", f[i].what, f[i].fix);
		}
		if (errors)
			printf("not ready for %s: %zu error%s, %zu warning%s\n", mode_name(s.mode),
			       errors, errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
		else
			printf("ready for %s (%zu warning%s)\n", mode_name(s.mode), warnings,
			       warnings == 1 ? "" : "s");
	}
out:
	plan_free(&p);
	inventory_free(&inv);
	mod_fini();
	free(iomem);
	free(cmdline);
}

/*
 * A string of the last state file at a path of keys ("mode"; "config_disk", "status"), read
 * as JSON: escapes undone, a key only where it is a member, never a match inside a value.
 */
static bool state_string(const char *state, const char *a, const char *b, char *buf,
			 size_t size)
{
	const char *path[] = { a, b };

	return json_get_string(state, strlen(state), path, b ? 2 : 1, buf, size) == 0;
}

/* A top-level string of the last state file ("mode", "result"). */
static bool state_top(const char *key, char *buf, size_t size)
{
	char *state = read_state();
	bool ok;

	if (!state)
		return false;
	ok = state_string(state, key, NULL, buf, size);
	free(state);
	return ok;
}

static bool running_mode(char *buf, size_t size)
{
	return state_top("mode", buf, size);
}

/* A string field of the last state file's config_disk object. */
static bool state_disk(const char *state, const char *key, char *buf, size_t size)
{
	return state_string(state, "config_disk", key, buf, size);
}

/*
 * The path of abs (absolute; under dirfd, or AT_FDCWD) inside its own file system: the
 * directories above it are walked up while they are on the same device.
 */
static const char *in_fs_path(int dirfd, const char *abs, dev_t dev)
{
	char dir[PATH_MAX];
	const char *mount = abs + strlen(abs);
	struct stat st;

	if (strlen(abs) >= sizeof(dir))
		return abs;
	for (;;) {
		const char *slash = mount - 1;
		size_t n;

		while (slash > abs && *slash != '/')
			slash--;
		if (slash <= abs)
			break;	/* the parent is the root: same device as far as we look */
		n = (size_t)(slash - abs);
		memcpy(dir, abs, n);
		dir[n] = '\0';
		if (fstatat(dirfd, dirfd == AT_FDCWD ? dir : dir + 1, &st, 0) < 0 || st.st_dev != dev)
			return mount;
		mount = slash;
	}
	if (fstatat(dirfd, dirfd == AT_FDCWD ? "/" : ".", &st, 0) < 0 || st.st_dev != dev)
		return mount;
	return abs;
}

/*
 * Did the last boot read its config from this very file, on a disk (config=)? The device
 * it read is the one the file lives on, and the path it read is the file's path inside
 * that file system. Then the initramfs holds no copy that matters.
 */
static bool read_from_disk(const char *file, char *spec, size_t size)
{
	char *state = read_state(), status[16], dev[BLKDEV_NAME_MAX], abs[PATH_MAX];
	int dirfd = sysfs_rootfd();
	struct tag_spec t;
	struct stat d, f;
	const char *why;
	bool ok = false;

	if (!state)
		return false;
	if (file[0] != '/') {	/* --file: relative to the working directory */
		if (!realpath(file, abs)) {
			free(state);
			return false;
		}
		dirfd = AT_FDCWD;
		file = abs;
	}
	if (state_disk(state, "status", status, sizeof(status)) && streq(status, "disk") &&
	    state_disk(state, "device", dev, sizeof(dev)) && dev[0] == '/' &&
	    state_disk(state, "spec", spec, size) && tag_parse(spec, &t, &why) == 0 &&
	    fstatat(sysfs_rootfd(), dev + 1, &d, 0) == 0 && S_ISBLK(d.st_mode) &&
	    fstatat(dirfd, dirfd == AT_FDCWD ? file : file + 1, &f, 0) == 0 &&
	    d.st_rdev == f.st_dev)
		ok = streq(in_fs_path(dirfd, file, f.st_dev), t.file);
	free(state);
	return ok;
}

/* A whole file under the root, NUL-terminated, up to max bytes; NULL when absent. */
static char *read_file(const char *path, size_t max)
{
	char *buf;
	size_t len;

	if (config_read_max(sysfs_rootfd(), path, max, &buf, &len) < 0)
		return NULL;
	return buf;
}

/* gpuvm kubevirt: permittedHostDevices for the GPUs vm-passthrough gives to VMs. */
static void cmd_kubevirt(const struct options *o, struct outcome *out)
{
	static const char *const pciids[] = { "usr/share/misc/pci.ids", "usr/share/hwdata/pci.ids",
					      "usr/share/pci.ids" };
	struct inventory inv = { 0 };
	struct settings s;
	struct source src;
	struct plan p = { 0 };
	struct kv_device dev[32];
	char *cmdline = read_cmdline(o), *ids = NULL, kver[128], name[128];
	size_t i, j, n = 0;

	if (!cmdline) {
		out->error = true;
		return;
	}
	settings_resolve(o, cmdline, SRC_LOOK, &s, &src);
	s.mode = MODE_VM_PASSTHROUGH;
	if (scan_for(&s, &src, cmdline, &inv) < 0) {
		out->error = true;
		goto out;
	}
	modules_setup(o, kver, sizeof(kver));
	if (find_variants(&s, &inv) < 0 || plan_build(&p, &s, &inv) < 0) {
		out->error = true;
		goto out;
	}
	for (i = 0; i < ARRAY_SIZE(pciids) && !ids; i++)
		ids = read_file(pciids[i], PCIIDS_MAX);
	for (i = 0; i < inv.n; i++) {
		const struct pci_dev *d = &inv.dev[i];

		if (!p.dev[i].selected || p.dev[i].failed ||
		    (p.dev[i].action != ACT_BIND && p.dev[i].action != ACT_KEEP))
			continue;
		for (j = 0; j < n && (dev[j].vendor != d->vendor || dev[j].device != d->device); j++)
			;
		if (j < n) {
			dev[j].count++;
			continue;
		}
		if (n == ARRAY_SIZE(dev))
			break;
		dev[n].vendor = d->vendor;
		dev[n].device = d->device;
		dev[n].count = 1;
		kv_resource_name(ids && pciids_name(ids, d->vendor, d->device, name, sizeof(name)) == 0 ?
				 name : NULL, d->vendor, d->device, dev[n].resource, sizeof(dev[n].resource));
		n++;
	}
	if (!n)
		log_warn("no device would be in passthrough: the snippet is empty");
	if (o->json)
		kv_json(stdout, dev, n, o->external);
	else
		kv_yaml(stdout, dev, n, o->external);
out:
	plan_free(&p);
	inventory_free(&inv);
	mod_fini();
	free(ids);
	free(cmdline);
}

/*
 * gpuvm status --nfd: a Node Feature Discovery local feature file, from the last state file
 * (mode, result) and the devices as they are now (GPUs on a vfio driver).
 */
static void cmd_nfd(const struct options *o, struct outcome *out)
{
	struct inventory inv = { 0 };
	struct settings s;
	struct source src;
	struct plan p = { 0 };
	char *cmdline = read_cmdline(o), mode[32], result[32];
	size_t i, vfio = 0;

	if (!cmdline) {
		out->error = true;
		return;
	}
	settings_resolve(o, cmdline, SRC_LOOK, &s, &src);
	if (scan_for(&s, &src, cmdline, &inv) < 0 || plan_build(&p, &s, &inv) < 0) {
		out->error = true;
		goto out;
	}
	for (i = 0; i < inv.n; i++)
		if (p.dev[i].selected && driver_is_vfio(inv.dev[i].driver))
			vfio++;
	if (!state_top("mode", mode, sizeof(mode)))
		strscpy(mode, "none", sizeof(mode));
	if (!state_top("result", result, sizeof(result)))
		strscpy(result, "not-run", sizeof(result));
	printf("gpuvm-mode=%s\ngpuvm-result=%s\ngpuvm-vfio-gpus=%zu\n", mode, result, vfio);
out:
	plan_free(&p);
	inventory_free(&inv);
	free(cmdline);
}

/*
 * What config set stores for KEY=VALUE: exactly what config get will print, so the two
 * agree. Blanks around the value go (the parser drops them too); a control or non-ASCII
 * byte is refused (a newline would start a line of its own). The line is then read back
 * as a boot reads it, and stored in the form that reading gives (lists with commas, hex in
 * lower case, numbers without leading zeros), which must read back as itself. The key, or
 * -EINVAL: *why says why, or is NULL when the value is not one the key takes.
 */
static int stored_value(const char *key, const char *value, char *out, size_t size,
			const char **why)
{
	const char *s = value, *e, *c, *expect;
	char line[CONFIG_LINE_MAX + 1], got[CONFIG_LINE_MAX];
	struct settings_input in = { .config_path = "config set" };
	struct settings st;
	int k, pass, errors;

	*why = NULL;
	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	for (c = s; c < e; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f) {
			*why = "a control or non-ASCII character: the file could not hold it as it is";
			return -EINVAL;
		}
	if ((size_t)(e - s) >= size) {
		*why = "longer than a line of the file can be";
		return -EINVAL;
	}
	memcpy(out, s, (size_t)(e - s));
	out[e - s] = '\0';
	k = settings_check(key, out, &expect);
	if (k < 0)
		return -EINVAL;
	for (pass = 0; pass < 2; pass++) {
		int n = snprintf(line, sizeof(line), "%s=%s", key, out);

		if (n < 0 || n >= CONFIG_LINE_MAX) {
			*why = "longer than a line of the file can be";
			return -EINVAL;
		}
		in.config = line;
		in.config_len = (size_t)n;
		log_mute(true);
		errors = settings_load(&st, &in);
		log_mute(false);
		if (errors || streq(st.source[k], "default"))
			break;
		settings_value(&st, (enum setting_key)k, got, sizeof(got));
		if (streq(got, out))
			return k;
		/* The form the boot reads back: stored instead, if it reads back as itself. */
		strscpy(out, got, size);
	}
	*why = "it would not read back from the file as it is written";
	return -EINVAL;
}

/* gpuvm config get KEY | set KEY=VALUE: the host config, edited atomically. */
static void cmd_config(const struct options *o, struct outcome *out)
{
	const char *verb = o->args[0], *arg = o->args[1], *expect, *path;
	int dirfd = o->config ? AT_FDCWD : sysfs_rootfd();
	char key[64], *value, *cmdline = NULL, running[32], *buf = NULL, spec[256];
	char stored[CONFIG_LINE_MAX];
	const char *why;
	struct settings s;
	bool changed;
	size_t len;
	int k, r;

	path = o->config ? o->config : CONFIG_PATH + 1;
	if (streq(verb, "get")) {
		struct settings_input in = { .config_path = o->config ? o->config : CONFIG_PATH };

		if (settings_check(arg, "x", &expect) == -ENOENT) {
			log_err("config get: unknown key '%s'", arg);
			out->usage = true;
			return;
		}
		r = config_read(dirfd, path, &buf, &len);
		if (r < 0 && r != -ENOENT) {
			log_err("%s: cannot read: %s", in.config_path, strerror(-r));
			out->error = true;
			return;
		}
		in.config = buf;
		in.config_len = buf ? len : 0;
		settings_load(&s, &in);
		for (k = 0; k < KEY__MAX && !settings_same_key(key_name((enum setting_key)k), arg); k++)
			;
		if (k == KEY__MAX || streq(s.source[k], "default")) {
			log_err("%s: %s is not set", in.config_path, arg);
			out->error = true;
		} else {
			char v[SETTINGS_VALUE_MAX];

			settings_value(&s, (enum setting_key)k, v, sizeof(v));
			term_safe(v, v, sizeof(v));	/* validated, and text for a terminal all the same */
			printf("%s\n", v);
		}
		free(buf);
		return;
	}
	if (!streq(verb, "set")) {
		log_err("config: unknown verb '%s' (expected get or set)", verb);
		out->usage = true;
		return;
	}
	value = strchr(arg, '=');
	if (!value || value == arg || (size_t)(value - arg) >= sizeof(key)) {
		log_err("config set: expected KEY=VALUE, got '%s'", arg);
		out->usage = true;
		return;
	}
	snprintf(key, sizeof(key), "%.*s", (int)(value - arg), arg);
	value++;
	k = settings_check(key, "", &expect);
	if (k == -ENOENT) {
		log_err("config set: unknown key '%s'", key);
		out->usage = true;
		return;
	}
	k = stored_value(key, value, stored, sizeof(stored), &why);
	if (k < 0) {
		char shown[80];

		term_safe(value, shown, sizeof(shown));
		log_err("config set: %s: invalid value '%s' (%s%s)", key, shown, why ? why : "expected ",
			why ? "" : expect);
		out->usage = true;
		return;
	}
	r = config_update(dirfd, path, key, stored, settings_same_key, &changed, &why);
	if (r < 0 && why) {
		log_err("%s: not written: %s", o->config ? o->config : CONFIG_PATH, why);
		out->error = true;
		return;
	}
	if (r < 0) {
		log_err("%s: cannot write: %s", o->config ? o->config : CONFIG_PATH, strerror(-r));
		out->error = true;
		return;
	}
	printf("%s: %s=%s%s\n", o->config ? o->config : CONFIG_PATH, key, stored,
	       changed ? "" : " (unchanged)");

	/* When does it take effect? The command line may override it; a reboot applies it. */
	cmdline = read_cmdline(o);
	if (!cmdline) {
		out->error = true;
		return;
	}
	load_settings(o, cmdline, &s);
	if (streq(s.source[k], "cmdline"))
		printf("note: the kernel command line sets %s, which overrides the file\n", key_name((enum setting_key)k));
	if (k == KEY_MODE && running_mode(running, sizeof(running))) {
		if (streq(running, mode_name(s.mode)))
			printf("the running boot is already in %s\n", running);
		else
			printf("reboot needed: this boot runs %s, the next one %s\n", running,
			       mode_name(s.mode));
	} else {
		printf("takes effect at the next boot\n");
	}
	if (read_from_disk(o->config ? o->config : CONFIG_PATH, spec, sizeof(spec)))
		printf("this boot read its config from this file on a disk (config=%s): no dracut -f needed\n",
		       spec);
	else if (!o->config && sysfs_exists("usr/lib/dracut/modules.d/90gpuvm"))
		printf("the initramfs carries a copy of %s: run dracut -f before rebooting\n", CONFIG_PATH);
	free(cmdline);
}

void run(const struct options *o, enum command c, struct outcome *out)
{
	memset(out, 0, sizeof(*out));
	switch (c) {
	case CMD_CMDLINE:
		cmd_cmdline(o, out);
		break;
	case CMD_STATUS:
		if (o->nfd)
			cmd_nfd(o, out);
		else
			cmd_plan(o, "status", true, false, out);
		break;
	case CMD_KUBEVIRT:
		cmd_kubevirt(o, out);
		break;
	case CMD_APPLY:
		cmd_plan(o, "apply", false, true, out);
		break;
	case CMD_PLAN:
		cmd_plan(o, "plan", false, false, out);
		break;
	case CMD_CHECK:
		cmd_check(o, out);
		break;
	case CMD_CONFIG:
		cmd_config(o, out);
		break;
	}
}

