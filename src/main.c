// SPDX-License-Identifier: MIT
/*
 * gpuvm: put each GPU in the mode its node label asks for, at boot, before any GPU
 * driver can take it. This file parses the command line and decides what an outcome
 * means: it is the only place that picks an exit status.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "cmd/cmd.h"
#include "rootio.h"
#include "util.h"
#include "vgpu.h"

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

/*
 * The commands, in the order --help lists them: those people run first, apply (the boot's,
 * and a live switch by hand) last, in a group of its own.
 */
static const struct command *const commands[] = {
	&cmd_status,   &cmd_check,   &cmd_plan, &cmd_config,
	&cmd_kubevirt, &cmd_cmdline, &cmd_dump, &cmd_apply,
};

static void usage(FILE *f)
{
	size_t i;

	fputs("Usage: gpuvm [OPTIONS] COMMAND\n"
	      "\n"
	      "Put each GPU in the mode the host asks for, before any GPU driver can take it.\n"
	      "\n"
	      "Commands:\n",
	      f);
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		fputs(commands[i]->help, f);
	fprintf(f,
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
		"ids, exclude, gpus, nvswitch (host|vm), host_driver, on_error (hold|release), config\n"
		"(LABEL=|UUID=|PARTUUID=|PARTLABEL=|/dev/NODE[:/PATH]), config_timeout,\n"
		"write_timeout_ms. See gpuvm(8).\n"
		"\n"
		"Exit status:\n"
		"  0  every selected device is (or, for plan, would be) in its requested state,\n"
		"     or there was nothing to do\n"
		"  1  no selected device reached its state, or gpuvm could not read the host;\n"
		"     check: not ready; config: cannot write, or get: the file does not set it\n"
		"  2  usage error\n"
		"  3  a VM mode was asked for and the IOMMU is not active\n"
		"  4  partial: some selected devices reached their state, others did not\n"
		"  5  apply --defer/--resume: GPUs held while config='s disk is awaited\n"
		"  6  config set: written, but the next boot will not apply it\n"
		"  7  apply --live: a device in use was left as it was (the rest was applied)\n",
		CONFIG_PATH);
}

/*
 * Every option: its long name, whether it takes a value, the bit a command takes it by (0:
 * every command's), and where its value goes. --wait's and --vgpu-release's values are
 * checked as they are parsed, whatever the command and the mode.
 */
enum opt_kind {
	OPT_BOOL,
	OPT_STR,
	OPT_WAIT,
	OPT_RELEASE
};
static const struct opt_def {
	const char *name;
	enum opt_kind kind;
	unsigned bit;
	size_t field; /* offsetof(struct options, ...) */
} opt_defs[] = {
	{ "root", OPT_STR, 0, offsetof(struct options, root) },
	{ "cmdline", OPT_STR, 0, offsetof(struct options, cmdline) },
	{ "config", OPT_STR, 0, offsetof(struct options, config) },
	{ "file", OPT_STR, 0, offsetof(struct options, config) },
	{ "json", OPT_BOOL, CMD_OPT_JSON, offsetof(struct options, json) },
	{ "dry-run", OPT_BOOL, CMD_OPT_DRY_RUN, offsetof(struct options, dry_run) },
	{ "defer", OPT_BOOL, CMD_OPT_BOOT, offsetof(struct options, defer) },
	{ "resume", OPT_BOOL, CMD_OPT_BOOT, offsetof(struct options, resume) },
	{ "sysroot", OPT_STR, CMD_OPT_BOOT, offsetof(struct options, sysroot) },
	{ "live", OPT_BOOL, CMD_OPT_LIVE, offsetof(struct options, live) },
	{ "wait", OPT_WAIT, CMD_OPT_LIVE, offsetof(struct options, wait_s) },
	{ "mode", OPT_STR, CMD_OPT_MODE, offsetof(struct options, mode) },
	{ "cpu", OPT_STR, CMD_OPT_CPU, offsetof(struct options, cpu) },
	{ "nfd", OPT_BOOL, CMD_OPT_NFD, offsetof(struct options, nfd) },
	{ "external-provider", OPT_BOOL, CMD_OPT_EXTERNAL, offsetof(struct options, external) },
	{ "kubevirt-plugin", OPT_BOOL, CMD_OPT_PLUGIN, offsetof(struct options, kubevirt_plugin) },
	{ "pci-ids", OPT_STR, CMD_OPT_PCI_IDS, offsetof(struct options, pci_ids) },
	{ "vgpu-release", OPT_RELEASE, CMD_OPT_VGPU_RELEASE, offsetof(struct options, vgpu_release) },
	{ "kubevirt-version", OPT_STR, CMD_OPT_KV_VERSION, offsetof(struct options, kubevirt_version) },
	{ "out", OPT_STR, CMD_OPT_OUT, offsetof(struct options, out) },
	{ "in-use", OPT_BOOL, CMD_OPT_IN_USE, offsetof(struct options, in_use) },
};

