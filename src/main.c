// SPDX-License-Identifier: MIT
/*
 * gpuvm: put each GPU in the mode its node label asks for, at boot, before any GPU
 * driver can take it. This file parses the command line and decides what an outcome
 * means: it is the only place that picks an exit status.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "cmd/cmd.h"
#include "rootio.h"
#include "util.h"

enum {
	EXIT_OK = 0,	      /* every device in its requested state, or nothing to do */
	EXIT_FAILED = 1,      /* no selected device reached its state; or gpuvm could not run */
	EXIT_USAGE = 2,	      /* bad command line */
	EXIT_NO_IOMMU = 3,    /* a VM mode, GPUs selected, and no active IOMMU */
	EXIT_PARTIAL = 4,     /* some selected devices reached their state, others did not */
	EXIT_PENDING = 5,     /* apply --defer/--resume: GPUs held, config='s disk awaited */
	EXIT_NOT_APPLIED = 6, /* config set: written, but the next boot will not apply it */
	EXIT_IN_USE = 7,      /* apply --live: a device in use was left as it was */
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
		"  apply --defer       the boot's first call, before udev: the kernel command line\n"
		"                      alone (the initramfs carries no host config); its gpuvm.mode=\n"
		"                      acts at once, else the GPUs are held until the root's config\n"
		"                      is read; when config= names a disk that is not there yet:\n"
		"                      hold the GPUs, note the wait in /run/gpuvm/pending, exit 5\n"
		"  apply --resume [--sysroot DIR]\n"
		"                      the boot's next calls: with config='s disk pending, apply once\n"
		"                      the disk is there or config_timeout is over, else exit 5 and\n"
		"                      change nothing; with --sysroot (the real root, mounted: the\n"
		"                      last call), decide from DIR/etc/gpuvm/gpuvm.conf; without a\n"
		"                      pending wait, do nothing\n"
		"  apply --live [--wait SECONDS]\n"
		"                      on a running host: the same, but a device in use (an open\n"
		"                      node, a VM, nvidia's clients) leaves its IOMMU group as it\n"
		"                      is, named with pid and command, and exits 7; --wait waits\n"
		"                      up to SECONDS for it to be free first\n"
		"  plan [--mode M] [--in-use]\n"
		"                      what apply would do, changing nothing; --mode M: for mode\n"
		"                      M; --in-use: and who holds what it would change now, as\n"
		"                      apply --live would find it (read-only: nothing is written)\n"
		"  dump [--out FILE]   what gpuvm reads to decide, as a --root tree in one tar (a\n"
		"                      new FILE, or stdout), for a report: gpuvm --root DIR plan\n"
		"                      on it unpacked decides as here; read-only, at most 64 MiB\n"
		"                      and 60 s\n"
		"  status              devices, IOMMU groups, IOMMU state and the last apply\n"
		"  status --nfd        a Node Feature Discovery feature file\n"
		"  check [--mode M] [--vgpu-release N]\n"
		"                      is this host ready for the mode; each problem with its fix;\n"
		"                      vm-vgpu: each GPU's vGPU method by its architecture, the\n"
		"                      vGPU release (N, else the loaded driver's) and the kernel\n"
		"  cmdline [--mode M] [--cpu intel|amd|auto]\n"
		"                      the kernel parameters gpuvm needs on this CPU: the IOMMU's,\n"
		"                      the mode left to the host config (the label); --mode M\n"
		"                      pins M with gpuvm.mode=M; what the running command line\n"
		"                      lacks or contradicts is listed on stderr\n"
		"  config get KEY      the host config's value of KEY\n"
		"  config set KEY=VALUE\n"
		"                      validate and write it atomically; say when it takes effect\n"
		"  kubevirt [--kubevirt-plugin] [--kubevirt-version V] [--pci-ids FILE]\n"
		"                      KubeVirt's permittedHostDevices for the passthrough GPUs,\n"
		"                      named from FILE (default: /usr/share/gpuvm/pci.ids, then\n"
		"                      the host's) as NVIDIA's sandbox device plugin names them,\n"
		"                      for that plugin (externalResourceProvider: true), or with\n"
		"                      --kubevirt-plugin for KubeVirt's own (vfio-pci only; from\n"
		"                      --kubevirt-version 1.9 on also vm-vgpu's VFs on nvidia;\n"
		"                      default 1.8)\n"
		"\n"
		"Options:\n"
		"  --root DIR          read and write /sys, /proc, /etc and /run under DIR and load\n"
		"                      no module (tests, fixtures); /dev/kmsg is not written\n"
		"  --cmdline STRING    use STRING as the kernel command line\n"
		"  --config FILE       the host config (default %s); --file is the same\n"
		"  --json              print data as JSON (apply, plan, status, check, cmdline,\n"
		"                      kubevirt)\n"
		"  -q, --quiet         print only errors on stderr\n"
		"  -v, --verbose       print debug messages on stderr\n"
		"  -h, --help          show this help\n"
		"  -V, --version       show the version\n"
		"\n"
		"Settings (gpuvm.KEY=VALUE or rd.gpuvm.KEY=VALUE on the kernel command line, which\n"
		"wins, or KEY=VALUE in the host config): mode (container|vm-passthrough|vm-vgpu),\n"
		"ids, exclude, nvswitch (host|vm), host_driver, on_error (hold|release), config\n"
		"(LABEL=|UUID=|PARTUUID=|PARTLABEL=|/dev/NODE[:/PATH]), config_timeout,\n"
		"write_timeout_ms. See gpuvm(8).\n"
		"\n"
		"Exit status:\n"
		"  0  every selected device is (or, for plan, would be) in its requested state,\n"
		"     or there was nothing to do\n"
		"  1  no selected device reached its state, or gpuvm could not read the host;\n"
		"     check: not ready; config: cannot write, or get found no value\n"
		"  2  usage error\n"
		"  3  a VM mode was asked for and the IOMMU is not active\n"
		"  4  partial: some selected devices reached their state, others did not\n"
		"  5  apply --defer/--resume: GPUs held while config='s disk is awaited\n"
		"  6  config set: written, but the next boot will not apply it\n"
		"  7  apply --live: a device in use was left as it was (the rest was applied)\n",
		CONFIG_PATH);
}

