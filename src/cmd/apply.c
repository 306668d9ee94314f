// SPDX-License-Identifier: MIT
/*
 * gpuvm apply: the boot hook's command, its options and its rules; the flow is bootrun.c's.
 * This file is on the boot's path: it includes no header of src/tools/ (scripts/layers.sh).
 */
#include <stddef.h>

#include "bootrun.h"
#include "cmd.h"

/*
 * apply --dry-run is plan: what apply would do, changing nothing. The boot's calls are
 * bootrun.c's alone; a running host's apply adds its hooks (cmd/applyhost.c).
 */
static void apply_by_call(const struct options *o, struct outcome *out)
{
	if (o->dry_run)
		plan_run(o, out);
	else if (o->defer || o->resume)
		apply_run(o, NULL, out);
	else
		apply_host_run(o, out);
}

/* The rules between apply's options: which calls exclude which. */
static const char *check_options(const struct options *o)
{
	if ((o->defer && o->resume) || ((o->defer || o->resume) && o->dry_run))
		return "--defer, --resume and --dry-run exclude each other";
	if (o->live && (o->defer || o->resume || o->dry_run))
		return "--live is for a running host: not with --defer, --resume or --dry-run (gpuvm plan --in-use looks without switching)";
	if (o->sysroot && (!o->resume || !*o->sysroot))
		return "--sysroot DIR goes with --resume (the boot's last call)";
	if (o->wait_given && !o->live)
		return "--wait goes with --live";
	return NULL;
}

const struct command cmd_apply = {
	.name = "apply",
	.opts = CMD_OPT_DRY_RUN | CMD_OPT_BOOT | CMD_OPT_JSON | CMD_OPT_LIVE,
	.kmsg = true,
	/* Last in --help, in a group of its own: by hand first, then the boot's own calls. */
	.help = "\n"
		"Apply the mode (the boot's hooks run apply --defer, then apply --resume):\n"
		"  apply [--dry-run]   bind the GPUs as the mode asks (the boot hook's command);\n"
		"                      --dry-run prints the plan and changes nothing\n"
		"  apply --live [--wait SECONDS]\n"
		"                      on a running host: the same, but a device in use (an open\n"
		"                      node, a VM, nvidia's clients) leaves its IOMMU group as it\n"
		"                      is, named with pid and command, and exits 7; --wait waits\n"
		"                      up to SECONDS for it to be free first\n"
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
		"                      pending wait, do nothing\n",
	.check = check_options,
	.run = apply_by_call,
};
