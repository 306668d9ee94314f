// SPDX-License-Identifier: MIT
/*
 * settings_load on a command line and a host config: the input is "CMDLINE\0CONFIG"
 * (no NUL: a command line and no config file).
 *
 * Invariants: every key ends valid, with a source that is "default", "cmdline" or
 * "FILE:LINE", and the default value where the source is "default"; a valid last
 * gpuvm.mode= on the command line always wins; the errors counted are the errors logged
 * (past a source's first ten messages, as the count in "N more lines with errors not shown");
 * no log line carries a control byte; settings_value never writes past its buffer, and
 * what it prints for ids= and exclude= parses back to the same list, and for gpus= parses.
 */
#include <ctype.h>

#include "cmdline.h"
#include "config.h"
#include "fuzz.h"
#include "settings.h"
#include "tagspec.h"
#include "util.h"

#define PATH "/etc/gpuvm/gpuvm.conf"

/* "WHERE: N more lines (words) with errors not shown": N - 1 errors not said; else 0. */
static size_t more_not_shown(const char *msg)
{
	const char *at;

	for (at = strstr(msg, ": "); at; at = strstr(at + 1, ": ")) {
		static const char *const fmt[] = { ": %u more lines with errors not shown%n",
						   ": %u more words with errors not shown%n" };
		size_t f;

		for (f = 0; f < 2; f++) {
			unsigned more = 0;
			int end = 0;

			/* %n is set only when the whole text matched */
			if (sscanf(at, fmt[f], &more, &end) == 1 && end > 0 && at[end] == '\0' && more)
				return more - 1;
		}
	}
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_log_quiet();
	return 0;
}

struct last_mode {
	char *value;
};

static int on_word(const char *key, const char *value, void *data)
{
	struct last_mode *m = data;
	char name[64];

	/* gpuvm.mode=, and the label key that the config also takes (gpuvm.nvidia.com/...=). */
	if (cmdline_key(key, "gpuvm", name, sizeof(name)) && settings_same_key(name, "mode") && value) {
		free(m->value);
		m->value = strdup(value);
	}
	return 0;
}

static void check_source(const struct settings *s, enum setting_key k)
{
	const char *src = settings_source(s, k);
	size_t plen = strlen(PATH);

	fuzz_assert(memchr(s->where[k], '\0', SOURCE_LEN), "%s: source not terminated", key_name(k));
	if (s->from[k] == FROM_DEFAULT || s->from[k] == FROM_CMDLINE)
		return;
	fuzz_assert(s->from[k] == FROM_CONFIG, "%s: from %d", key_name(k), (int)s->from[k]);
	fuzz_assert(strncmp(src, PATH, plen) == 0 && src[plen] == ':' && src[plen + 1] &&
			    strspn(src + plen + 1, "0123456789") == strlen(src + plen + 1),
		    "%s: source '%s'", key_name(k), src);
}

static void check_defaults(const struct settings *s)
{
	struct settings d;

	settings_default(&d);
	if (s->from[KEY_MODE] == FROM_DEFAULT)
		fuzz_assert(s->mode == d.mode, "mode not the default");
	if (s->from[KEY_IDS] == FROM_DEFAULT)
		fuzz_assert(s->n_ids == 0, "ids not the default");
	if (s->from[KEY_EXCLUDE] == FROM_DEFAULT)
		fuzz_assert(s->n_exclude == 0, "exclude not the default");
	if (s->from[KEY_NVSWITCH] == FROM_DEFAULT)
		fuzz_assert(s->nvswitch_vm == d.nvswitch_vm, "nvswitch not the default");
	if (s->from[KEY_HOST_DRIVER] == FROM_DEFAULT)
		fuzz_assert(!s->host_driver[0], "host_driver not the default");
	if (s->from[KEY_ON_ERROR] == FROM_DEFAULT)
		fuzz_assert(s->on_error == d.on_error, "on_error not the default");
	if (s->from[KEY_CONFIG] == FROM_DEFAULT)
		fuzz_assert(!s->config[0], "config not the default");
	if (s->from[KEY_GPUS] == FROM_DEFAULT)
		fuzz_assert(s->n_gpus == 0, "gpus not the default");
	if (s->from[KEY_WRITE_TIMEOUT_MS] == FROM_DEFAULT)
		fuzz_assert(s->write_timeout_ms == d.write_timeout_ms,
			    "write_timeout_ms not the default");
}

static void check_values(const struct settings *s)
{
	const char *p;

	fuzz_assert(s->mode <= MODE_VM_VGPU, "mode %d", (int)s->mode);
	fuzz_assert(s->on_error <= ON_ERROR_RELEASE, "on_error %d", (int)s->on_error);
	fuzz_assert(s->n_ids <= SETTINGS_LIST_MAX && s->n_exclude <= SETTINGS_LIST_MAX,
		    "lists %zu %zu", s->n_ids, s->n_exclude);
	fuzz_assert(!s->host_driver[0] || valid_driver_name(s->host_driver), "host_driver '%s'",
		    s->host_driver);
	/* A label may hold blanks ("LABEL=my disk"); no control or non-ASCII byte, ever. */
	for (p = s->config; *p; p++)
		fuzz_assert((unsigned char)*p >= ' ' && (unsigned char)*p < 0x7f,
			    "config byte 0x%02x", (unsigned char)*p);
	if (s->config[0]) {
		struct tag_spec t;
		const char *why;

		fuzz_assert(tag_parse(s->config, &t, &why) == 0, "config '%s' taken, not a spec",
			    s->config);
	}
	fuzz_assert(s->config_timeout_s <= 3600, "config_timeout %u", s->config_timeout_s);
	fuzz_assert(s->write_timeout_ms >= 100 && s->write_timeout_ms <= 600000,
		    "write_timeout_ms %u", s->write_timeout_ms);
}

