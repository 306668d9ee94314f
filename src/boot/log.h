/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_LOG_H
#define GPUVM_LOG_H

#include <stdbool.h>
#include <stddef.h>

/* Kernel log levels, as /dev/kmsg takes them. */
enum log_level {
	LOG_ERR = 3,
	LOG_WARNING = 4,
	LOG_INFO = 6,
	LOG_DEBUG = 7
};

/*
 * A run shows at most LOG_EMIT_MAX messages on stderr and kmsg (a config of garbage must not
 * flood the boot console, nor reopen kmsg past its rate limit without end); the rest are
 * counted, and log_close() says how many. log_result() lines, the outcome per device, are
 * outside the cap. The report keeps the first LOG_KEEP_MAX errors and warnings each.
 */
#define LOG_EMIT_MAX 64
#define LOG_KEEP_MAX 256

/*
 * use_kmsg: also write to /dev/kmsg (never under --root); stderr_max: the highest
 * level printed on stderr (LOG_ERR when quiet, LOG_DEBUG when verbose).
 */
void log_setup(bool use_kmsg, enum log_level stderr_max);
/* Says how many messages were not shown, if any; closes kmsg and forgets what was kept. */
void log_close(void);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
/* An outcome line (a device's result, the run's summary): shown whatever came before. */
void log_result(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Errors and warnings are also kept, in order, for the report. */
size_t log_count(enum log_level level);
const char *log_get(enum log_level level, size_t i);
/* How many errors (warnings) were not kept, past LOG_KEEP_MAX. */
size_t log_dropped(enum log_level level);

#endif
