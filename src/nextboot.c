// SPDX-License-Identifier: MIT
/*
 * What the next boot will run (nextboot.h): the installed kernels' initramfs images, read
 * as the kernel reads them (cpio.c), and the boot line the boot loader's files give them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmdline.h"
#include "config.h"
#include "cpio.h"
#include "nextboot.h"
#include "rootio.h"
#include "settings.h"
#include "util.h"

#define KERNELS_MAX 32
#define CMDLINE_D_MAX 4096
#define READ_TIMEOUT_MS 30000
#define READ_MAX_OUT (2ULL << 30)

/* The boot line of one boot loader's files: its gpuvm words, and where gpuvm.mode= is set. */
struct line {
	char words[512];
	char mode[NB_MODE];
	char source[NB_TEXT];
	bool unknown;
};

/* Keep the gpuvm words of a command line (quoted, so that a value may hold a blank). */
static int keep_word(const char *key, const char *value, void *data)
{
	struct line *l = data;
	char name[32];
	size_t len = strlen(l->words);

	if (!value || !cmdline_key(key, "gpuvm", name, sizeof(name)) || strchr(value, '"'))
		return 0;
	if (streq(name, "mode"))
		strscpy(l->mode, value, sizeof(l->mode));
	snprintf(l->words + len, sizeof(l->words) - len, " %s=\"%s\"", key, value);
	return 0;
}

static void line_of(struct line *l, const char *text, const char *source)
{
	char was[NB_MODE];

	strscpy(was, l->mode, sizeof(was));
	l->mode[0] = '\0';
	cmdline_parse(text, keep_word, l);
	if (l->mode[0])
		snprintf(l->source, sizeof(l->source), "%s", source);
	else
		strscpy(l->mode, was, sizeof(l->mode));
}

/* A small text file under the root, whole; NULL when absent or unreadable. */
static char *slurp(int dirfd, const char *path, size_t *len)
{
	char *buf = NULL;
	size_t n;

	if (config_read(dirfd, path, &buf, len ? len : &n) < 0)
		return NULL;
	return buf;
}

/* GRUB's two command-line variables, as sh would leave them after the files in order. */
struct grubvar {
	const char *name;
	char val[1024];
	char mode_source[NB_TEXT]; /* the file whose assignment put gpuvm.mode= there */
	char unknown[NB_TEXT];	   /* the assignment that could not be read, or "" */
};

/*
 * The value of a simple sh assignment (NAME="..." | '...' | word, and such glued together):
 * "$NAME" and "${NAME}" of the two variables expand; any other $ or ` makes it unknown.
 */
static int sh_value(const char *p, struct grubvar *v, char *out, size_t size)
{
	size_t o = 0;
	char q = 0;

	for (; *p && (q || (*p != ' ' && *p != '\t' && *p != '#')); p++) {
		if (!q && (*p == '"' || *p == '\'')) {
			q = *p;
			continue;
		}
		if (q && *p == q) {
			q = 0;
			continue;
		}
		if (q != '\'' && *p == '\\' && p[1]) {
			p++;
		} else if (q != '\'' && *p == '`') {
			return -EINVAL;
		} else if (q != '\'' && *p == '$') {
			bool brace = p[1] == '{';
			const char *n = p + 1 + brace;
			size_t i, len = 0;

			while ((n[len] >= 'A' && n[len] <= 'Z') || n[len] == '_')
				len++;
			if (brace && n[len] != '}')
				return -EINVAL;
			for (i = 0; i < 2; i++)
				if (len == strlen(v[i].name) && !strncmp(n, v[i].name, len))
					break;
			if (i == 2 || v[i].unknown[0])
				return -EINVAL;
			o += (size_t)snprintf(out + o, o < size ? size - o : 0, "%s", v[i].val);
			p = n + len - 1 + brace;
			continue;
		}
		if (o + 1 < size)
			out[o++] = *p;
	}
	if (q)
		return -EINVAL;
	out[o < size ? o : size - 1] = '\0';
	return o < size ? 0 : -E2BIG;
}