/* --wait: seconds, 0 to a day. */
#define WAIT_MAX_S 86400
#define WAIT_WORDS_(max) "a number of seconds from 0 to " #max
#define WAIT_WORDS_X(max) WAIT_WORDS_(max) /* max expanded first */
#define WAIT_WORDS WAIT_WORDS_X(WAIT_MAX_S)
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
	if (out->error || out->not_ready || out->unset)
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

/* Usage error: "gpuvm: [CMD: ]MSG", then the hint. */
__attribute__((format(printf, 2, 3))) static int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "gpuvm: %s%s", cmd ? cmd : "", cmd ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'gpuvm --help'.\n");
	return EXIT_USAGE;
}

/*
 * An option's value into o: NULL, or what it takes when it is not that (--wait's not a
 * number of seconds, --vgpu-release's not a release).
 */
static const char *set_option(struct options *o, const struct opt_def *d, const char *arg)
{
	char *field = (char *)o + d->field;
	int release;

	switch (d->kind) {
	case OPT_BOOL:
		*(bool *)(void *)field = true;
		break;
	case OPT_RELEASE:
		if (vgpu_release_parse(arg, &release) < 0)
			return VGPU_RELEASE_WORDS;
		/* fall through */
	case OPT_STR:
		*(const char **)(void *)field = arg;
		break;
	case OPT_WAIT:
		o->wait_given = true;
		return parse_wait(arg, (unsigned *)(void *)field) < 0 ? WAIT_WORDS : NULL;
	}
	return NULL;
}

/*
 * An option getopt_long refused (c: '?', or ':' for a value missing; opt: its optopt, the
 * option's val, the character of an unknown short one, 0 for an unknown long one, word):
 * a value missing or given to a flag, or an unknown option named with the nearest of those
 * cmd takes (NULL: of all), or the first that begins with it (an ambiguous abbreviation).
 * The usage error's exit status.
 */
static int option_error(int c, int opt, const char *word, const struct option *lo,
			const struct command *cmd)
{
	struct nearest nn = { NULL, 0 };
	char name[40], shown[40];
	const char *w;
	size_t i;

	for (i = 0; opt && lo[i].name; i++)
		if (lo[i].val == opt)
			return usage_error(cmd ? cmd->name : NULL, "--%s %s", lo[i].name,
					   c == ':' ? "needs a value" : "takes no value");
	if (opt)
		snprintf(name, sizeof(name), "-%c", opt);
	else
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(word, "="), word);
	term_safe(name, shown, sizeof(shown)); /* argv is text for a terminal too */
	w = name + strspn(name, "-");
	for (i = 0; lo[i].name; i++) {
		if (cmd && i < ARRAY_SIZE(opt_defs) && opt_defs[i].bit && !(cmd->opts & opt_defs[i].bit))
			continue;
		if (*w && startswith(lo[i].name, w)) {
			nn.best = lo[i].name;
			break;
		}
		nearest_try(&nn, w, lo[i].name);
	}
	return usage_error(cmd ? cmd->name : NULL, "unknown option '%s' (nearest: --%s)", shown,
			   nn.best);
}

/* The command named, or NULL. */
static const struct command *lookup(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (streq(name, commands[i]->name))
			return commands[i];
	return NULL;
}

