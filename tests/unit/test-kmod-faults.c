// SPDX-License-Identifier: MIT
/*
 * Every libkmod call of src/boot/kmod.c failing, each with its outcome: src/boot/kmod.c linked with
 * the host's libkmod, with -Wl,--wrap= on kmod_new, kmod_load_resources,
 * kmod_module_new_from_lookup, kmod_module_get_initstate, kmod_module_get_path and
 * kmod_module_probe_insert_module (and kmod_set_log_fn, to speak as libkmod would). The last is never passed to libkmod: this test must not
 * load a module into the kernel it runs on; its wrapper answers as the kernel would. The
 * module tree is made here (tests/fixture/lib.sh: fx_kmod, fx_depmod with the real depmod).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libkmod.h>

#include "kmod.h"
#include "log.h"
#include "unit.h"

#define KVER "6.1.0-99-amd64"

/* What each wrapped call does: 0 passes through (insert: succeeds), else fails so. */
static struct {
	bool new_fails;
	int resources, lookup, initstate, insert;
	bool initstate_set; /* KMOD_MODULE_BUILTIN is 0 */
	bool no_path;
	int inserts;
} f;

struct kmod_ctx *__real_kmod_new(const char *dirname, const char *const *config_paths);
int __real_kmod_load_resources(struct kmod_ctx *ctx);
int __real_kmod_module_new_from_lookup(struct kmod_ctx *ctx, const char *given,
				       struct kmod_list **list);
const char *__real_kmod_module_get_path(const struct kmod_module *mod);

struct kmod_ctx *__wrap_kmod_new(const char *dirname, const char *const *config_paths)
{
	return f.new_fails ? NULL : __real_kmod_new(dirname, config_paths);
}

int __wrap_kmod_load_resources(struct kmod_ctx *ctx)
{
	return f.resources ? f.resources : __real_kmod_load_resources(ctx);
}

int __wrap_kmod_module_new_from_lookup(struct kmod_ctx *ctx, const char *given, struct kmod_list **list)
{
	return f.lookup ? f.lookup : __real_kmod_module_new_from_lookup(ctx, given, list);
}

/* Not the running kernel's /sys/module: what the test says (default: not loaded). */
int __wrap_kmod_module_get_initstate(const struct kmod_module *mod)
{
	(void)mod;
	return f.initstate_set ? f.initstate : -ENOENT;
}

const char *__wrap_kmod_module_get_path(const struct kmod_module *mod)
{
	return f.no_path ? NULL : __real_kmod_module_get_path(mod);
}

int __wrap_kmod_module_probe_insert_module(
	struct kmod_module *mod, unsigned int flags, const char *extra_options,
	int (*run_install)(struct kmod_module *m, const char *cmdline, void *data), const void *data,
	void (*print_action)(struct kmod_module *m, bool install, const char *options))
{
	(void)mod;
	(void)flags;
	(void)extra_options;
	(void)run_install;
	(void)data;
	(void)print_action;
	f.inserts++;
	return f.insert;
}

/* The log function kmod.c gives libkmod, to say what libkmod would through it. */
typedef void (*kmod_log_fn)(void *data, int priority, const char *file, int line, const char *fn,
			    const char *format, va_list args);
static kmod_log_fn log_fn;
static void *log_data;

void __real_kmod_set_log_fn(struct kmod_ctx *ctx, kmod_log_fn fn, const void *data);

void __wrap_kmod_set_log_fn(struct kmod_ctx *ctx, kmod_log_fn fn, const void *data)
{
	log_fn = fn;
	log_data = (void *)data;
	__real_kmod_set_log_fn(ctx, fn, data);
}

/* libkmod's ERR() and INFO() through the function kmod.c gave it. */
static void libkmod_says(int priority, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_fn(log_data, priority, "libkmod-module.c", 949, "kmod_module_insert_module", fmt, ap);
	va_end(ap);
}

/* What stderr shows of libkmod's message at gpuvm's verbosity max (log.h). */
static void forwarded(enum log_level max, char *out, size_t size)
{
	FILE *cap = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n = 0;

	fflush(stderr);
	dup2(fileno(cap), STDERR_FILENO);
	log_setup(false, max);
	libkmod_says(6, "Failed to insert module '%s': %s\n", "/lib/modules/x/vfio-pci.ko\x1b[2J",
		     "Operation not permitted");
	log_close();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(cap);
	n = fread(out, 1, size - 1, cap);
	out[n] = '\0';
	fclose(cap);
}

static char tmp[] = "/tmp/gpuvm-test-kmod-faults.XXXXXX";
static char dir[256];

static void reset(void)
{
	mod_fini();
	memset(&f, 0, sizeof(f));
}

static void load_case(const char *what, int want, int want_loaded, const char *msg_part, int want_inserts)
{
	char msg[200] = "";
	int loaded = -1, r;

	r = mod_load("vfio-pci", &loaded, msg, sizeof(msg));
	CHECK_INT(r, want, "%s: mod_load returns %d", what, want);
	CHECK_INT(loaded, want_loaded, "%s: loaded %d", what, want_loaded);
	CHECK(strstr(msg, msg_part) != NULL, "%s: the message says '%s' (it says '%s')", what,
	      msg_part, msg);
	CHECK_INT(f.inserts, want_inserts, "%s: %d insert(s) asked of the kernel", what, want_inserts);
}

