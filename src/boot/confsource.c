// SPDX-License-Identifier: MIT
/*
 * Where the settings come from, and the boot's wait for its config. On a running host the
 * host config is read once; settings are first taken from it quietly to learn config=;
 * then from the config on that disk (or, when it cannot be used, from the file again), and
 * that pass is the one that logs. At boot the initramfs's own /etc carries no host config
 * (one an earlier gpuvm baked in is ignored, and said so): the first call has the command
 * line alone, and the last reads the host config from the mounted root, or config='s disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "blkdev.h"
#include "cmdline.h"
#include "config.h"
#include "kmod.h"
#include "log.h"
#include "confsource.h"
#include "pending.h"
#include "rootio.h"
#include "tagspec.h"
#include "util.h"

const char *source_status_name(enum source_status st)
{
	static const char *const n[] = {
		[SRC_FILE] = "file",	     [SRC_DISK] = "disk",	[SRC_WAITING] = "waiting",
		[SRC_FALLBACK] = "fallback", [SRC_CMDLINE] = "cmdline", [SRC_HOLD] = "hold",
		[SRC_ROOT] = "root",
	};

	return n[st];
}

const char *root_config_name(enum root_config rc)
{
	static const char *const n[] = {
		[RC_NONE] = "pending",		[RC_READ] = "read",	  [RC_MISSING] = "missing",
		[RC_UNREADABLE] = "unreadable", [RC_NO_ROOT] = "no-root",
	};

	return n[rc];
}

/* The initramfs's host config (or --config FILE), read once a run. */
struct image_config {
	char *buf; /* NULL: none, or not read (err) */
	size_t len;
	const char *path;
	int err; /* 0, or why it could not be read (-ENOENT of CONFIG_PATH is 0) */
};

static void image_read(const char *config_file, bool boot, struct image_config *ic)
{
	memset(ic, 0, sizeof(*ic));
	if (boot) {
		ic->path = CONFIG_PATH; /* the initramfs's: never read at boot */
	} else {
		ic->path = config_file ? config_file : CONFIG_PATH;
		ic->err = root_read_config(config_file, &ic->buf, &ic->len);
		if (config_file)
			return;
		if (ic->err == -ENOENT)
			ic->err = 0; /* no host config: the command line and defaults decide */
	}
}

/* The settings from a config's text and the command line; what they say is logged if tell. */
static void load(struct settings *s, const char *cmdline, const char *buf, size_t len,
		 const char *path, bool tell)
{
	struct settings_input in = {
		.cmdline = cmdline,
		.config = buf,
		.config_len = len,
		.config_path = path,
	};
	struct settings_msgs m = { 0 };

	settings_load(s, &in, tell ? &m : NULL);
	settings_msgs_log(&m);
	settings_msgs_free(&m);
}

/*
 * The settings from the image's config (none at boot) and the command line: loaded once a
 * call, first, their messages kept in m for image_tell.
 */
static void image_load(struct settings *s, const char *cmdline, const struct image_config *ic,
		       struct settings_msgs *m)
{
	struct settings_input in = {
		.cmdline = cmdline,
		.config = ic->buf,
		.config_len = ic->len,
		.config_path = ic->path,
	};

	settings_load(s, &in, m);
}

/*
 * The image's settings decide: what their load found is told (if tell), the config's read
 * error first, in the place the load was the call's decision. Nothing is loaded again.
 */
static void image_tell(const struct image_config *ic, const struct settings_msgs *m, bool tell)
{
	char why[128];

	if (!tell)
		return;
	if (ic->err < 0) {
		config_read_why(ic->err, CONFIG_MAX_SIZE, why, sizeof(why));
		log_err("%s: %s; file ignored", ic->path, why);
	}
	settings_msgs_log(m);
}

struct retry_ctx {
	long seconds;
};

static int on_retry(const char *key, const char *value, void *data)
{
	struct retry_ctx *c = data;
	char *end;
	long v;

	if (!value || (!streq(key, "rd.retry") && !streq(key, "rd_retry")))
		return 0;
	v = strtol(value, &end, 10);
	if (end != value && *end == '\0' && v >= 0 && v <= 2L * CONFIG_TIMEOUT_MAX)
		c->seconds = v;
	return 0;
}