enum {
	ALLOW_DRY_RUN = 1,
	ALLOW_MODE = 2,
	ALLOW_CPU = 4,
	ALLOW_NFD = 8,
	ALLOW_EXTERNAL = 16,
	ALLOW_DEFER = 32,
	ALLOW_PCI_IDS = 64,
	ALLOW_JSON = 128,
	ALLOW_PLUGIN = 256,
	ALLOW_LIVE = 512,
	ALLOW_VGPU_RELEASE = 1024,
	ALLOW_KV_VERSION = 2048,
	ALLOW_OUT = 4096,
	ALLOW_IN_USE = 8192,
};

static const struct command_def {
	const char *name;
	const char *args;
	size_t min_args, max_args;
	cmd_fn *fn;
	unsigned opts;
} commands[] = {
	{ "apply", "", 0, 0, cmd_apply, ALLOW_DRY_RUN | ALLOW_DEFER | ALLOW_JSON | ALLOW_LIVE },
	{ "plan", "", 0, 0, cmd_plan, ALLOW_JSON | ALLOW_MODE | ALLOW_IN_USE },
	{ "status", "", 0, 0, cmd_status, ALLOW_NFD | ALLOW_JSON },
	{ "cmdline", "", 0, 0, cmd_cmdline, ALLOW_MODE | ALLOW_CPU | ALLOW_JSON },
	{ "check", "", 0, 0, cmd_check, ALLOW_MODE | ALLOW_JSON | ALLOW_VGPU_RELEASE },
	{ "config", "get KEY | set KEY=VALUE", 2, 2, cmd_config, 0 },
	{ "kubevirt", "", 0, 0, cmd_kubevirt,
	  ALLOW_EXTERNAL | ALLOW_PLUGIN | ALLOW_PCI_IDS | ALLOW_JSON | ALLOW_VGPU_RELEASE |
		  ALLOW_KV_VERSION },
	{ "dump", "", 0, 0, cmd_dump, ALLOW_OUT },
};

/* The first option given that the command does not take, or NULL. */
static const char *misplaced(const struct options *o, unsigned allowed)
{
	const struct {
		bool given;
		unsigned allow;
		const char *name;
	} opt[] = {
		{ o->json, ALLOW_JSON, "--json" },
		{ o->dry_run, ALLOW_DRY_RUN, "--dry-run" },
		{ o->defer, ALLOW_DEFER, "--defer" },
		{ o->resume, ALLOW_DEFER, "--resume" },
		{ o->sysroot != NULL, ALLOW_DEFER, "--sysroot" },
		{ o->live, ALLOW_LIVE, "--live" },
		{ o->wait_given, ALLOW_LIVE, "--wait" },
		{ o->mode != NULL, ALLOW_MODE, "--mode" },
		{ o->cpu != NULL, ALLOW_CPU, "--cpu" },
		{ o->nfd, ALLOW_NFD, "--nfd" },
		{ o->external, ALLOW_EXTERNAL, "--external-provider" },
		{ o->kubevirt_plugin, ALLOW_PLUGIN, "--kubevirt-plugin" },
		{ o->pci_ids != NULL, ALLOW_PCI_IDS, "--pci-ids" },
		{ o->vgpu_release != NULL, ALLOW_VGPU_RELEASE, "--vgpu-release" },
		{ o->kubevirt_version != NULL, ALLOW_KV_VERSION, "--kubevirt-version" },
		{ o->out != NULL, ALLOW_OUT, "--out" },
		{ o->in_use, ALLOW_IN_USE, "--in-use" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(opt); i++)
		if (opt[i].given && !(allowed & opt[i].allow))
			return opt[i].name;
	return NULL;
}

/* --wait: seconds, 0 to a day. */
#define WAIT_MAX_S 86400U
static int parse_wait(const char *s, unsigned *out)
{
	unsigned long v;
	char *end;

	if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 6)
		return -EINVAL;
	v = strtoul(s, &end, 10);
	if (v > WAIT_MAX_S)
		return -ERANGE;
	*out = (unsigned)v;
	return 0;
}