static void grub_file(struct grubvar *v, const char *path)
{
	char *buf = slurp(root_fd(), path, NULL), *s, *e, val[1024];
	unsigned line = 0;

	for (s = buf; s && *s; s = e) {
		size_t i;

		e = s + strcspn(s, "\n");
		if (*e)
			*e++ = '\0';
		line++;
		s += strspn(s, " \t");
		if (startswith(s, "export "))
			s += 7;
		for (i = 0; i < 2; i++) {
			size_t len = strlen(v[i].name);

			if (strncmp(s, v[i].name, len) != 0 || s[len] != '=')
				continue;
			if (sh_value(s + len + 1, v, val, sizeof(val)) < 0) {
				snprintf(v[i].unknown, sizeof(v[i].unknown), "/%s:%u", path, line);
				break;
			}
			v[i].unknown[0] = '\0';
			strscpy(v[i].val, val, sizeof(v[i].val));
			if (strstr(s + len + 1, "gpuvm.mode="))
				snprintf(v[i].mode_source, sizeof(v[i].mode_source), "/%s:%u", path,
					 line);
			else if (!strstr(val, "gpuvm.mode="))
				v[i].mode_source[0] = '\0';
			break;
		}
	}
	free(buf);
}

struct names {
	char (*v)[64];
	size_t n, cap;
	const char *suffix;
};

