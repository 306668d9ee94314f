// SPDX-License-Identifier: MIT
/* gpuvm config get KEY | set KEY=VALUE: the host config, as the label mirror edits it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "config.h"
#include "hostreport.h"
#include "log.h"
#include "nextboot.h"
#include "settings.h"
#include "state.h"
#include "rootio.h"
#include "util.h"

/*
 * What config set stores for KEY=VALUE: exactly what config get will print, so the two
 * agree. Blanks around the value go (the parser drops them too); a control or non-ASCII
 * byte is refused (a newline would start a line of its own). The line is then read back
 * as a boot reads it, and stored in the form that reading gives (lists with commas, hex in
 * lower case, numbers without leading zeros), which must read back as itself. The key, or
 * -EINVAL: *why says why, or is NULL when the value is not one the key takes.
 */
static int stored_value(const char *key, const char *value, char *out, size_t size, const char **why)
{
	const char *s = value, *e, *c, *expect;
	char line[CONFIG_LINE_MAX + 1], got[CONFIG_LINE_MAX];
	struct settings_input in = { .config_path = "config set" };
	struct settings st;
	int k, pass, errors;

	*why = NULL;
	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	for (c = s; c < e; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f) {
			*why = "a control or non-ASCII character: the file could not hold it as it is";
			return -EINVAL;
		}
	if ((size_t)(e - s) >= size) {
		*why = "longer than a line of the file can be";
		return -EINVAL;
	}
	memcpy(out, s, (size_t)(e - s));
	out[e - s] = '\0';
	k = settings_check(key, out, &expect);
	if (k < 0)
		return -EINVAL;
	for (pass = 0; pass < 2; pass++) {
		int n = snprintf(line, sizeof(line), "%s=%s", key, out);

		if (n < 0 || n >= CONFIG_LINE_MAX) {
			*why = "longer than a line of the file can be";
			return -EINVAL;
		}
		in.config = line;
		in.config_len = (size_t)n;
		errors = settings_load(&st, &in, NULL); /* a quiet look: does it read back? */
		if (errors || st.from[k] == FROM_DEFAULT)
			break;
		settings_value(&st, (enum setting_key)k, got, sizeof(got));
		if (streq(got, out))
			return k;
		/* The form the boot reads back: stored instead, if it reads back as itself. */
		strscpy(out, got, size);
	}
	*why = "it would not read back from the file as it is written";
	return -EINVAL;
}

/* A key settings.c does not know: named, with the nearest that it does (a usage error). */
static void unknown_key(const char *verb, const char *key, struct outcome *out)
{
	struct nearest nn = { NULL, 0 };
	char shown[64];
	int k;

	for (k = 0; k < KEY__MAX; k++)
		nearest_try(&nn, key, key_name((enum setting_key)k));
	term_safe(key, shown, sizeof(shown));
	log_err("config %s: unknown key '%s' (nearest: %s)", verb, shown, nn.best);
	out->usage = true;
}

/*
 * config get KEY: the value the config gives KEY, as a boot would read it; a key it does
 * not set: "VALUE (the default)", exit 1 all the same (a script's "|| unset" stays true).
 */
static void config_get(const struct options *o, const char *arg, struct outcome *out)
{
	struct settings_input in = { .config_path = o->config ? o->config : CONFIG_PATH };
	struct settings_msgs m = { 0 };
	const char *expect;
	struct settings s;
	char *buf = NULL;
	size_t len;
	int k, r;

	if (settings_check(arg, "x", &expect) == -ENOENT) {
		unknown_key("get", arg, out);
		return;
	}
	r = root_read_config(o->config, &buf, &len);
	if (r < 0 && r != -ENOENT) {
		char why[128];

		config_read_why(r, CONFIG_MAX_SIZE, why, sizeof(why));
		log_err("%s: %s", in.config_path, why);
		out->error = true;
		return;
	}
	in.config = buf;
	in.config_len = buf ? len : 0;
	settings_load(&s, &in, &m);
	settings_msgs_log(&m);
	settings_msgs_free(&m);
	for (k = 0; k < KEY__MAX && !settings_same_key(key_name((enum setting_key)k), arg); k++)
		;
	if (k < KEY__MAX) {
		char v[SETTINGS_VALUE_MAX];
		bool unset = s.from[k] == FROM_DEFAULT;

		settings_value(&s, (enum setting_key)k, v, sizeof(v));
		term_safe(v, v, sizeof(v)); /* validated, and text for a terminal all the same */
		printf("%s%s%s\n", v, unset && v[0] ? " " : "", unset ? "(the default)" : "");
		out->unset = unset;
	}
	free(buf);
}

/*
 * The reboot: line (the label mirror reads it). For mode=, this boot's mode (the state
 * file, which a live switch rewrites) against the file's; any other key takes effect at
 * the next boot.
 */
