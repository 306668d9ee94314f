// SPDX-License-Identifier: MIT
/*
 * Logging: /dev/kmsg with a "gpuvm: " prefix and the kernel's levels, and stderr.
 * Errors and warnings are remembered for the JSON report. A missing /dev/kmsg (a
 * container, a fixture) is not an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

struct kept {
	char *msg[LOG_KEEP_MAX];
	size_t n, dropped;
};

#define KMSG_BURST 10

static int kmsg_fd = -1;
static unsigned kmsg_lines;
static enum log_level stderr_level = LOG_INFO;
static struct kept kept_err, kept_warn;
static unsigned emitted, not_shown; /* messages shown this run (LOG_EMIT_MAX), and not */
static enum log_level not_shown_level = LOG_DEBUG; /* the most severe of those not shown */

/*
 * Under systemd (a systemd initramfs' dracut-pre-udev.service), stderr is a journal stream,
 * which says so in $JOURNAL_STREAM ("DEV:INODE"); journald reads kmsg too.
 */
static bool stderr_is_journal(const struct stat *st)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	char *end;

	if (!js)
		return false;
	dev = strtoull(js, &end, 10);
	if (end == js || *end != ':')
		return false;
	js = end + 1;
	ino = strtoull(js, &end, 10);
	return end != js && *end == '\0' && dev == (unsigned long long)st->st_dev &&
		ino == (unsigned long long)st->st_ino;
}

void log_setup(bool use_kmsg, enum log_level stderr_max)
{
	struct stat st;

	stderr_level = stderr_max;
	if (use_kmsg && kmsg_fd < 0) /* door: the running kernel's log, not the root's */
		kmsg_fd = openat(AT_FDCWD, "/dev/kmsg", O_WRONLY | O_CLOEXEC | O_NOCTTY);
	/*
	 * In the initramfs stderr is /dev/console, where the kernel prints kmsg lines too
	 * (as its loglevel allows): say each thing once there.
	 */
	if (kmsg_fd >= 0 && fstat(STDERR_FILENO, &st) == 0 &&
	    ((S_ISCHR(st.st_mode) && st.st_rdev == makedev(5, 1)) || stderr_is_journal(&st)))
		stderr_level = 0;
}

static void emit(enum log_level level, const char *msg);

void log_close(void)
{
	size_t i;

	if (not_shown) {
		char msg[96];

		snprintf(msg, sizeof(msg), "%u messages not shown (at most %d a run)", not_shown,
			 LOG_EMIT_MAX);
		emit(not_shown_level, msg); /* shown where they would have been */
	}
	emitted = not_shown = 0;
	not_shown_level = LOG_DEBUG;
	if (kmsg_fd >= 0)
		close(kmsg_fd);
	kmsg_fd = -1;
	for (i = 0; i < kept_err.n; i++)
		free(kept_err.msg[i]);
	for (i = 0; i < kept_warn.n; i++)
		free(kept_warn.msg[i]);
	kept_err.n = kept_warn.n = 0;
	kept_err.dropped = kept_warn.dropped = 0;
}

static void keep(struct kept *k, const char *msg)
{
	char *copy;

	if (k->n >= LOG_KEEP_MAX) {
		k->dropped++;
		return;
	}
	copy = strdup(msg);
	if (copy)
		k->msg[k->n++] = copy;
}

/* gcc 12's -fanalyzer loses the pointer keep() stores (see settings.c's raw_set). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
static bool shown(enum log_level level)
{
	return (kmsg_fd >= 0 && level != LOG_DEBUG) || level <= stderr_level;
}

/* One line to kmsg and stderr, as the level and log_setup() say. */
static const char *level_prefix(enum log_level level)
{
	if (level == LOG_ERR)
		return "error: ";
	return level == LOG_WARNING ? "warning: " : "";
}

static void emit(enum log_level level, const char *msg)
{
	char line[1100];
	int n;

	if (kmsg_fd >= 0 && level != LOG_DEBUG) {
		/*
		 * The kernel lets one open of /dev/kmsg write 10 lines per 5 s and drops the
		 * rest silently (printk.devkmsg=ratelimit): a fresh open gets a fresh burst.
		 * The lines, and so the opens, are bounded: LOG_EMIT_MAX and the outcome.
		 */
		if (++kmsg_lines > KMSG_BURST) {
			/* door: the running kernel's log, as above */
			int fd = openat(AT_FDCWD, "/dev/kmsg", O_WRONLY | O_CLOEXEC | O_NOCTTY);

			if (fd >= 0) {
				close(kmsg_fd);
				kmsg_fd = fd;
			}
			kmsg_lines = 1;
		}
		n = snprintf(line, sizeof(line), "<%d>gpuvm: %s\n", (int)level, msg);
		if (n > 0 &&
		    write(kmsg_fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0) {
			/* kmsg refused the line (rate limit, EINVAL): stderr still has it. */
		}
	}
	if (level <= stderr_level) {
		/* One write a line: whole on a console shared with others, and one syscall. */
		n = snprintf(line, sizeof(line), "gpuvm: %s%s\n", level_prefix(level), msg);
		if (n > 0 &&
		    write(STDERR_FILENO, line,
			  (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0) {
			/* nowhere left to say it */
		}
	}
}

static void vlog(enum log_level level, bool result, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

static void vlog(enum log_level level, bool result, const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* No terminal control from a config, a command line or sysfs reaches the console or kmsg. */
	term_safe(msg, msg, sizeof(msg));

	if (level == LOG_ERR)
		keep(&kept_err, msg);
	else if (level == LOG_WARNING)
		keep(&kept_warn, msg);

	if (!shown(level))
		return;
	if (!result && emitted >= LOG_EMIT_MAX) {
		not_shown++;
		if (level < not_shown_level)
			not_shown_level = level;
		return;
	}
	emitted += !result;
	emit(level, msg);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, false, fmt, ap);
	va_end(ap);
}

void log_result(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, true, fmt, ap);
	va_end(ap);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/* What is kept of a level: errors and warnings, NULL for the rest. */
static const struct kept *kept_of(enum log_level level)
{
	if (level == LOG_ERR)
		return &kept_err;
	if (level == LOG_WARNING)
		return &kept_warn;
	return NULL;
}

size_t log_count(enum log_level level)
{
	const struct kept *k = kept_of(level);

	return k ? k->n : 0;
}

const char *log_get(enum log_level level, size_t i)
{
	const struct kept *k = kept_of(level);

	return k && i < k->n ? k->msg[i] : NULL;
}

size_t log_dropped(enum log_level level)
{
	const struct kept *k = kept_of(level);

	return k ? k->dropped : 0;
}
