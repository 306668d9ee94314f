// SPDX-License-Identifier: MIT
/* gpuvm config get KEY | set KEY=VALUE: the host config, as the label mirror edits it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blkdev.h"
#include "cmd.h"
#include "config.h"
#include "log.h"
#include "nextboot.h"
#include "prepare.h"
#include "settings.h"
#include "state.h"
#include "rootio.h"
#include "tagspec.h"
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
		if (errors || streq(st.source[k], "default"))
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

/* config get KEY: the value the config gives KEY, as a boot would read it. */
static void config_get(const struct options *o, const char *arg, struct outcome *out)
{
	struct settings_input in = { .config_path = o->config ? o->config : CONFIG_PATH };
	int dirfd = o->config ? AT_FDCWD : root_fd();
	const char *path = o->config ? o->config : CONFIG_PATH + 1, *expect;
	struct settings_msgs m = { 0 };
	struct settings s;
	char *buf = NULL;
	size_t len;
	int k, r;

	if (settings_check(arg, "x", &expect) == -ENOENT) {
		log_err("config get: unknown key '%s'", arg);
		out->usage = true;
		return;
	}
	r = config_read(dirfd, path, &buf, &len);
	if (r < 0 && r != -ENOENT) {
		log_err("%s: cannot read: %s", in.config_path, strerror(-r));
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
	if (k == KEY__MAX || streq(s.source[k], "default")) {
		log_err("%s: %s is not set", in.config_path, arg);
		out->error = true;
	} else {
		char v[SETTINGS_VALUE_MAX];

		settings_value(&s, (enum setting_key)k, v, sizeof(v));
		term_safe(v, v, sizeof(v)); /* validated, and text for a terminal all the same */
		printf("%s\n", v);
	}
	free(buf);
}

/* term_safe for a reason made of file names. */
static const char *shown(const char *s, char *buf, size_t size)
{
	term_safe(s, buf, size);
	return buf;
}

/*
 * What the next boot will make of the file, judged by the images it can boot and the boot
 * line (nextboot.h). mode=VALUE that the next boot cannot apply is outcome not_applied:
 * the boot line sets another mode, or a VM mode and an image without gpuvm.
 */
static void next_boot(const struct options *o, int k, const char *stored, struct outcome *out)
{
	struct nextboot *nb = malloc(sizeof(*nb));
	const struct nb_image *im;
	char a[NB_TEXT], b[NB_TEXT], cmd[NB_TEXT];
	bool stale = false, disk = false, vm = false;
	enum mode want;
	size_t i;

	if (!nb ||
	    nextboot_judge(nb, o->config ? AT_FDCWD : root_fd(),
			   o->config ? o->config : CONFIG_PATH + 1) < 0) {
		log_err("config set: out of memory judging the next boot");
		out->error = true;
		free(nb);
		return;
	}
	if (nb->gpuvm == 1 && nb->mode[0])
		printf("next boot: gpuvm runs in %s\n", nb->mode);
	else if (nb->gpuvm == 0)
		printf("next boot: no gpuvm: %s\n", shown(nb->why, a, sizeof(a)));
	else
		printf("next boot: unknown: %s\n", shown(nb->why, a, sizeof(a)));
	if (k == KEY_MODE && mode_parse(stored, &want) == 0)
		vm = want != MODE_CONTAINER;
	if (k == KEY_MODE && nb->cmdline_mode[0] && !streq(nb->cmdline_mode, stored)) {
		printf("the label cannot take effect on this node until gpuvm.mode= is removed from %s (it sets %s)\n",
		       shown(nb->cmdline_source, a, sizeof(a)), shown(nb->cmdline_mode, b, sizeof(b)));
		out->not_applied = true;
	}
	nextboot_rebuild(nb, NULL, cmd, sizeof(cmd));
	if (nb->gpuvm == 0 && vm) {
		printf("%s: gpuvm will not bind at the next boot: run %s before rebooting (%s)\n",
		       shown(nb->why, a, sizeof(a)), cmd, nextboot_joins(nb));
		out->not_applied = true;
	} else if (nb->gpuvm == 0 && k == KEY_MODE) {
		printf("note: %s: no gpuvm there means no vfio binds, as container mode wants\n",
		       shown(nb->why, a, sizeof(a)));
	}
	for (i = 0; i < nb->n; i++) {
		im = &nb->img[i];
		if (im->gpuvm == 1 && im->from_disk)
			disk = true;
		if (im->gpuvm == 1 && im->stale) {
			stale = true;
			nextboot_rebuild(nb, im->kernel, b, sizeof(b));
			printf("the initramfs %s carries another copy of %s (mode %s): run %s before rebooting\n",
			       shown(im->path, a, sizeof(a)), CONFIG_PATH,
			       im->config_mode[0] ? im->config_mode : "not set", b);
		}
	}
	if (disk && !stale)
		printf("the next boot reads the host config from a disk (%s): no initramfs rebuild needed\n",
		       shown(nb->img[0].mode_source, a, sizeof(a)));
	if (nb->n == 0 && !o->config &&
	    (root_exists("usr/lib/dracut/modules.d/90gpuvm") ||
	     root_exists("usr/share/initramfs-tools/hooks/gpuvm"))) {
		stale = true;
		printf("the initramfs carries a copy of %s: run %s before rebooting\n", CONFIG_PATH,
		       cmd);
	}
	/* One line a script can act on (the label mirror does): the command for every image. */
	if (stale)
		printf("initramfs rebuild: %s\n", cmd);
	free(nb);
}

/* When does a new value take effect? The command line may override it; a reboot applies it. */
static void takes_effect(const struct options *o, int k, const char *stored, struct outcome *out)
{
	struct prep pp = { 0 };
	char running[32];

	if (prep_settings(&pp, o->root, o->cmdline, o->config, SRC_NO_DISK, NULL) < 0) {
		out->error = true;
		return;
	}
	if (streq(pp.s.source[k], "cmdline"))
		printf("note: the kernel command line sets %s, which overrides the file\n",
		       key_name((enum setting_key)k));
	if (k == KEY_MODE && state_top("mode", running, sizeof(running))) {
		if (streq(running, mode_name(pp.s.mode)))
			printf("the running boot is already in %s\n", running);
		else
			printf("reboot needed: this boot runs %s, the next one %s\n", running,
			       mode_name(pp.s.mode));
	} else {
		printf("takes effect at the next boot\n");
	}
	prep_fini(&pp);
	next_boot(o, k, stored, out);
}

/* config set KEY=VALUE: validated, written atomically, and when it takes effect. */
static void config_set(const struct options *o, const char *arg, struct outcome *out)
{
	int dirfd = o->config ? AT_FDCWD : root_fd();
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
		log_err("config set: unknown key '%s'", key);
		out->usage = true;
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
	r = config_update(dirfd, path, key, stored, settings_same_key, &changed, &why);
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

	takes_effect(o, k, stored, out);
}

/* gpuvm config get KEY | set KEY=VALUE: the host config, edited atomically. */
void cmd_config(const struct options *o, struct outcome *out)
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
