// SPDX-License-Identifier: MIT
/* libkmod, and nothing else touches it: modprobe's behaviour for the modules gpuvm needs. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <libkmod.h>

#include "kmod.h"
#include "log.h"
#include "util.h"

static struct kmod_ctx *ctx;

/*
 * libkmod's own messages, its errors and what it says at its info level, at gpuvm's debug
 * level: gpuvm -v shows why a lookup or a load failed as libkmod saw it, as systemd's
 * module-util forwards them to its log; kmsg and the report stay gpuvm's own words.
 */
__attribute__((format(printf, 6, 0))) static void forward(void *data, int priority,
							  const char *file, int line, const char *fn,
							  const char *format, va_list args)
{
	char msg[512], shown[512];
	size_t n;

	(void)data;
	(void)priority;
	(void)file;
	(void)line;
	(void)fn;
	vsnprintf(msg, sizeof(msg), format, args);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	term_safe(msg, shown, sizeof(shown));
	log_debug("libkmod: %s", shown);
}

/*
 * Under --root the module directory is ROOT/lib/modules/KVER (or ROOT/usr/lib/...): the
 * modprobe.d directories are then ROOT's too (libkmod's own list, under ROOT), not the
 * host's. False when dirname is not of that form.
 */
static bool config_under_root(const char *dirname, char dirs[][320], const char **paths)
{
	static const char *const sub[] = {
		"/etc/modprobe.d",
		"/run/modprobe.d",
		"/usr/local/lib/modprobe.d",
		"/lib/modprobe.d",
	};
	const char *p, *at = NULL;
	size_t len, i;

	for (p = dirname; (p = strstr(p, "/lib/modules/")); p++)
		at = p;
	if (!at)
		return false;
	len = (size_t)(at - dirname);
	if (len >= 4 && !strncmp(at - 4, "/usr", 4))
		len -= 4;
	for (i = 0; i < ARRAY_SIZE(sub); i++) {
		snprintf(dirs[i], 320, "%.*s%s", (int)len, dirname, sub[i]);
		paths[i] = dirs[i];
	}
	paths[i] = NULL;
	return true;
}

/*
 * Whether an alias index is there. libkmod has no fallback to the text files: without
 * modules.alias.bin (and modules.builtin.alias.bin) no modalias can name a variant driver,
 * and each lookup would only try to open both and modules.builtin.bin again.
 */
static bool alias_index;

static bool index_exists(const char *dirname, const char *name)
{
	char path[340];

	snprintf(path, sizeof(path), "%s/%s", dirname, name);
	/* door: the module directory, which libkmod itself reads by its path */
	return access(path, F_OK) == 0;
}

int mod_init(const char *dirname)
{
	char dir[300], cfg_dirs[4][320];
	const char *cfg[5];
	struct utsname u;
	bool under_root = false;

	if (ctx)
		return 0;
	if (!dirname) {
		/* Merged-/usr systems keep modules in /usr/lib/modules only. */
		if (uname(&u) < 0)
			return -errno;
		snprintf(dir, sizeof(dir), "/lib/modules/%s", u.release);
		/* door: the running kernel's module directory, libkmod's by its path */
		if (access(dir, F_OK) < 0)
			snprintf(dir, sizeof(dir), "/usr/lib/modules/%s", u.release);
		dirname = dir;
	} else {
		under_root = config_under_root(dirname, cfg_dirs, cfg);
	}
	ctx = kmod_new(dirname, under_root ? cfg : NULL);
	if (!ctx)
		return -ENOMEM;
	kmod_set_log_fn(ctx, forward, NULL);
	kmod_set_log_priority(ctx, LOG_INFO);
	alias_index = kmod_load_resources(ctx) == 0 ||
		index_exists(kmod_get_dirname(ctx), "modules.alias.bin") ||
		index_exists(kmod_get_dirname(ctx), "modules.builtin.alias.bin");
	return 0;
}

void mod_fini(void)
{
	if (ctx) {
		kmod_set_log_priority(ctx, LOG_ERR); /* not its "context released" */
		kmod_unref(ctx);
	}
	ctx = NULL;
}