int main(void)
{
	const char *top = getenv("GPUVM_TOP") ? getenv("GPUVM_TOP") : ".";
	char cmd[1024], name[64];

	if (!mkdtemp(tmp)) {
		printf("Bail out! mkdtemp failed\n");
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/lib/modules/" KVER, tmp);
	snprintf(cmd, sizeof(cmd),
		 ". '%s/tests/fixture/lib.sh' && R='%s' && fx_init \"$R\" --kver " KVER " && "
		 "fx_kmod \"$R\" vfio_pci 'alias=vfio_pci:v*d*sv*sd*bc*sc*i*' && fx_depmod \"$R\"",
		 top, tmp);
	if (system(cmd) != 0) {
		printf("Bail out! cannot build the module tree in %s\n", tmp);
		return 1;
	}

	/* Nothing fails: found, inserted (by the wrapper, not the kernel). */
	reset();
	CHECK_INT(mod_init(dir), 0, "clean: libkmod opens the tree");
	/* What libkmod says reaches gpuvm's log at debug level: -v shows it, masked, one line. */
	CHECK(log_fn != NULL, "libkmod is given gpuvm's log function");
	if (log_fn) {
		char got[512];

		forwarded(LOG_DEBUG, got, sizeof(got));
		CHECK_STR(got,
			  "gpuvm: libkmod: Failed to insert module '/lib/modules/x/vfio-pci.ko?[2J': Operation not permitted\n",
			  "libkmod's message under -v: prefixed, its newline and ESC gone");
		forwarded(LOG_INFO, got, sizeof(got));
		CHECK_STR(got, "", "libkmod's message without -v: not shown");
	}
	load_case("clean", 0, 1, "", 1);
	CHECK(mod_state("vfio-pci", true) == MOD_AVAILABLE, "clean: vfio-pci available");

	/* kmod_new fails: no module directory; nothing can be loaded or looked up. */
	reset();
	f.new_fails = true;
	CHECK_INT(mod_init(dir), -ENOMEM, "kmod_new fails: mod_init says -ENOMEM");
	load_case("kmod_new fails", -ENOENT, 0, "vfio-pci: no module directory", 0);
	CHECK(mod_state("vfio-pci", true) == MOD_MISSING, "kmod_new fails: state missing");
	CHECK(mod_vfio_variant("pci:v000010DEd00002342sv*sd*bc03sc02i00", name, sizeof(name)) < 0,
	      "kmod_new fails: no variant");

	/* The indexes cannot be loaded: libkmod reads the files; all works. */
	reset();
	f.resources = -ENOMEM;
	CHECK_INT(mod_init(dir), 0, "kmod_load_resources fails: mod_init still 0");
	load_case("kmod_load_resources fails", 0, 1, "", 1);

	/* The lookup fails: an error naming the module and the directory. */
	reset();
	CHECK_INT(mod_init(dir), 0, "lookup: init");
	f.lookup = -ENOMEM;
	load_case("lookup fails", -ENOMEM, 0, "vfio-pci: not found in the module directory", 0);
	CHECK(mod_state("vfio-pci", true) == MOD_MISSING, "lookup fails: state missing");
	CHECK(mod_vfio_variant("pci:v000010DEd00002342sv000010DEsd00001809bc03sc02i00", name,
			       sizeof(name)) == -ENOENT,
	      "lookup fails: no variant");

	/* The kernel refuses the module: its name, its path and the kernel's reason. */
	reset();
	CHECK_INT(mod_init(dir), 0, "insert: init");
	f.insert = -EPERM;
	load_case("insert -EPERM", -EPERM, 0, "Operation not permitted", 1);
	reset();
	CHECK_INT(mod_init(dir), 0, "insert: init");
	f.insert = -ENOEXEC;
	load_case("insert -ENOEXEC", -ENOEXEC, 0, "vfio_pci (", 1);
	reset();
	CHECK_INT(mod_init(dir), 0, "insert: init");
	f.insert = KMOD_PROBE_APPLY_BLACKLIST_ALIAS_ONLY;
	load_case("blacklisted", -EPERM, 0, "vfio_pci: blacklisted in modprobe.d", 1);
	reset();
	CHECK_INT(mod_init(dir), 0, "insert: init");
	f.insert = -ENOEXEC;
	f.no_path = true;
	load_case("insert fails, no path", -ENOEXEC, 0, "(no path)", 1);

	/* Already in the kernel, or built in: nothing asked of it. */
	reset();
	CHECK_INT(mod_init(dir), 0, "live: init");
	f.initstate = KMOD_MODULE_LIVE;
	f.initstate_set = true;
	load_case("already loaded", 0, 0, "", 0);
	CHECK(mod_state("vfio-pci", true) == MOD_LOADED, "already loaded: state loaded");
	reset();
	CHECK_INT(mod_init(dir), 0, "builtin: init");
	f.initstate = KMOD_MODULE_BUILTIN;
	f.initstate_set = true;
	load_case("built in", 0, 0, "", 0);
	CHECK(mod_state("vfio-pci", true) == MOD_BUILTIN, "built in: state builtin");

	reset();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmp);
	return unit_done();
}
