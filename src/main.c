// SPDX-License-Identifier: MIT
/*
 * gpuvm: put each GPU in the mode its node label asks for, at boot, before any GPU
 * driver can take it. This file parses the command line, runs a command and decides
 * what a failure means: it is the only place that picks an exit status.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmdline.h"
#include "config.h"
#include "inventory.h"
#include "iommu.h"
#include "json.h"
#include "log.h"
#include "plan.h"
#include "report.h"
#include "settings.h"
#include "sysfs.h"
#include "util.h"

enum {
	EXIT_OK = 0,		/* every device in its requested state, or nothing to do */
	EXIT_FAILED = 1,	/* no selected device reached its state; or gpuvm could not run */
	EXIT_USAGE = 2,		/* bad command line */
	EXIT_NO_IOMMU = 3,	/* a VM mode, GPUs selected, and no active IOMMU */
	EXIT_PARTIAL = 4,	/* some selected devices reached their state, others did not */
};

#define STATE_PATH "run/gpuvm/state.json"
#define STATE_MAX (1024 * 1024)

struct options {
	const char *root;
	const char *cmdline;
	const char *config;
	bool json, quiet, verbose, dry_run;
	const char *mode;
	const char *cpu;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: gpuvm [OPTIONS] COMMAND\n"
		"\n"
		"Put each GPU in the mode the host asks for, before any GPU driver can take it.\n"
		"\n"
		"Commands:\n"
		"  apply [--dry-run]   bind the GPUs as the mode asks (the boot hook's command);\n"
		"                      --dry-run prints the plan and changes nothing\n"
		"  plan                what apply would do, changing nothing\n"
		"  status              devices, IOMMU groups, IOMMU state and the last apply\n"
		"  cmdline [--mode M] [--cpu intel|amd|auto]\n"
		"                      the kernel parameters a mode needs on this CPU; the ones\n"
		"                      the running command line lacks are listed on stderr\n"
		"\n"
		"Options:\n"
		"  --root DIR          read and write /sys, /proc, /etc and /run under DIR and load\n"
		"                      no module (tests, fixtures); /dev/kmsg is not written\n"
		"  --cmdline STRING    use STRING as the kernel command line\n"
		"  --config FILE       read the host config from FILE (default %s)\n"
		"  --json              print data as JSON\n"
		"  -q, --quiet         print only errors on stderr\n"
		"  -v, --verbose       print debug messages on stderr\n"
		"  -h, --help          show this help\n"
		"  -V, --version       show the version\n"
		"\n"
		"Settings (gpuvm.KEY=VALUE or rd.gpuvm.KEY=VALUE on the kernel command line, which\n"
		"wins, or KEY=VALUE in the host config): mode (container|vm-passthrough|vm-vgpu),\n"
		"ids, exclude, nvswitch (host|vm), host_driver, on_error (hold|release), config,\n"
		"write_timeout_ms. See gpuvm(8).\n"
		"\n"
		"Exit status:\n"
		"  0  every selected device is (or, for plan, would be) in its requested state,\n"
		"     or there was nothing to do\n"
		"  1  no selected device reached its state, or gpuvm could not read the host\n"
		"  2  usage error\n"
		"  3  a VM mode was asked for and the IOMMU is not active\n"
		"  4  partial: some selected devices reached their state, others did not\n",
		CONFIG_PATH);
}