/*
 * -h or -V (which: the first given), once every option is parsed: they take no operand, so
 * a stray word (a command, "extra") is a usage error, as an unknown option beside them is.
 */
static int info_answer(int which, int nargs, char *const *args)
{
	const char *name = which == 'h' ? "--help" : "--version";
	char shown[64];

	if (nargs > 0) {
		term_safe(args[0], shown, sizeof(shown));
		fprintf(stderr, "gpuvm: %s: unexpected argument '%s'\nTry 'gpuvm --help'.\n", name,
			shown);
		return EXIT_USAGE;
	}
	if (which == 'h')
		usage(stdout);
	else
		printf("gpuvm %s\n", GPUVM_VERSION);
	return EXIT_OK;
}

static int exit_status(const struct outcome *out)
{
	if (out->usage)
		return EXIT_USAGE;
	if (out->error || out->not_ready)
		return EXIT_FAILED;
	if (out->pending)
		return EXIT_PENDING;
	if (out->iommu_unusable)
		return EXIT_NO_IOMMU;
	if (out->not_applied)
		return EXIT_NOT_APPLIED;
	if (out->failed == 0)
		return out->in_use ? EXIT_IN_USE : EXIT_OK;
	/* a failure says more than a refusal: 4 or 1 even when another group was refused */
	return out->ok ? EXIT_PARTIAL : EXIT_FAILED;
}