/* settings_value into exact buffers, and the lists printed in full parse back. */
static void check_print(const struct settings *s)
{
	static const size_t sizes[] = { 1, 2, 8, 12, 13, 17, 18, 19, 64 };
	char big[4096], bad[80];
	struct pci_id ids[SETTINGS_LIST_MAX];
	struct pci_addr ex[SETTINGS_LIST_MAX];
	size_t i, n;
	int k;

	for (k = 0; k <= KEY__MAX; k++) {
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			char *buf = malloc(sizes[i]);

			if (!buf)
				abort();
			settings_value(s, (enum setting_key)k, buf, sizes[i]);
			fuzz_assert(memchr(buf, '\0', sizes[i]), "settings_value(%d): unterminated", k);
			free(buf);
		}
	}
	if (s->n_ids) {
		settings_value(s, KEY_IDS, big, sizeof(big));
		fuzz_assert(pci_id_list_parse(big, ids, SETTINGS_LIST_MAX, &n, bad, sizeof(bad)) == 0,
			    "ids printed as '%s' do not parse", big);
		fuzz_assert(n == s->n_ids, "ids: %zu printed, %zu set", n, s->n_ids);
		for (i = 0; i < n; i++)
			fuzz_assert(ids[i].vendor == s->ids[i].vendor &&
					    ids[i].any_device == s->ids[i].any_device &&
					    (ids[i].any_device || ids[i].device == s->ids[i].device),
				    "ids: entry %zu printed as '%s'", i, big);
	}
	if (s->n_exclude) {
		settings_value(s, KEY_EXCLUDE, big, sizeof(big));
		fuzz_assert(pci_addr_list_parse(big, ex, SETTINGS_LIST_MAX, &n, bad, sizeof(bad)) == 0,
			    "exclude printed as '%s' does not parse", big);
		fuzz_assert(n == s->n_exclude, "exclude: %zu printed, %zu set", n, s->n_exclude);
		for (i = 0; i < n; i++)
			fuzz_assert(pci_addr_cmp(&ex[i], &s->exclude[i]) == 0,
				    "exclude: entry %zu printed as '%s'", i, big);
	}
	if (s->n_gpus) {
		const char *expect;

		settings_value(s, KEY_GPUS, big, sizeof(big));
		fuzz_assert(settings_check("gpus", big, &expect) == KEY_GPUS,
			    "gpus printed as '%s' does not parse", big);
		fuzz_assert(settings_same_value("gpus", big, big), "gpus: '%s' not itself", big);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t clen = nul ? (size_t)(nul - data) : size;
	struct settings_input in = { .config_path = PATH };
	struct last_mode last = { 0 };
	char *cmdline = fuzz_cstr(data, clen), *config = NULL;
	struct settings s;
	enum mode m;
	size_t i;
	struct settings_msgs msgs = { 0 };
	int errors, k;

	if (nul) {
		in.config_len = size - clen - 1;
		config = fuzz_cstr(nul + 1, in.config_len); /* config_read's NUL follows */
		in.config = config;
	}
	in.cmdline = cmdline;

	errors = settings_load(&s, &in, &msgs);
	settings_msgs_log(&msgs); /* the one place that logs them, as a run does */
	settings_msgs_free(&msgs);
	fuzz_assert(errors >= 0, "settings_load returned %d", errors);
	{
		/* A source's errors past its first messages are said as one line with their count. */
		size_t said = log_count(LOG_ERR);

		for (i = 0; i < log_count(LOG_ERR); i++)
			said += more_not_shown(log_get(LOG_ERR, i));
		fuzz_assert((size_t)errors == said ||
				    (log_count(LOG_ERR) == LOG_KEEP_MAX && (size_t)errors > LOG_KEEP_MAX),
			    "%d errors counted, %zu logged", errors, said);
	}
	for (i = 0; i < log_count(LOG_ERR); i++)
		fuzz_assert(fuzz_printable(log_get(LOG_ERR, i)),
			    "control byte in the log line '%s'", log_get(LOG_ERR, i));
	for (i = 0; i < log_count(LOG_WARNING); i++)
		fuzz_assert(fuzz_printable(log_get(LOG_WARNING, i)),
			    "control byte in the log line '%s'", log_get(LOG_WARNING, i));

	for (k = 0; k < KEY__MAX; k++)
		check_source(&s, (enum setting_key)k);
	check_defaults(&s);
	check_values(&s);
	check_print(&s);

	/* The command line is the highest source: a valid last gpuvm.mode= wins. */
	cmdline_parse(cmdline, on_word, &last);
	if (last.value && mode_parse(last.value, &m) == 0)
		fuzz_assert(s.mode == m && settings_mode_pinned(&s),
			    "gpuvm.mode=%s on the command line lost to %s", last.value,
			    settings_source(&s, KEY_MODE));
	else if (last.value)
		fuzz_assert(!settings_mode_pinned(&s), "an invalid mode taken");
	free(last.value);

	log_close();
	free(cmdline);
	free(config);
	return 0;
}