static int collect(const char *name, void *data)
{
	struct names *l = data;
	size_t i, len = strlen(name), sl = l->suffix ? strlen(l->suffix) : 0;

	if (len >= 64 || len < sl || (sl && !streq(name + len - sl, l->suffix)))
		return 0;
	for (i = 0; i < l->n; i++)
		if (streq(l->v[i], name))
			return 0;
	if (l->n < l->cap)
		strscpy(l->v[l->n++], name, 64);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void list_sorted(const char *dir, struct names *l)
{
	root_list(dir, collect, l);
	qsort(l->v, l->n, sizeof(*l->v), name_cmp);
}

/* GRUB's defaults: /etc/default/grub, then /etc/default/grub.d/ *.cfg (Debian's grub-mkconfig). */
static void grub_line(struct line *l)
{
	struct grubvar v[2] = { { .name = "GRUB_CMDLINE_LINUX" },
				{ .name = "GRUB_CMDLINE_LINUX_DEFAULT" } };
	char cfg[32][64], path[128], all[2100];
	struct names n = { cfg, 0, 32, ".cfg" };
	size_t i;

	grub_file(v, "etc/default/grub");
	list_sorted("etc/default/grub.d", &n);
	for (i = 0; i < n.n; i++) {
		snprintf(path, sizeof(path), "etc/default/grub.d/%s", cfg[i]);
		grub_file(v, path);
	}
	for (i = 0; i < 2; i++)
		if (v[i].unknown[0]) {
			l->unknown = true;
			snprintf(l->source, sizeof(l->source), "%s at %s uses $ or `", v[i].name,
				 v[i].unknown);
		}
	snprintf(all, sizeof(all), "%s %s", v[0].val, v[1].val);
	cmdline_parse(all, keep_word, l);
	if (l->mode[0])
		strscpy(l->source, v[1].mode_source[0] ? v[1].mode_source : v[0].mode_source,
			sizeof(l->source));
}

/* A BLS entry (/boot/loader/entries/NAME.conf): its kernel, initrd and options. */
struct bls {
	char version[96], initrd[128];
	struct line l;
};

static void bls_entry(struct bls *b, const char *name)
{
	char path[160], *buf, *s, *e;

	snprintf(path, sizeof(path), "boot/loader/entries/%s", name);
	buf = slurp(root_fd(), path, NULL);
	for (s = buf; s && *s; s = e) {
		e = s + strcspn(s, "\n");
		if (*e)
			*e++ = '\0';
		s += strspn(s, " \t");
		rstrip(s);
		if (startswith(s, "version "))
			strscpy(b->version, s + 8 + strspn(s + 8, " \t"), sizeof(b->version));
		else if (startswith(s, "linux ") && !b->version[0] && strstr(s, "vmlinuz-"))
			strscpy(b->version, strstr(s, "vmlinuz-") + 8, sizeof(b->version));
		else if (startswith(s, "initrd "))
			strscpy(b->initrd, s + 7 + strspn(s + 7, " \t"), sizeof(b->initrd));
		else if (startswith(s, "options ")) {
			if (strpbrk(s, "$`")) {
				b->l.unknown = true;
				snprintf(b->l.source, sizeof(b->l.source),
					 "/%s: its options use $ or `", path);
			}
			line_of(&b->l, s + 8, path);
			if (b->l.mode[0])
				snprintf(b->l.source, sizeof(b->l.source), "/%s", path);
		}
	}
	free(buf);
}

/* What an image holds that matters here. */
struct scan {
	bool bin, hook, dracut, itools;
	char *conf; /* its etc/gpuvm/gpuvm.conf */
	size_t conf_len;
	char cmdline_d[CMDLINE_D_MAX];
};

static const char *member_name(const char *name)
{
	while (name[0] == '.' && name[1] == '/')
		name += 2;
	while (name[0] == '/')
		name++;
	return name;
}

static size_t on_member(const char *name, unsigned long size, void *arg)
{
	struct scan *sc = arg;
	const char *base;

	(void)size;
	name = member_name(name);
	base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (streq(name, "usr/sbin/gpuvm") || streq(name, "sbin/gpuvm") ||
	    streq(name, "usr/bin/gpuvm") || streq(name, "bin/gpuvm"))
		sc->bin = true;
	if ((strstr(name, "hooks/") && strstr(base, "gpuvm")) ||
	    (startswith(name, "scripts/") && streq(base, "gpuvm")))
		sc->hook = true;
	if (startswith(name, "usr/lib/dracut/") || startswith(name, "var/lib/dracut/"))
		sc->dracut = true;
	if (startswith(name, "scripts/"))
		sc->itools = true;
	if (streq(name, "etc/gpuvm/gpuvm.conf"))
		return CONFIG_MAX_SIZE;
	if (startswith(name, "etc/cmdline.d/") && !strchr(base, '/') && strlen(base) > 5 &&
	    streq(base + strlen(base) - 5, ".conf"))
		return CMDLINE_D_MAX;
	return 0;
}

static void on_data(const char *name, const char *buf, size_t len, void *arg)
{
	struct scan *sc = arg;
	size_t have = strlen(sc->cmdline_d);

	if (streq(member_name(name), "etc/gpuvm/gpuvm.conf")) {
		free(sc->conf);
		sc->conf = malloc(len + 1);
		if (sc->conf) {
			memcpy(sc->conf, buf, len);
			sc->conf[len] = '\0';
			sc->conf_len = len;
		}
		return;
	}
	snprintf(sc->cmdline_d + have, sizeof(sc->cmdline_d) - have, " %.*s", (int)len, buf);
}

/* The mode of a config text alone ("" when it sets none), or with the boot line. */
static void mode_of(const char *cmdline, const char *conf, size_t len, const char *path,
		    struct settings *s)
{
	struct settings_input in = {
		.cmdline = cmdline, .config = conf, .config_len = conf ? len : 0, .config_path = path
	};

	settings_load(s, &in, NULL);
}

/* Does the host config give any key another value than s (the baked copy's) does? */
static int differ(const struct settings *s, const char *host, size_t host_len, bool *stale)
{
	struct settings *h = malloc(sizeof(*h));
	char a[SETTINGS_VALUE_MAX], b[SETTINGS_VALUE_MAX];
	int k;

	if (!h)
		return -ENOMEM;
	mode_of(NULL, host, host_len, "x", h);
	*stale = false;
	for (k = 0; k < KEY__MAX && !*stale; k++) {
		settings_value(s, (enum setting_key)k, a, sizeof(a));
		settings_value(h, (enum setting_key)k, b, sizeof(b));
		*stale = !streq(a, b);
	}
	free(h);
	return 0;
}

/* Judge one image: has it gpuvm, and with which mode will its boot run? */
__attribute__((noinline)) static int judge_image(struct nb_image *im, const char *host, size_t host_len)
{
	static const struct cpio_visit visit = { on_member, on_data, NULL };
	struct cpio_visit v = visit;
	struct scan *sc = calloc(1, sizeof(*sc));
	struct settings *s = malloc(sizeof(*s));
	char why[NB_TEXT], where[NB_TEXT + 32], *cmd = NULL;
	int fd, r = 0;

	if (!sc || !s) {
		r = -ENOMEM;
		goto out;
	}
	v.arg = sc;
	fd = openat(root_fd(), im->path + 1, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		im->gpuvm = 0;
		snprintf(im->why, sizeof(im->why), "no initramfs for kernel %s (%s: %s)",
			 im->kernel, im->path, strerror(errno));
		goto out;
	}
	r = cpio_read_image(fd, &v, READ_TIMEOUT_MS, READ_MAX_OUT, why, sizeof(why));
	close(fd);
	if (r == -ENOMEM)
		goto out;
	if (r < 0) {
		im->gpuvm = -1;
		snprintf(im->why, sizeof(im->why), "%s cannot be read: %s", im->path, why);
		r = 0;
		goto out;
	}
	im->gpuvm = sc->bin && (sc->hook || !(sc->dracut || sc->itools));
	im->gen = sc->dracut ? NB_GEN_DRACUT : sc->itools ? NB_GEN_ITOOLS : NB_GEN_UNKNOWN;
	if (!sc->bin)
		snprintf(im->why, sizeof(im->why), "%s has no gpuvm", im->path);
	else if (!im->gpuvm)
		snprintf(im->why, sizeof(im->why), "%s has gpuvm but no hook that runs it", im->path);
	if (asprintf(&cmd, "%s %s", sc->cmdline_d, im->line) < 0) {
		cmd = NULL;
		r = -ENOMEM;
		goto out;
	}
	mode_of(NULL, sc->conf, sc->conf_len, "x", s);
	if (!streq(s->source[KEY_MODE], "default"))
		strscpy(im->config_mode, mode_name(s->mode), sizeof(im->config_mode));
	r = differ(s, host, host_len, &im->stale);
	if (r < 0)
		goto out;
	snprintf(where, sizeof(where), "%s:/etc/gpuvm/gpuvm.conf", im->path);
	mode_of(cmd, sc->conf, sc->conf_len, where, s);
	if (streq(s->source[KEY_MODE], "cmdline")) {
		if (im->line_mode[0])
			snprintf(im->mode_source, sizeof(im->mode_source), "the boot line (%s)",
				 im->line_source);
		else
			snprintf(im->mode_source, sizeof(im->mode_source), "%s:/etc/cmdline.d",
				 im->path);
	} else if (s->config[0]) {
		/* config= names a disk: the boot reads the host config from it, not the copy. */
		im->from_disk = true;
		im->stale = false;
		snprintf(im->mode_source, sizeof(im->mode_source),
			 "the host config, read from config=%s", s->config);
		mode_of(cmd, host, host_len, "host", s);
	} else if (streq(s->source[KEY_MODE], "default")) {
		snprintf(im->mode_source, sizeof(im->mode_source), "the default (%s holds %s)",
			 im->path, sc->conf ? "a config without mode=" : "no config");
	} else {
		strscpy(im->mode_source, s->source[KEY_MODE], sizeof(im->mode_source));
	}
	strscpy(im->mode, mode_name(s->mode), sizeof(im->mode));
out:
	free(cmd);
	if (sc)
		free(sc->conf);
	free(sc);
	free(s);
	return r;
}

/* "/boot" or "" before path (a BLS path, relative to its partition), if it is there. */
static bool at(char *out, size_t size, const char *dir, const char *path, const char *suffix)
{
	snprintf(out, size, "%s%s%s%s", dir, path[0] == '/' ? "" : "/", path, suffix);
	return root_exists(out + 1);
}

/* The image of kernel ver, and its boot line; false when the kernel is not a bootable one. */
static bool find_image(struct nb_image *im, const char *ver, const struct bls *b, size_t nb,
		       const struct line *grub)
{
	const struct line *l = grub;
	char vml[160], name[128];
	size_t i;
	bool found;

	strscpy(im->kernel, ver, sizeof(im->kernel));
	for (i = 0; i < nb; i++)
		if (streq(b[i].version, ver) && b[i].initrd[0])
			break;
	if (i < nb) {
		/* BLS paths are relative to the partition of the entries: /boot or the root. */
		l = &b[i].l;
		found = at(im->path, sizeof(im->path), "", b[i].initrd, "") ||
			at(im->path, sizeof(im->path), "/boot", b[i].initrd, "");
	} else {
		snprintf(name, sizeof(name), "initramfs-%s", ver);
		found = at(im->path, sizeof(im->path), "/boot", name, ".img");
		snprintf(name, sizeof(name), "initrd.img-%s", ver);
		found = found || at(im->path, sizeof(im->path), "/boot", name, "");
		snprintf(name, sizeof(name), "vmlinuz-%s", ver);
		found = found || at(vml, sizeof(vml), "/boot", name, "");
	}
	strscpy(im->line, l->words, sizeof(im->line));
	strscpy(im->line_mode, l->mode, sizeof(im->line_mode));
	strscpy(im->line_source, l->source, sizeof(im->line_source));
	im->line_unknown = l->unknown;
	return found || i < nb;
}

static void summary(struct nextboot *nb)
{
	size_t i;

	nb->gpuvm = nb->n ? 1 : -1;
	if (!nb->n)
		strscpy(nb->why, "no initramfs of an installed kernel found under /boot",
			sizeof(nb->why));
	for (i = 0; i < nb->n; i++) {
		const struct nb_image *im = &nb->img[i];

		if (im->gpuvm == 0 && nb->gpuvm != 0) {
			nb->gpuvm = 0;
			strscpy(nb->why, im->why, sizeof(nb->why));
		} else if (im->gpuvm < 0 && nb->gpuvm == 1) {
			nb->gpuvm = -1;
			strscpy(nb->why, im->why, sizeof(nb->why));
		}
		if (!nb->cmdline_mode[0] && !nb->cmdline_unknown &&
		    (im->line_mode[0] || im->line_unknown)) {
			strscpy(nb->cmdline_mode, im->line_mode, sizeof(nb->cmdline_mode));
			strscpy(nb->cmdline_source, im->line_source, sizeof(nb->cmdline_source));
			nb->cmdline_unknown = !im->line_mode[0];
		}
	}
	if (nb->gpuvm != 1)
		return;
	strscpy(nb->mode, nb->img[0].mode, sizeof(nb->mode));
	strscpy(nb->mode_source, nb->img[0].mode_source, sizeof(nb->mode_source));
	for (i = 1; i < nb->n; i++)
		if (!streq(nb->img[i].mode, nb->mode)) {
			snprintf(nb->why, sizeof(nb->why), "%s boots %s, %s %s", nb->img[0].path,
				 nb->mode, nb->img[i].path, nb->img[i].mode);
			nb->mode[0] = '\0';
			nb->mode_source[0] = '\0';
			break;
		}
}

/*
 * The host's generator: the kernel hook that builds an image when a kernel is installed
 * (Debian's dracut and initramfs-tools packages, and kernel-install's dracut plugin on
 * RHEL and Fedora), else the one tool present, else what the images say.
 */
static enum nb_generator host_generator(const struct nextboot *nb)
{
	bool d = root_exists("etc/kernel/postinst.d/dracut") ||
		root_exists("usr/lib/kernel/install.d/50-dracut.install");
	bool i = root_exists("etc/kernel/postinst.d/initramfs-tools");
	size_t k;

	if (d != i)
		return d ? NB_GEN_DRACUT : NB_GEN_ITOOLS;
	d = root_exists("usr/bin/dracut") || root_exists("usr/sbin/dracut");
	i = root_exists("usr/sbin/update-initramfs");
	if (d != i)
		return d ? NB_GEN_DRACUT : NB_GEN_ITOOLS;
	for (k = 0; k < nb->n; k++)
		if (nb->img[k].gen != NB_GEN_UNKNOWN)
			return nb->img[k].gen;
	return NB_GEN_UNKNOWN;
}

void nextboot_rebuild(const struct nextboot *nb, const char *kernel, char *buf, size_t size)
{
	switch (nb->gen) {
	case NB_GEN_DRACUT:
		if (kernel)
			snprintf(buf, size, "dracut -f --kver %s", kernel);
		else
			snprintf(buf, size, "dracut -f --regenerate-all");
		break;
	case NB_GEN_ITOOLS:
		snprintf(buf, size, "update-initramfs -u -k %s", kernel ? kernel : "all");
		break;
	default:
		snprintf(buf, size, "dracut -f or update-initramfs -u");
		break;
	}
}

const char *nextboot_joins(const struct nextboot *nb)
{
	switch (nb->gen) {
	case NB_GEN_DRACUT:
		return "gpuvm's dracut module joins by itself for a VM mode; else add_dracutmodules+=\" gpuvm \"";
	case NB_GEN_ITOOLS:
		return "gpuvm's initramfs-tools hook joins every image while it is installed";
	default:
		return "gpuvm's dracut module joins by itself for a VM mode, its initramfs-tools hook always";
	}
}

int nextboot_judge(struct nextboot *nb, int conf_dirfd, const char *conf_path)
{
	char kv[KERNELS_MAX][64], ent[32][64], *host;
	struct names k = { kv, 0, KERNELS_MAX, NULL }, e = { ent, 0, 32, ".conf" };
	struct bls *b = calloc(32, sizeof(*b));
	struct line *grub = calloc(1, sizeof(*grub));
	size_t i, host_len = 0;
	int r = 0;

	memset(nb, 0, sizeof(*nb));
	if (!b || !grub) {
		free(b);
		free(grub);
		return -ENOMEM;
	}
	host = slurp(conf_dirfd, conf_path, &host_len);
	grub_line(grub);
	if (!grub->mode[0]) {
		char *kc = slurp(root_fd(), "etc/kernel/cmdline", NULL);

		if (kc)
			line_of(grub, kc, "/etc/kernel/cmdline");
		free(kc);
	}
	list_sorted("boot/loader/entries", &e);
	for (i = 0; i < e.n; i++)
		bls_entry(&b[i], ent[i]);
	list_sorted("lib/modules", &k);
	list_sorted("usr/lib/modules", &k);
	for (i = 0; i < k.n && r == 0; i++) {
		struct nb_image *im = &nb->img[nb->n];

		if (nb->n == NB_IMAGES_MAX) {
			nb->more++;
			continue;
		}
		if (!find_image(im, kv[i], b, e.n, grub)) {
			memset(im, 0, sizeof(*im));
			continue;
		}
		nb->n++;
		r = judge_image(im, host, host_len);
	}
	if (r == 0)
		summary(nb);
	nb->gen = host_generator(nb);
	free(host);
	free(b);
	free(grub);
	return r;
}