/* Read the kernel command line as a string the caller frees. */
static char *read_cmdline(const struct options *o)
{
	char buf[4096];
	ssize_t n;

	if (o->cmdline)
		return strdup(o->cmdline);
	n = sysfs_read("proc/cmdline", buf, sizeof(buf));
	if (n < 0) {
		log_warn("cannot read /proc/cmdline: %s; no kernel parameters used", strerror((int)-n));
		return strdup("");
	}
	rstrip(buf);
	return strdup(buf);
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

static int plan_exit(const struct plan *p)
{
	if (p->iommu_unusable)
		return EXIT_NO_IOMMU;
	if (p->n_failed == 0)
		return EXIT_OK;
	return p->n_failed < p->n_selected ? EXIT_PARTIAL : EXIT_FAILED;
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

static int cmd_plan(const struct options *o, const char *command, bool status)
{
	struct inventory inv = { 0 };
	struct settings s;
	struct plan p = { 0 };
	struct report rep = { .command = command, .settings = &s, .inv = &inv };
	char *cmdline = read_cmdline(o), *state = NULL;
	int r, ret;

	if (!cmdline) {
		log_err("out of memory");
		return EXIT_FAILED;
	}
	load_settings(o, cmdline, &s);
	r = scan(&s, cmdline, &inv);
	if (r < 0) {
		ret = EXIT_FAILED;
		goto out;
	}
	if (status) {
		state = read_state();
		rep.state_path = "/" STATE_PATH;
		rep.last_state = state;
		ret = EXIT_OK;
	} else {
		r = plan_build(&p, &s, &inv);
		if (r < 0) {
			log_err("cannot build the plan: %s", strerror(-r));
			ret = EXIT_FAILED;
			goto out;
		}
		rep.plan = &p;
		ret = plan_exit(&p);
	}
	if (o->json)
		report_json(stdout, &rep);
	else
		report_text(stdout, &rep);
out:
	plan_free(&p);
	inventory_free(&inv);
	free(state);
	free(cmdline);
	return ret;
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

static int cmd_cmdline(const struct options *o)
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
		return EXIT_FAILED;
	}
	load_settings(o, running, &s);
	m = s.mode;
	if (o->mode && mode_parse(o->mode, &m) < 0) {
		log_err("--mode: unknown mode '%s' (expected container, vm-passthrough or vm-vgpu)",
			o->mode);
		free(running);
		return EXIT_USAGE;
	}
	if (!o->cpu || streq(o->cpu, "auto")) {
		cpu = sysfs_read("proc/cpuinfo", cpuinfo, sizeof(cpuinfo)) > 0 ?
			      cpu_vendor_from_cpuinfo(cpuinfo) : CPU_UNKNOWN;
	} else if (cpu_vendor_parse(o->cpu, &cpu) < 0) {
		log_err("--cpu: unknown vendor '%s' (expected intel, amd, arm or auto)", o->cpu);
		free(running);
		return EXIT_USAGE;
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
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	enum { OPT_ROOT = 256, OPT_CMDLINE, OPT_CONFIG, OPT_JSON, OPT_DRY_RUN, OPT_MODE, OPT_CPU };
	static const struct option longopts[] = {
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "cmdline", required_argument, NULL, OPT_CMDLINE },
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "cpu", required_argument, NULL, OPT_CPU },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	struct options o = { 0 };
	const char *cmd;
	int c, r, ret;

	while ((c = getopt_long(argc, argv, "qvhV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_ROOT:
			o.root = optarg;
			break;
		case OPT_CMDLINE:
			o.cmdline = optarg;
			break;
		case OPT_CONFIG:
			o.config = optarg;
			break;
		case OPT_JSON:
			o.json = true;
			break;
		case OPT_DRY_RUN:
			o.dry_run = true;
			break;
		case OPT_MODE:
			o.mode = optarg;
			break;
		case OPT_CPU:
			o.cpu = optarg;
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("gpuvm %s\n", GPUVM_VERSION);
			return EXIT_OK;
		default:
			fprintf(stderr, "Try 'gpuvm --help'.\n");
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	cmd = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "gpuvm: %s: unexpected argument '%s'\nTry 'gpuvm --help'.\n", cmd,
			argv[optind]);
		return EXIT_USAGE;
	}
	if ((o.dry_run && !streq(cmd, "apply")) ||
	    ((o.mode || o.cpu) && !streq(cmd, "cmdline"))) {
		fprintf(stderr, "gpuvm: %s: option not valid for this command\nTry 'gpuvm --help'.\n",
			cmd);
		return EXIT_USAGE;
	}
	if (!streq(cmd, "plan") && !streq(cmd, "status") && !streq(cmd, "cmdline") &&
	    !streq(cmd, "apply")) {
		fprintf(stderr, "gpuvm: unknown command '%s'\nTry 'gpuvm --help'.\n", cmd);
		return EXIT_USAGE;
	}

	log_setup(!o.root && streq(cmd, "apply") && !o.dry_run,
		  o.quiet ? LOG_ERR : o.verbose ? LOG_DEBUG : LOG_INFO);
	r = sysfs_init(o.root);
	if (r < 0) {
		log_err("--root %s: %s", o.root ? o.root : "/", strerror(-r));
		log_close();
		return o.root ? EXIT_USAGE : EXIT_FAILED;
	}

	if (streq(cmd, "cmdline"))
		ret = cmd_cmdline(&o);
	else if (streq(cmd, "status"))
		ret = cmd_plan(&o, "status", true);
	else if (streq(cmd, "apply") && !o.dry_run) {
		log_err("apply: not implemented yet; nothing changed");
		ret = EXIT_FAILED;
	} else
		ret = cmd_plan(&o, streq(cmd, "apply") ? "apply --dry-run" : "plan", false);

	sysfs_fini();
	log_close();
	return ret;
}