/* config_timeout=, else half of dracut's rd.retry (the boot gives up at rd.retry), else 90. */
static unsigned wait_seconds(const struct settings *s, const char *cmdline)
{
	struct retry_ctx c = { .seconds = -1 };

	if (s->from[KEY_CONFIG_TIMEOUT] != FROM_DEFAULT)
		return s->config_timeout_s;
	if (cmdline)
		cmdline_parse(cmdline, on_retry, &c);
	return c.seconds >= 0 ? (unsigned)(c.seconds / 2) : s->config_timeout_s;
}

/*
 * Why a tag that several devices carry is refused, and what names one of them: another tag
 * that every one of them has with a value of its own (not LABEL=: the one tag a person
 * chooses, and copies), else a device path. One UUID on two devices means one file system
 * was cloned (one PARTUUID, one partition table), and the reason says so.
 */
/* The separator before the i-th of n alternatives: "a=", "a=, b=", "a=, b= or c=". */
static const char *list_sep(size_t i, size_t n)
{
	if (!i)
		return "";
	return i + 1 < n ? ", " : " or ";
}

static const char *clones(unsigned same)
{
	if (same & (1u << TAG_UUID))
		return "the file systems are clones; ";
	if (same & (1u << TAG_PARTUUID))
		return "the partition tables are clones; ";
	return "";
}

static void ambiguous(const char *spec, const struct tag_spec *t, const struct blkdev_found *f,
		      char *buf, size_t size)
{
	static const enum tag_type better[] = { TAG_UUID, TAG_PARTUUID, TAG_PARTLABEL };
	const char *alt[3] = { NULL };
	char more[32] = "", by[64] = "";
	size_t i, n = 0, len;

	for (i = 0; i < ARRAY_SIZE(better); i++)
		if (better[i] != t->type && (f->apart & (1u << better[i])))
			alt[n++] = tag_name(better[i]);
	for (i = 0, len = 0; i < n; i++)
		len += (size_t)snprintf(by + len, sizeof(by) - len, "%s%s=", list_sep(i, n), alt[i]);
	if (f->matches > 2)
		snprintf(more, sizeof(more), " and %u more", f->matches - 2);
	fmt_cut(buf, size, "%s: %u devices carry it (%s, %s%s): %snone taken; name one by %s", spec,
		f->matches, f->dev, f->other, more, clones(f->same), n ? by : "its /dev path");
}

/*
 * Look for the disk and read the config from it: 0 with the buffer, -ENODEV when the device
 * is not there (yet), other -errno when it is there and cannot be used; why in src->reason.
 */
static int read_disk(bool under_root, const struct tag_spec *t, struct source *src, char **buf,
		     size_t *len)
{
	char spec[300];
	int r, loaded;

	tag_format(t, spec, sizeof(spec));
	r = blkdev_find(t, &src->found);
	switch (r) {
	case 0:
		break;
	case -ENOENT:
		fmt_cut(src->reason, sizeof(src->reason), "%s: no such device%s", spec,
			src->found.skipped_removable ? " (removable devices are not taken)" : "");
		return -ENODEV; /* not -ENOENT: that is a file missing on the device */
	case -ENOTUNIQ:
		ambiguous(spec, t, &src->found, src->reason, sizeof(src->reason));
		return r;
	case -ENOMEDIUM:
		fmt_cut(src->reason, sizeof(src->reason), "%s: libblkid finds no file system on %s",
			spec, src->found.dev);
		return r;
	case -ENOTBLK:
		fmt_cut(src->reason, sizeof(src->reason), "%s: not a block device", spec);
		return r;
	default:
		fmt_cut(src->reason, sizeof(src->reason), "%s: cannot look for it: %s", spec,
			strerror(-r));
		return r;
	}
	if (under_root) {
		fmt_cut(src->reason, sizeof(src->reason),
			"%s: found on %s (%s); --root mounts no file system", spec, src->found.dev,
			src->found.fstype);
		return -EPERM;
	}
	/* The file system's module, if it is one (mount cannot load it without modprobe). */
	mod_init(NULL);
	if (mod_load(src->found.fstype, &loaded, spec, sizeof(spec)) < 0)
		log_debug("no module for file system %s: %s", src->found.fstype, spec);
	r = blkdev_read_config(&src->found, t, CONFIG_MAX_SIZE, buf, len, src->reason,
			       sizeof(src->reason));
	return r;
}