static void reboot_line(int k, const char *stored)
{
	char running[32], shown[64];
	enum mode m;

	if (k != KEY_MODE) {
		printf("reboot: needed: takes effect at the next boot\n");
	} else if (!state_top("mode", running, sizeof(running))) {
		printf("reboot: unknown: no /%s: gpuvm has not run in this boot\n", STATE_PATH);
	} else if (streq(running, stored)) {
		printf("reboot: none: this boot runs %s already\n", running);
	} else if (mode_parse(running, &m) < 0) {
		/* Data of a file, not a line of ours: a newline in it would forge one. */
		term_safe(running, shown, sizeof(shown));
		printf("reboot: needed: this boot runs what /%s calls '%s' (not a mode), the file says %s\n",
		       STATE_PATH, shown, stored);
	} else {
		printf("reboot: needed: this boot runs %s, the file says %s\n", running, stored);
	}
}

/*
 * The next boot: line (nextboot.h words it). mode=VALUE that a boot-loader file pins to
 * another mode, or gpus=VALUE to another selection, cannot take effect by a reboot: outcome
 * not_applied (exit 6).
 */
static void next_boot(const struct options *o, int k, const char *stored, struct outcome *out)
{
	struct nextboot *nb = malloc(sizeof(*nb));
	struct nb_judgement j;
	char say[2 * NB_TEXT];

	if (!nb || nextboot_judge(nb, o->config, o->cmdline) < 0) {
		log_err("config set: out of memory judging the next boot");
		out->error = true;
		if (nb)
			nextboot_fini(nb);
		free(nb);
		return;
	}
	nextboot_verdict(nb, key_name((enum setting_key)k), stored, &j);
	nextboot_say(&j, say, sizeof(say));
	report_next_boot_line(stdout, say);
	if ((k == KEY_MODE || k == KEY_GPUS) && j.verdict == NB_PINNED && j.conflict)
		out->not_applied = true;
	nextboot_fini(nb);
	free(nb);
}

/* config set KEY=VALUE: validated, written atomically, and when it takes effect. */
static void config_set(const struct options *o, const char *arg, struct outcome *out)
{
	int dirfd = AT_FDCWD;
	const char *path = o->config ? o->config : CONFIG_PATH + 1, *expect, *why;
	char key[64], *value, stored[CONFIG_LINE_MAX];
	bool changed;
	int k, r;

	value = strchr(arg, '=');
	if (!value || value == arg || (size_t)(value - arg) >= sizeof(key)) {
		log_err("config set: expected KEY=VALUE, got '%s'", arg);
		out->usage = true;
		return;
	}
	snprintf(key, sizeof(key), "%.*s", (int)(value - arg), arg);
	value++;
	k = settings_check(key, "", &expect);
	if (k == -ENOENT) {
		unknown_key("set", key, out);
		return;
	}
	k = stored_value(key, value, stored, sizeof(stored), &why);
	if (k < 0) {
		char shown[80];

		term_safe(value, shown, sizeof(shown));
		log_err("config set: %s: invalid value '%s' (%s%s)", key, shown,
			why ? why : "expected ", why ? "" : expect);
		out->usage = true;
		return;
	}
	/* The root's config is written through its directory from rootio (writefile.h). */
	if (!o->config && (dirfd = root_open_dir("", false, &why)) < 0) {
		log_err("%s: cannot write: %s", CONFIG_PATH, strerror(-dirfd));
		out->error = true;
		return;
	}
	r = config_update(dirfd, path, key, stored, settings_same_key, &changed, &why);
	if (dirfd >= 0)
		close(dirfd);
	if (r < 0 && why) {
		log_err("%s: not written: %s", o->config ? o->config : CONFIG_PATH, why);
		out->error = true;
		return;
	}
	if (r < 0) {
		log_err("%s: cannot write: %s", o->config ? o->config : CONFIG_PATH, strerror(-r));
		out->error = true;
		return;
	}
	printf("%s: %s=%s%s\n", o->config ? o->config : CONFIG_PATH, key, stored,
	       changed ? "" : " (unchanged)");
	reboot_line(k, stored);
	next_boot(o, k, stored, out);
}

/* gpuvm config get KEY | set KEY=VALUE: the host config, edited atomically. */
static void get_or_set(const struct options *o, struct outcome *out)
{
	const char *verb = o->args[0], *arg = o->args[1];

	if (streq(verb, "get"))
		config_get(o, arg, out);
	else if (streq(verb, "set"))
		config_set(o, arg, out);
	else {
		log_err("config: unknown verb '%s' (expected get or set)", verb);
		out->usage = true;
	}
}

const struct command cmd_config = {
	.name = "config",
	.args = "get KEY | set KEY=VALUE",
	.min_args = 2,
	.max_args = 2,
	.help = "  config get KEY      the host config's value of KEY\n"
		"  config set KEY=VALUE\n"
		"                      validate and write it atomically; say when it takes effect\n",
	.run = get_or_set,
};
