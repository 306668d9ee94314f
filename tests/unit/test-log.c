// SPDX-License-Identifier: MIT
/*
 * log.c's bounds: what reaches stderr (and kmsg) in one run is capped and the rest counted
 * in a closing line, the outcome lines are never held back, and the report keeps
 * LOG_KEEP_MAX errors and says how many it dropped.
 */
#include <stdio.h>
#include <unistd.h>

#include "log.h"
#include "unit.h"

/* Run fn with stderr in a file; the lines written, in buf. */
static size_t capture(void (*fn)(void), char *buf, size_t size)
{
	FILE *f = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n, lines = 0;

	if (!f || saved < 0)
		abort();
	fflush(stderr);
	dup2(fileno(f), STDERR_FILENO);
	fn();
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
	for (size_t i = 0; i < n; i++)
		lines += buf[i] == '\n';
	return lines;
}

static void flood(void)
{
	int i;

	log_setup(false, LOG_INFO);
	for (i = 0; i < 1000; i++)
		log_err("garbage %d", i);
	for (i = 0; i < 3; i++)
		log_result(LOG_INFO, "0000:0%d:00.0: nouveau -> vfio-pci (bind)", i);
	log_result(LOG_ERR, "0000:09:00.0: held");
}

static void quiet_run(void)
{
	log_setup(false, LOG_INFO);
	log_warn("one warning");
	log_info("one line");
	log_close();
}

int main(void)
{
	static char out[1 << 20];
	size_t lines = capture(flood, out, sizeof(out));

	CHECK(lines <= LOG_EMIT_MAX + 4,
	      "1000 errors and 4 outcome lines: %zu lines on stderr, at most %d", lines,
	      LOG_EMIT_MAX + 4);
	CHECK(strstr(out, "gpuvm: error: garbage 0\n") != NULL, "the first errors are shown");
	CHECK(strstr(out, "gpuvm: 0000:02:00.0: nouveau -> vfio-pci (bind)\n") != NULL &&
		      strstr(out, "gpuvm: error: 0000:09:00.0: held\n") != NULL,
	      "the outcome lines are shown after the flood");
	CHECK_INT(log_count(LOG_ERR), LOG_KEEP_MAX, "the report keeps LOG_KEEP_MAX errors");
	CHECK_INT(log_dropped(LOG_ERR), 1001 - LOG_KEEP_MAX, "and counts the ones it dropped");
	CHECK_STR(log_get(LOG_ERR, 0), "garbage 0", "the first ones");
	lines = capture(log_close, out, sizeof(out));
	CHECK_INT(lines, 1, "log_close: one closing line");
	{
		char want[128];

		snprintf(want, sizeof(want), "gpuvm: error: %d messages not shown (at most %d a run)\n",
			 1000 - LOG_EMIT_MAX, LOG_EMIT_MAX);
		CHECK_STR(out, want, "that says how many were not shown");
	}
	CHECK_INT(log_count(LOG_ERR) + log_dropped(LOG_ERR), 0, "log_close forgets");
	lines = capture(quiet_run, out, sizeof(out));
	CHECK_INT(lines, 2, "a run under the cap: its lines, no closing line");
	return unit_done();
}