int main(int argc, char **argv)
{
	enum {
		OPT_ROOT = 256,
		OPT_CMDLINE,
		OPT_CONFIG,
		OPT_JSON,
		OPT_DRY_RUN,
		OPT_MODE,
		OPT_CPU,
		OPT_NFD,
		OPT_EXTERNAL,
		OPT_PLUGIN,
		OPT_DEFER,
		OPT_RESUME,
		OPT_PCI_IDS,
		OPT_LIVE,
		OPT_WAIT,
		OPT_SYSROOT,
		OPT_VGPU_RELEASE,
		OPT_KV_VERSION,
		OPT_OUT,
		OPT_IN_USE
	};
	static const struct option longopts[] = {
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "cmdline", required_argument, NULL, OPT_CMDLINE },
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "file", required_argument, NULL, OPT_CONFIG },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "cpu", required_argument, NULL, OPT_CPU },
		{ "nfd", no_argument, NULL, OPT_NFD },
		{ "external-provider", no_argument, NULL, OPT_EXTERNAL },
		{ "kubevirt-plugin", no_argument, NULL, OPT_PLUGIN },
		{ "pci-ids", required_argument, NULL, OPT_PCI_IDS },
		{ "vgpu-release", required_argument, NULL, OPT_VGPU_RELEASE },
		{ "kubevirt-version", required_argument, NULL, OPT_KV_VERSION },
		{ "defer", no_argument, NULL, OPT_DEFER },
		{ "resume", no_argument, NULL, OPT_RESUME },
		{ "sysroot", required_argument, NULL, OPT_SYSROOT },
		{ "live", no_argument, NULL, OPT_LIVE },
		{ "wait", required_argument, NULL, OPT_WAIT },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "in-use", no_argument, NULL, OPT_IN_USE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	struct options o = { 0 };
	const struct command_def *def;
	struct outcome out = { 0 };
	const char *cmd, *bad;
	enum log_level level;
	int c, r, ret, info = 0;

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
		case OPT_NFD:
			o.nfd = true;
			break;
		case OPT_EXTERNAL:
			o.external = true;
			break;
		case OPT_PLUGIN:
			o.kubevirt_plugin = true;
			break;
		case OPT_PCI_IDS:
			o.pci_ids = optarg;
			break;
		case OPT_VGPU_RELEASE:
			o.vgpu_release = optarg;
			break;
		case OPT_KV_VERSION:
			o.kubevirt_version = optarg;
			break;
		case OPT_DEFER:
			o.defer = true;
			break;
		case OPT_RESUME:
			o.resume = true;
			break;
		case OPT_SYSROOT:
			o.sysroot = optarg;
			break;
		case OPT_LIVE:
			o.live = true;
			break;
		case OPT_WAIT:
			if (parse_wait(optarg, &o.wait_s) < 0) {
				char shown[64];

				term_safe(optarg, shown, sizeof(shown));
				fprintf(stderr,
					"gpuvm: --wait: '%s' is not a number of seconds from 0 to %u\nTry 'gpuvm --help'.\n",
					shown, WAIT_MAX_S);
				return EXIT_USAGE;
			}
			o.wait_given = true;
			break;
		case OPT_OUT:
			o.out = optarg;
			break;
		case OPT_IN_USE:
			o.in_use = true;
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'h':
		case 'V':
			if (!info)
				info = c; /* the first of them answers, once every option is parsed */
			break;
		default:
			fprintf(stderr, "Try 'gpuvm --help'.\n");
			return EXIT_USAGE;
		}
	}
	if (info)
		return info_answer(info, argc - optind, argv + optind);
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	cmd = argv[optind++];
	for (def = commands; def < commands + ARRAY_SIZE(commands); def++)
		if (streq(cmd, def->name))
			break;
	if (def == commands + ARRAY_SIZE(commands)) {
		char shown[64];

		term_safe(cmd, shown, sizeof(shown)); /* argv is text for a terminal too */
		fprintf(stderr, "gpuvm: unknown command '%s'\nTry 'gpuvm --help'.\n", shown);
		return EXIT_USAGE;
	}
	o.args = (const char *const *)argv + optind;
	o.nargs = (size_t)(argc - optind);
	if (o.nargs < def->min_args || o.nargs > def->max_args) {
		if (o.nargs > def->max_args) {
			char shown[64];

			term_safe(argv[optind + (int)def->max_args], shown, sizeof(shown));
			fprintf(stderr, "gpuvm: %s: unexpected argument '%s'\n", cmd, shown);
		} else {
			fprintf(stderr, "gpuvm: %s: missing argument: %s\n", cmd, def->args);
		}
		fprintf(stderr, "Try 'gpuvm --help'.\n");
		return EXIT_USAGE;
	}
	bad = misplaced(&o, def->opts);
	if (bad) {
		fprintf(stderr, "gpuvm: %s: %s is not an option of this command\nTry 'gpuvm --help'.\n",
			cmd, bad);
		return EXIT_USAGE;
	}
	if (o.nfd && o.json) {
		fprintf(stderr,
			"gpuvm: status: --nfd writes NFD's own format, not JSON: give one of --nfd and --json\nTry 'gpuvm --help'.\n");
		return EXIT_USAGE;
	}
	if (o.external && o.kubevirt_plugin) {
		fprintf(stderr,
			"gpuvm: kubevirt: --external-provider and --kubevirt-plugin exclude each other\nTry 'gpuvm --help'.\n");
		return EXIT_USAGE;
	}
	if ((o.defer && o.resume) || ((o.defer || o.resume) && o.dry_run)) {
		fprintf(stderr,
			"gpuvm: apply: --defer, --resume and --dry-run exclude each other\n"
			"Try 'gpuvm --help'.\n");
		return EXIT_USAGE;
	}
	if (o.live && (o.defer || o.resume || o.dry_run)) {
		fprintf(stderr,
			"gpuvm: apply: --live is for a running host: not with --defer, --resume or --dry-run (gpuvm plan --in-use looks without switching)\n"
			"Try 'gpuvm --help'.\n");
		return EXIT_USAGE;
	}
	if (o.sysroot && (!o.resume || !*o.sysroot)) {
		fprintf(stderr,
			"gpuvm: apply: --sysroot DIR goes with --resume (the boot's last call)\n"
			"Try 'gpuvm --help'.\n");
		return EXIT_USAGE;
	}
	if (o.wait_given && !o.live) {
		fprintf(stderr, "gpuvm: apply: --wait goes with --live\nTry 'gpuvm --help'.\n");
		return EXIT_USAGE;
	}

	level = o.verbose ? LOG_DEBUG : LOG_INFO;
	log_setup(!o.root && streq(cmd, "apply") && !o.dry_run, o.quiet ? LOG_ERR : level);
	r = root_init(o.root);
	if (r < 0) {
		log_err("--root %s: %s", o.root ? o.root : "/", strerror(-r));
		log_close();
		return o.root ? EXIT_USAGE : EXIT_FAILED;
	}

	/* apply --dry-run is plan: what apply would do, changing nothing. */
	(o.dry_run ? cmd_plan : def->fn)(&o, &out);
	ret = exit_status(&out);
	r = stdout_close();
	if (r < 0) {
		log_err("stdout: write error: %s", strerror(-r));
		ret = EXIT_FAILED;
	}

	root_fini();
	log_close();
	return ret;
}