int mod_load(const char *name, int *loaded, char *msg, size_t size)
{
	struct kmod_list *list = NULL, *l;
	int r, state;

	*loaded = 0;
	msg[0] = '\0';
	if (!ctx) {
		snprintf(msg, size, "%s: no module directory", name);
		return -ENOENT;
	}
	r = kmod_module_new_from_lookup(ctx, name, &list);
	if (r < 0 || !list) {
		snprintf(msg, size, "%s: not found in the module directory %s", name,
			 kmod_get_dirname(ctx));
		return r < 0 ? r : -ENOENT;
	}
	r = -ENOENT;
	kmod_list_foreach(l, list)
	{
		struct kmod_module *m = kmod_module_get_module(l);
		const char *path = kmod_module_get_path(m);

		state = kmod_module_get_initstate(m);
		if (state == KMOD_MODULE_BUILTIN || state == KMOD_MODULE_LIVE) {
			r = 0;
		} else {
			r = kmod_module_probe_insert_module(m, KMOD_PROBE_APPLY_BLACKLIST_ALIAS_ONLY,
							    NULL, NULL, NULL, NULL);
			if (r == 0) {
				*loaded = 1;
			} else if (r == KMOD_PROBE_APPLY_BLACKLIST_ALIAS_ONLY) {
				snprintf(msg, size, "%s: blacklisted in modprobe.d",
					 kmod_module_get_name(m));
				r = -EPERM;
			} else if (r < 0) {
				snprintf(msg, size, "%s (%s): %s", kmod_module_get_name(m),
					 path ? path : "no path", strerror(-r));
			} else {
				r = -EINVAL;
			}
		}
		kmod_module_unref(m);
		if (r == 0)
			break;
	}
	kmod_module_unref_list(list);
	return r;
}

int mod_vfio_variant(const char *modalias, char *name, size_t size)
{
	struct kmod_list *list = NULL, *l;
	char alias[160];
	int r = -ENOENT;

	if (!ctx || !alias_index)
		return -ENOENT;
	/*
	 * The kernel names variant drivers by "vfio_" + the device's modalias. vfio_pci's own
	 * catch-all (vfio_pci:v*d*sv*sd*bc*sc*i*) matches every device and libkmod may list it
	 * first: a variant driver, when one matches, is the answer; vfio_pci only without one.
	 */
	snprintf(alias, sizeof(alias), "vfio_%s", modalias);
	if (kmod_module_new_from_lookup(ctx, alias, &list) < 0 || !list)
		return -ENOENT;
	kmod_list_foreach(l, list)
	{
		struct kmod_module *m = kmod_module_get_module(l);
		const char *n = kmod_module_get_name(m);

		if (r < 0 || !streq(n, "vfio_pci"))
			r = strscpy(name, n, size);
		kmod_module_unref(m);
		if (r >= 0 && !streq(name, "vfio_pci"))
			break;
	}
	kmod_module_unref_list(list);
	return r;
}

/*
 * A module the running kernel has that the module directory does not know: loaded from
 * elsewhere (the GPU Operator's driver containers build and load theirs), or built in.
 */
static enum mod_state running_only(const char *name)
{
	struct kmod_module *m = NULL;
	int init;

	if (kmod_module_new_from_name(ctx, name, &m) < 0 || !m)
		return MOD_MISSING;
	init = kmod_module_get_initstate(m);
	kmod_module_unref(m);
	if (init == KMOD_MODULE_LIVE || init == KMOD_MODULE_COMING)
		return MOD_LOADED;
	return init == KMOD_MODULE_BUILTIN ? MOD_BUILTIN : MOD_MISSING;
}

enum mod_state mod_state(const char *name, bool live)
{
	struct kmod_list *list = NULL, *l;
	enum mod_state st = MOD_MISSING;

	if (!ctx)
		return MOD_MISSING;
	if (kmod_module_new_from_lookup(ctx, name, &list) < 0 || !list)
		return live ? running_only(name) : MOD_MISSING;
	kmod_list_foreach(l, list)
	{
		struct kmod_module *m = kmod_module_get_module(l);
		int init = live ? kmod_module_get_initstate(m) : -ENOENT;

		if (init == KMOD_MODULE_LIVE || init == KMOD_MODULE_COMING)
			st = MOD_LOADED;
		else if (init != KMOD_MODULE_BUILTIN && kmod_module_get_path(m))
			st = MOD_AVAILABLE;
		else /* built in, or found by lookup without a file: modules.builtin */
			st = MOD_BUILTIN;
		kmod_module_unref(m);
		if (st != MOD_MISSING)
			break;
	}
	kmod_module_unref_list(list);
	return st;
}

const char *mod_dir(void)
{
	return ctx ? kmod_get_dirname(ctx) : "(none)";
}