/*
 * The words after the command: as many as it takes, no option it does not take (given: one
 * a row of opt_defs), and its own rules. 0, or the usage error's exit status.
 */
static int check_command(const struct command *c, const struct options *o, const bool *given,
			 char *const *words)
{
	char shown[64];
	const char *why;
	size_t i;

	if (o->nargs > c->max_args) {
		term_safe(words[c->max_args], shown, sizeof(shown));
		return usage_error(c->name, "unexpected argument '%s'", shown);
	}
	if (o->nargs < c->min_args)
		return usage_error(c->name, "missing argument: %s", c->args);
	for (i = 0; i < ARRAY_SIZE(opt_defs); i++)
		if (given[i] && opt_defs[i].bit && !(c->opts & opt_defs[i].bit))
			break;
	if (i < ARRAY_SIZE(opt_defs)) {
		return usage_error(c->name, "--%s is not an option of this command", opt_defs[i].name);
	}
	why = c->check ? c->check(o) : NULL;
	return why ? usage_error(c->name, "%s", why) : 0;
}

int main(int argc, char **argv)
{
	struct option longopts[ARRAY_SIZE(opt_defs) + 5];
	struct options o = { 0 };
	struct outcome out = { 0 };
	const struct command *cmd;
	enum log_level level;
	bool given[ARRAY_SIZE(opt_defs)] = { false };
	int c, r, ret, idx, info = 0, bad = 0, bad_opt = 0;
	const char *bad_word = NULL, *why;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(opt_defs); i++)
		longopts[i] = (struct option){ opt_defs[i].name,
					       opt_defs[i].kind == OPT_BOOL ? no_argument :
									      required_argument,
					       NULL, 256 + (int)i };
	longopts[i++] = (struct option){ "quiet", no_argument, NULL, 'q' };
	longopts[i++] = (struct option){ "verbose", no_argument, NULL, 'v' };
	longopts[i++] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[i++] = (struct option){ "version", no_argument, NULL, 'V' };
	longopts[i] = (struct option){ 0 };

	opterr = 0; /* an option refused is said below, with the nearest one */
	while ((c = getopt_long(argc, argv, ":qvhV", longopts, NULL)) != -1) {
		if (c >= 256 && (size_t)(c - 256) < ARRAY_SIZE(opt_defs)) {
			idx = c - 256;
			why = set_option(&o, &opt_defs[idx], optarg);
			if (why) {
				char shown[64];

				term_safe(optarg, shown, sizeof(shown));
				return usage_error(NULL, "--%s: '%s' is not %s", opt_defs[idx].name,
						   shown, why);
			}
			given[idx] = true;
			continue;
		}
		switch (c) {
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
			/* The first, said once the command (its options) is known. */
			if (!bad) {
				bad = c;
				bad_opt = optopt;
				bad_word = argv[optind - 1];
			}
			break;
		}
	}
	if (bad)
		return option_error(bad, bad_opt, bad_word, longopts,
				    optind < argc ? lookup(argv[optind]) : NULL);
	if (info)
		return info_answer(info, argc - optind, argv + optind);
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	cmd = lookup(argv[optind]);
	if (!cmd) {
		struct nearest nn = { NULL, 0 };
		char shown[64];

		for (i = 0; i < ARRAY_SIZE(commands); i++)
			nearest_try(&nn, argv[optind], commands[i]->name);
		term_safe(argv[optind], shown, sizeof(shown)); /* argv is text for a terminal too */
		return usage_error(NULL, "unknown command '%s' (nearest: %s)", shown, nn.best);
	}
	optind++;
	o.args = (const char *const *)argv + optind;
	o.nargs = (size_t)(argc - optind);
	ret = check_command(cmd, &o, given, argv + optind);
	if (ret)
		return ret;

	level = o.verbose ? LOG_DEBUG : LOG_INFO;
	log_setup(!o.root && cmd->kmsg && !o.dry_run, o.quiet ? LOG_ERR : level);
	r = root_init(o.root);
	if (r < 0) {
		log_err("--root %s: %s", o.root ? o.root : "/", strerror(-r));
		log_close();
		return o.root ? EXIT_USAGE : EXIT_FAILED;
	}

	cmd->run(&o, &out);
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