/*
 * The root's config, read where the generator mounted the real root: 0 with the buffer,
 * -ENOENT for no file; else why in src->reason (RC_NO_ROOT: -ENOTDIR).
 */
static int read_root(const char *sysroot, struct source *src, char **buf, size_t *len)
{
	int r;

	strscpy(src->sysroot, sysroot, sizeof(src->sysroot));
	r = root_dir_at(sysroot, NULL);
	if (r < 0) {
		snprintf(src->reason, sizeof(src->reason), "the root is not there: %s: %s", sysroot,
			 strerror(-r));
		return -ENOTDIR;
	}
	/* A root still unmounted is the initramfs's own directory, where no /etc/gpuvm is. */
	if (root_dir_at(sysroot, "etc") < 0) {
		snprintf(src->reason, sizeof(src->reason),
			 "the root is not there: %s has no /etc (not mounted?)", sysroot);
		return -ENOTDIR;
	}
	r = root_read_file_at(sysroot, &CONFIG_PATH[1], CONFIG_MAX_SIZE, ROOT_FILE_OWN, buf, len);
	if (r < 0 && r != -ENOENT) {
		char why[128];

		config_read_why(r, CONFIG_MAX_SIZE, why, sizeof(why));
		snprintf(src->reason, sizeof(src->reason), "%s%s: %s", sysroot, CONFIG_PATH, why);
	}
	return r;
}

/* Whether dir is the directory gpuvm runs in (--sysroot / without root=: the image is the root). */
static bool same_dir(const char *dir)
{
	return root_is(dir);
}

/* What becomes of the GPUs when the root's config cannot be read: the line's, or on_error's. */
static const char *root_unread_outcome(const struct settings *s)
{
	if (settings_mode_pinned(s))
		return "the kernel command line decides";
	if (s->on_error == ON_ERROR_HOLD)
		return "the GPUs stay held (on_error=hold)";
	return "the GPUs go to the host driver (on_error=release)";
}

/*
 * The boot without config=. First call: the command line alone; the mode on it acts now,
 * else the GPUs are held. Last call (--sysroot): the root's config under the command line.
 */
static void boot_root(struct settings *s, struct source *src, const char *cmdline,
		      enum source_policy pol, const char *sysroot, const struct image_config *ic,
		      const struct settings_msgs *first)
{
	char *buf = NULL;
	size_t len = 0;
	int r;

	if (pol == SRC_RESUME && !sysroot && pending_read(src) != -ENOENT) {
		/* A wait for config='s disk whose config= is gone: decided by the line now. */
		image_tell(ic, first, true);
		src->status = SRC_CMDLINE;
		return;
	}
	if (pol == SRC_DEFER || !sysroot) {
		image_tell(ic, first, pol == SRC_DEFER);
		src->status = settings_mode_pinned(s) ? SRC_CMDLINE : SRC_HOLD;
		return;
	}
	root_pending_read(src); /* what the first call held */
	src->status = SRC_ROOT;
	src->baked = !same_dir(sysroot) && root_exists(&CONFIG_PATH[1]);
	if (src->baked)
		log_warn("%s in this initramfs is ignored: the host config is the root's (an image an earlier gpuvm built carries a copy; rebuilding it drops the copy)",
			 CONFIG_PATH);
	r = read_root(sysroot, src, &buf, &len);
	if (r == 0) {
		src->root = RC_READ;
		log_info("config: %s read from the root at %s", CONFIG_PATH, sysroot);
		load(s, cmdline, buf, len, CONFIG_PATH, true);
		free(buf);
		if (s->from[KEY_CONFIG] == FROM_CONFIG) {
			log_warn("%s: config= in the root's config is ignored: the root is read already (config= belongs on the kernel command line)",
				 settings_source(s, KEY_CONFIG));
			s->config[0] = '\0';
			settings_set_from(s, KEY_CONFIG, FROM_DEFAULT, NULL);
		}
		return;
	}
	image_tell(ic, first, true); /* the root's config unread: the first load stands */
	if (r == -ENOENT) {
		src->root = RC_MISSING;
		log_info("config: no %s on the root at %s: %s", CONFIG_PATH, sysroot,
			 settings_mode_pinned(s) ? "the kernel command line decides" :
						   "no mode is set");
		return;
	}
	src->root = r == -ENOTDIR ? RC_NO_ROOT : RC_UNREADABLE;
	log_warn("config: %s; %s", src->reason, root_unread_outcome(s));
}

