// SPDX-License-Identifier: MIT
/*
 * gpuvm dump: what gpuvm reads to decide, laid out as a --root tree, in one tar
 * (dumpcollect.c collects it). Read-only: writes under the root are refused from the start
 * (root_deny_writes); the archive is written to --out (a new file) or stdout once it is
 * whole, within DUMP_SECONDS.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "dumpcollect.h"
#include "log.h"
#include "rootio.h"
#include "tarw.h"
#include "util.h"

static const char *out_path; /* for the alarm: an archive begun is removed */

static void on_alarm(int sig)
{
	static const char msg[] = "gpuvm: dump: a read did not return in time; nothing written\n";

	(void)sig;
	if (out_path)
		unlink(out_path);
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

/*
 * Refuse an --out under /sys, /proc or /etc, or one that is there already (O_EXCL: no
 * attribute, device node or file is ever written through it).
 */
static int open_out(const char *path)
{
	static const char *const never[] = { "/sys", "/proc", "/etc" };
	char dir[PATH_MAX], real[PATH_MAX];
	char *slash;
	size_t i;
	int fd;

	if (strscpy(dir, path, sizeof(dir)) < 0) {
		log_err("dump: --out %s: %s", path, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	slash = strrchr(dir, '/');
	if (!slash)
		strscpy(dir, ".", sizeof(dir));
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (!realpath(dir, real)) {
		log_err("dump: --out %s: %s: %s", path, dir, strerror(errno));
		return -errno;
	}
	for (i = 0; i < ARRAY_SIZE(never); i++) {
		size_t n = strlen(never[i]);

		if (!strncmp(real, never[i], n) && (real[n] == '\0' || real[n] == '/')) {
			log_err("dump: --out %s: under %s, which a dump never writes", path, never[i]);
			return -EPERM;
		}
	}
	/* door: --out's path, the caller's, never under the root's /sys, /proc, /run */
	fd = openat(AT_FDCWD, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
		    0644);
	if (fd < 0) {
		log_err("dump: --out %s: %s", path,
			errno == EEXIST ? "it exists: a dump never replaces a file" : strerror(errno));
		return -errno;
	}
	return fd;
}

static const char *why_stopped(int err)
{
	switch (err) {
	case -ENOSPC:
		return "the archive would pass 64 MiB";
	case -EFBIG:
		return "a file larger than 16 MiB";
	case -E2BIG:
		return "the archive would pass 262,144 members";
	case -ETIME:
		return "it took longer than 60 s";
	default:
		return strerror(-err);
	}
}
static void write_dump(const struct options *o, struct outcome *out)
{
	struct dump_from from = { .root = o->root, .cmdline = o->cmdline, .config = o->config };
	struct tarw t;
	char what[PATH_MAX];
	int fd = STDOUT_FILENO, r;

	root_deny_writes();
	if (!o->out && isatty(STDOUT_FILENO)) {
		log_err("dump: the archive is binary: give --out FILE, or send stdout elsewhere");
		out->usage = true;
		return;
	}
	if (o->out) {
		fd = open_out(o->out);
		if (fd < 0) {
			out->error = true;
			return;
		}
		out_path = o->out;
	}
	signal(SIGALRM, on_alarm);
	alarm(DUMP_SECONDS + 10);
	r = dump_collect(&from, &t, what, sizeof(what));
	if (r < 0 && what[0])
		log_err("dump: stopped at /%s: %s; nothing written", what, why_stopped(r));
	else if (r == -ENOMEM)
		log_err("dump: out of memory");
	if (r == 0) {
		r = write_all(fd, t.buf, t.len);
		if (r < 0)
			log_err("dump: cannot write %s: %s", o->out ? o->out : "stdout", strerror(-r));
		tarw_free(&t);
	}
	alarm(0);
	if (o->out) {
		if (close(fd) < 0 && r == 0)
			r = -errno;
		if (r < 0)
			unlink(o->out);
	}
	out->error = r < 0;
}

const struct command cmd_dump = {
	.name = "dump",
	.opts = CMD_OPT_OUT,
	.help = "  dump [--out FILE]   what gpuvm reads to decide, as a --root tree in one tar (a\n"
		"                      new FILE, or stdout), for a report: gpuvm --root DIR plan\n"
		"                      on it unpacked decides as here; read-only, at most 64 MiB\n"
		"                      and 60 s\n",
	.run = write_dump,
};
