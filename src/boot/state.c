// SPDX-License-Identifier: MIT
/*
 * The state file, /run/gpuvm/state.json: every apply leaves one (it survives switch_root),
 * streamed from the report; status, config set and status --nfd read fields of it back,
 * as JSON.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "json.h"
#include "log.h"
#include "metrics.h"
#include "pinned.h"
#include "state.h"
#include "rootio.h"
#include "writefile.h"

#define STATE_MAX ((size_t)1024 * 1024)

char *state_read(void)
{
	char *buf = malloc(STATE_MAX + 1), why[128];
	ssize_t n;

	if (!buf)
		return NULL;
	n = root_read_own(STATE_PATH, buf, STATE_MAX + 1);
	if (n >= 0 && json_valid(buf, (size_t)n))
		return buf;
	free(buf);
	if (n >= 0) {
		log_warn("/%s: not valid JSON; ignored", STATE_PATH);
	} else if (n != -ENOENT && n != -ENOTDIR) {
		/* none yet is no news; a link or a stranger's file is said */
		config_read_why((int)n, STATE_MAX, why, sizeof(why));
		log_warn("/%s: %s; ignored", STATE_PATH, why);
	}
	return NULL;
}

static void fill_state(FILE *f, void *rep)
{
	report_json(f, rep);
}

/*
 * Streamed into the file: at 10,000 functions the text is a third of a megabyte. A boot
 * call's report is also the boot's record, which later commands leave alone. The metrics
 * file goes with the state file, whoever writes it: the two always tell the same run; so
 * do the pinned records (pinned.c).
 */
void state_write(struct report *rep)
{
	int r = root_write_file_with("run/gpuvm", "state.json", fill_state, rep);

	if (r < 0)
		log_err("cannot write /%s: %s", STATE_PATH, wf_strerror(r));
	if (rep->source && rep->source->boot) {
		r = root_write_file_with("run/gpuvm", "boot.json", fill_state, rep);
		if (r < 0)
			log_err("cannot write /%s: %s", BOOT_STATE_PATH, wf_strerror(r));
	}
	metrics_write(rep);
	if (rep->exec)
		pinned_sync(rep);
}

/*
 * A string of the last state file at a path of keys ("mode"; "config_disk", "status"), read
 * as JSON: escapes undone, a key only where it is a member, never a match inside a value.
 */
bool state_string(const char *state, const char *a, const char *b, char *buf, size_t size)
{
	const char *path[] = { a, b };

	return json_get_string(state, strlen(state), path, b ? 2 : 1, buf, size) == 0;
}

int state_top_get(const char *key, char *buf, size_t size)
{
	const char *path[] = { key };
	char *state = state_read();
	int r;

	if (!state)
		return -ENOENT; /* none, or not JSON (state_read said so); out of memory alike */
	r = json_get_string(state, strlen(state), path, 1, buf, size);
	free(state);
	return r;
}

/* A top-level string of the last state file ("mode", "result"). */
bool state_top(const char *key, char *buf, size_t size)
{
	return state_top_get(key, buf, size) == 0;
}