void source_resolve(const char *config_file, bool under_root, const char *cmdline,
		    enum source_policy pol, const char *sysroot, struct settings *s, struct source *src)
{
	struct image_config ic;
	struct tag_spec t;
	const char *why;
	char *disk = NULL, spec[300], config_where[SOURCE_LEN];
	enum set_from config_from;
	struct settings_msgs first = { 0 };
	size_t disk_len = 0;
	unsigned long long now;
	bool boot = pol == SRC_DEFER || pol == SRC_RESUME;
	int r;

	memset(src, 0, sizeof(*src));
	src->boot = boot;
	image_read(config_file, boot, &ic);
	image_load(s, cmdline, &ic, &first); /* is there a config=? told where it decides */
	config_from = s->from[KEY_CONFIG];
	strscpy(config_where, s->where[KEY_CONFIG], sizeof(config_where));
	if (pol == SRC_NO_DISK || !s->config[0] || tag_parse(s->config, &t, &why) < 0) {
		if (boot)
			boot_root(s, src, cmdline, pol, sysroot, &ic, &first);
		else
			image_tell(&ic, &first, true);
		goto out;
	}
	src->baked = pol == SRC_DEFER && root_exists(&CONFIG_PATH[1]);
	if (src->baked)
		log_warn("%s in this initramfs is ignored: config= says where the host config is",
			 CONFIG_PATH);
	strscpy(src->spec, s->config, sizeof(src->spec));
	src->timeout_s = wait_seconds(s, cmdline);
	if (pol == SRC_RESUME || pol == SRC_DEFER) {
		now = clock_ms(CLOCK_BOOTTIME);
		r = pending_read(src);
		/* Past the longest wait any call sets: written by hand, or corrupted. */
		if (r == 0 && src->deadline_ms > now + CONFIG_TIMEOUT_MAX * 1000ULL) {
			log_err("/run/gpuvm/pending: its deadline is %llu s ahead, past the longest config_timeout (%d s): taken as over",
				(src->deadline_ms - now) / 1000, CONFIG_TIMEOUT_MAX);
			r = -ERANGE;
		}
		if (r < 0 && pol == SRC_RESUME)
			src->deadline_ms = 0; /* no (good) record: decide now */
		else if (r < 0)
			src->deadline_ms = now + (unsigned long long)src->timeout_s * 1000ULL;
	}

	r = read_disk(under_root, &t, src, &disk, &disk_len);
	now = clock_ms(CLOCK_BOOTTIME);
	if (r == 0) {
		src->status = SRC_DISK;
		tag_format(&t, spec, sizeof(spec));
		log_info("config: %s is on %s (%s)", spec, src->found.dev, src->found.fstype);
		load(s, cmdline, disk, disk_len, spec, true);
		free(disk);
		/* The disk's config cannot send gpuvm further: config= keeps its first source. */
		if (s->from[KEY_CONFIG] == FROM_CONFIG)
			log_warn("%s: config= in a config read from a disk is ignored",
				 settings_source(s, KEY_CONFIG));
		strscpy(s->config, src->spec, sizeof(s->config));
		settings_set_from(s, KEY_CONFIG, config_from, config_where);
		goto out;
	}
	if (r == -ENODEV && pol != SRC_LOOK && src->timeout_s > 0 && now < src->deadline_ms) {
		/* --resume polls: the settings were logged when the wait began. */
		src->status = SRC_WAITING;
		image_tell(&ic, &first, pol != SRC_RESUME);
		goto out;
	}
	if (r == -ENODEV && pol != SRC_LOOK && src->timeout_s > 0)
		snprintf(src->reason + strlen(src->reason), sizeof(src->reason) - strlen(src->reason),
			 " after waiting %u s", src->timeout_s);
	src->status = SRC_FALLBACK;
	image_tell(&ic, &first, true);
	log_err("config: %s; using %s", src->reason,
		ic.buf ? ic.path : "the kernel command line and the defaults");
out:
	settings_msgs_free(&first);
	free(ic.buf);
}
