// SPDX-License-Identifier: MIT
/*
 * What the next boot will make of the host config (nextboot.h): this boot's
 * /run/gpuvm/boot.json, and the kernel command line the boot loader's files give.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <unistd.h>

#include "cmdline.h"
#include "config.h"
#include "json.h"
#include "names.h"
#include "nextboot.h"
#include "rootio.h"
#include "settings.h"
#include "util.h"

#define BOOT_JSON "run/gpuvm/boot.json"
#define BOOT_JSON_MAX ((size_t)1024 * 1024) /* the state file's limit: the same report */
#define BOOT_ID "proc/sys/kernel/random/boot_id"

/* A string that grows; err once an allocation failed. */
struct buf {
	char *s;
	size_t n, cap;
	bool err;
};

static void buf_add(struct buf *b, const char *s, size_t n)
{
	size_t cap = b->cap ? b->cap : 64;
	char *t;

	if (b->err)
		return;
	if (b->n + n + 1 > b->cap) {
		while (cap < b->n + n + 1)
			cap *= 2;
		t = realloc(b->s, cap);
		if (!t) {
			b->err = true;
			return;
		}
		b->s = t;
		b->cap = cap;
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

static int words_add(struct nb_words *l, const char *key, const char *value, const char *source)
{
	struct nb_word *w;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;

		w = realloc(l->w, cap * sizeof(*w));
		if (!w)
			return -ENOMEM;
		l->w = w;
		l->cap = cap;
	}
	w = &l->w[l->n];
	w->key = strdup(key);
	w->value = strdup(value);
	w->source = strdup(source);
	if (!w->key || !w->value || !w->source) {
		free(w->key);
		free(w->value);
		free(w->source);
		return -ENOMEM;
	}
	l->n++;
	return 0;
}

static void words_free(struct nb_words *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->w[i].key);
		free(l->w[i].value);
		free(l->w[i].source);
	}
	free(l->w);
	memset(l, 0, sizeof(*l));
}

/* The gpuvm words of one boot line: a key given twice in it counts once, the last. */
struct collect {
	struct nb_words *l;
	size_t first; /* where this line's words start in l */
	const char *source;
};

static int on_word(const char *key, const char *value, void *data)
{
	struct collect *c = data;
	char name[64], *v;
	size_t i;

	if (!value || !cmdline_key(key, "gpuvm", name, sizeof(name)))
		return 0;
	for (i = c->first; i < c->l->n; i++) {
		if (!streq(c->l->w[i].key, name))
			continue;
		v = strdup(value);
		if (!v)
			return -ENOMEM;
		free(c->l->w[i].value);
		c->l->w[i].value = v;
		return 0;
	}
	return words_add(c->l, name, value, c->source);
}

static int line_words(struct nb_words *l, const char *text, const char *source)
{
	struct collect c = { l, l->n, source };

	return cmdline_parse(text, on_word, &c);
}

/* The first boot line that could not be read whole: why. */
__attribute__((format(printf, 2, 3))) static int set_unknown(struct nextboot *nb, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (nb->unknown)
		return 0;
	va_start(ap, fmt);
	r = vasprintf(&nb->unknown, fmt, ap);
	va_end(ap);
	if (r < 0) {
		nb->unknown = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* A text file under the root, whole: 0, -ENOENT, or another -errno (*buf then NULL). */
static int slurp(const char *path, char **buf, size_t *len)
{
	size_t n;

	return root_read_file(path, CONFIG_MAX_SIZE, ROOT_FILE_LINKS, buf, len ? len : &n);
}

/*
 * A boot-loader file's text, whole: 1 when read, 0 when absent or not read (then the
 * judgement's reason names it and why: unreadable, or a NUL byte in it), -ENOMEM.
 */
static int text_file(struct nextboot *nb, const char *path, char **buf)
{
	const char *nul;
	size_t len;
	int r = slurp(path, buf, &len);

	if (r == 0 && *buf) {
		nul = memchr(*buf, '\0', len);
		if (!nul)
			return 1;
		/* dash drops a NUL and reads on, bash 5.2 stops at two in a row: neither is guessed */
		r = set_unknown(nb, "/%s has a NUL byte at offset %zu: not read", path,
				(size_t)(nul - *buf));
	} else if (r != -ENOENT && r != -ENOMEM) {
		r = set_unknown(nb, "/%s cannot be read: %s", path, strerror(-r));
	}
	free(*buf);
	*buf = NULL;
	return r == -ENOMEM ? r : 0;
}

/*
 * The command-line variables of sh config files (GRUB's two, dracut's one; a NULL name ends
 * them), as the shell would leave them after the files in order.
 */
struct grubvar {
	const char *name;
	bool plus; /* NAME+= appends (bash's, not dash's) */
	struct buf val;
	char *source;  /* the assignment that put gpuvm words there, "" when none */
	char *unknown; /* the assignment that could not be read, NULL when none */
};

static bool name_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/*
 * The value of a plain sh assignment (NAME="..." | '...' | word, and such glued together)
 * into out, and nothing after it but blanks or a comment: "$NAME" and "${NAME}" of the
 * variables expand; any other $, `, an operator of sh or an open quote is -EINVAL.
 */
static int sh_value(const char *p, const struct grubvar *v, struct buf *out)
{
	char q = 0;

	for (; *p && (q || (*p != ' ' && *p != '\t')); p++) {
		if (!q && (*p == '"' || *p == '\'')) {
			q = *p;
			continue;
		}
		if (q && *p == q) {
			q = 0;
			continue;
		}
		if (!q && strchr(";&|<>()", *p))
			return -EINVAL;
		if (q != '\'' && *p == '\\') {
			if (!*++p)
				return -EINVAL; /* the line goes on in the next */
		} else if (q != '\'' && *p == '`') {
			return -EINVAL;
		} else if (q != '\'' && *p == '$') {
			bool brace = p[1] == '{';
			const char *n = p + 1 + brace;
			size_t i, len = 0;

			while (name_char(n[len]))
				len++;
			if (brace && n[len] != '}')
				return -EINVAL;
			for (i = 0; v[i].name; i++)
				if (len == strlen(v[i].name) && !strncmp(n, v[i].name, len))
					break;
			if (!v[i].name || v[i].unknown)
				return -EINVAL;
			if (v[i].val.s)
				buf_add(out, v[i].val.s, v[i].val.n);
			p = n + len - 1 + brace;
			continue;
		}
		buf_add(out, p, 1);
	}
	if (q)
		return -EINVAL;
	p += strspn(p, " \t");
	if (*p && *p != '#')
		return -EINVAL;
	buf_add(out, "", 0);
	return out->err ? -ENOMEM : 0;
}

/* Does the line assign name (NAME= or NAME+=) anywhere but at its start? */
static bool assigns(const char *s, const char *name)
{
	size_t len = strlen(name);
	const char *p;

	for (p = strstr(s, name); p; p = strstr(p + 1, name)) {
		if (p > s && name_char(p[-1]))
			continue;
		if (p[len] == '=' || (p[len] == '+' && p[len + 1] == '='))
			return true;
	}
	return false;
}

static int grub_assign(struct grubvar *v, const char *s, const char *where)
{
	struct buf val = { 0 };
	size_t i;
	int r;

	for (i = 0; v[i].name; i++) {
		size_t len = strlen(v[i].name);
		bool plus;
		char *src;

		if (!startswith(s, v[i].name))
			continue;
		plus = v[i].plus && s[len] == '+';
		if (s[len + plus] != '=')
			continue;
		len += plus + 1;
		r = -EINVAL; /* a value appended to one not read is not read either */
		if (!plus || !v[i].unknown) {
			if (plus && v[i].val.s)
				buf_add(&val, v[i].val.s, v[i].val.n);
			r = sh_value(s + len, v, &val);
		}
		if (r == -ENOMEM) {
			free(val.s);
			return r;
		}
		if (r < 0) {
			free(val.s);
			free(v[i].unknown);
			v[i].unknown = strdup(where);
			return v[i].unknown ? 0 : -ENOMEM;
		}
		free(v[i].unknown);
		v[i].unknown = NULL;
		free(v[i].val.s);
		v[i].val = val;
		src = NULL;
		if (strstr(s + len, "gpuvm.")) {
			src = strdup(where);
		} else if (!strstr(val.s, "gpuvm.")) {
			src = strdup("");
		} else if (v[i].source && v[i].source[0]) {
			return 0; /* its own earlier words, through $NAME: that source */
		} else {
			/* its gpuvm words came from the other variable: that one's source */
			src = strdup(v[1 - i].source ? v[1 - i].source : "");
		}
		if (!src)
			return -ENOMEM;
		free(v[i].source);
		v[i].source = src;
		return 0;
	}
	/* not a plain assignment at the line's start, yet it sets one: not read */
	for (i = 0; v[i].name; i++) {
		if (!assigns(s, v[i].name) || v[i].unknown)
			continue;
		v[i].unknown = strdup(where);
		if (!v[i].unknown)
			return -ENOMEM;
	}
	return 0;
}

/*
 * sh's comments blanked out of a file's text: a '#' that starts a word, outside quotes, to the
 * end of its line. Quotes and escapes run across lines as in sh: a '#' inside them is kept.
 */
static void sh_uncomment(char *s)
{
	bool blank = true; /* the last byte ended a word */
	char q = 0;

	for (; *s; s++) {
		if (q == '\'' && *s != q)
			continue;
		if (q != '\'' && *s == '\\' && s[1]) {
			s++; /* an escaped byte, a newline too, is of the word */
			blank = false;
			continue;
		}
		if (q && *s == q) {
			q = 0;
		} else if (!q && (*s == '\'' || *s == '"')) {
			q = *s;
		} else if (!q && blank && *s == '#') {
			while (s[1] && s[1] != '\n')
				*s++ = ' ';
			*s = ' ';
		}
		blank = !q && (*s == ' ' || *s == '\t' || *s == '\n');
	}
}

static int grub_file(struct nextboot *nb, struct grubvar *v, const char *path)
{
	char *buf, *s, *e, where[NB_TEXT];
	unsigned line = 0;
	int r = text_file(nb, path, &buf);

	if (r <= 0)
		return r;
	sh_uncomment(buf);
	for (r = 0, s = buf; *s && r == 0; s = e) {
		e = s + strcspn(s, "\n");
		if (*e)
			*e++ = '\0';
		line++;
		s += strspn(s, " \t");
		if (startswith(s, "export "))
			s += 7 + strspn(s + 7, " \t");
		snprintf(where, sizeof(where), "/%s:%u", path, line);
		r = grub_assign(v, s, where);
	}
	free(buf);
	return r;
}

/*
 * A directory under the root, listed by cb into l, sorted. One that is not there (or no
 * directory) lists nothing; one that cannot be listed makes the judgement unknown, said.
 */
static int list_sorted(struct nextboot *nb, const char *dir, int (*cb)(const char *, void *),
		       struct names *l)
{
	int r = root_list(dir, cb, l);

	if (l->err)
		return l->err;
	names_sort(l);
	if (r < 0 && r != -ENOENT && r != -ENOTDIR)
		return set_unknown(nb, "cannot list /%s: %s", dir, strerror(-r));
	return 0;
}

/*
 * Sh config files: the file, then the folder's files by name (and a second folder's, where
 * the first has none of that name), the variables' gpuvm words on the next boot's line.
 */
static int sh_line(struct nextboot *nb, struct grubvar *v, const char *file, const char *dir,
		   const char *dir2, const char *suffix)
{
	struct names n = { .suffix = suffix };
	char *path = NULL;
	size_t i;
	int r;

	r = grub_file(nb, v, file);
	if (r == 0)
		r = list_sorted(nb, dir, names_add, &n);
	if (r == 0 && dir2)
		r = list_sorted(nb, dir2, names_add, &n);
	for (i = 0; i < n.n && r == 0; i++) {
		if (i && streq(n.v[i], n.v[i - 1]))
			continue; /* in both folders: the first's */
		free(path);
		r = asprintf(&path, "%s/%s", dir, n.v[i]);
		if (r >= 0 && dir2 && root_opens(path) == -ENOENT) {
			free(path);
			r = asprintf(&path, "%s/%s", dir2, n.v[i]);
		}
		if (r < 0) {
			path = NULL;
			r = -ENOMEM;
			break;
		}
		r = grub_file(nb, v, path);
	}
	free(path);
	for (i = 0; v[i].name; i++) {
		if (r == 0 && v[i].unknown)
			r = set_unknown(nb, "%s at %s is not a value gpuvm reads (it uses $, ` or more of sh)",
					v[i].name, v[i].unknown);
		else if (r == 0 && v[i].val.s)
			r = line_words(&nb->line, v[i].val.s, v[i].source);
		free(v[i].val.s);
		free(v[i].source);
		free(v[i].unknown);
	}
	names_free(&n);
	return r;
}

/* GRUB's defaults: /etc/default/grub, then /etc/default/grub.d/ *.cfg (Debian's grub-mkconfig). */
static int grub_line(struct nextboot *nb)
{
	struct grubvar v[3] = { { .name = "GRUB_CMDLINE_LINUX" },
				{ .name = "GRUB_CMDLINE_LINUX_DEFAULT" } };

	return sh_line(nb, v, "etc/default/grub", "etc/default/grub.d", NULL, ".cfg");
}

/*
 * dracut's kernel_cmdline (bash: = and +=), which it writes into the images it builds
 * (/etc/cmdline.d, or a UKI's .cmdline): /etc/dracut.conf, then the .conf files of
 * /etc/dracut.conf.d and /usr/lib/dracut/dracut.conf.d by name, /etc's where both have one.
 */
static int dracut_line(struct nextboot *nb)
{
	struct grubvar v[2] = { { .name = "kernel_cmdline", .plus = true } };

	return sh_line(nb, v, "etc/dracut.conf", "etc/dracut.conf.d",
		       "usr/lib/dracut/dracut.conf.d", ".conf");
}

int nextboot_grubenv_get(const char *text, size_t len, const char *name, char **value)
{
	size_t nl = strlen(name), i = 0;

	*value = NULL;
	if (!nl)
		return -ENOENT;
	while (i < len) {
		size_t s = i;
		struct buf b = { 0 };

		if (text[i] == '#' || text[i] == '\n') {
			while (i < len && text[i] != '\n')
				i++;
			i++;
			continue;
		}
		while (i < len && text[i] != '=' && text[i] != '\n')
			i++;
		if (i >= len || text[i] != '=' || i - s != nl || memcmp(text + s, name, nl) != 0) {
			/* another variable: skip its value, escapes and all */
			while (i < len && text[i] != '\n')
				i += text[i] == '\\' ? 2 : 1;
			i++;
			continue;
		}
		for (i++; i < len && text[i] != '\n'; i++) {
			if (text[i] == '\\' && i + 1 < len)
				i++;
			buf_add(&b, text + i, 1);
		}
		buf_add(&b, "", 0);
		if (b.err) {
			free(b.s);
			return -ENOMEM;
		}
		*value = b.s;
		return 0;
	}
	return -ENOENT;
}

/* The one value every grubenv that has name agrees on. */
static int env_lookup(const char *name, const struct nb_env *env, size_t n_env, char **value,
		      const char **where, char *why, size_t why_size)
{
	size_t i;
	int r;

	*value = NULL;
	*where = NULL;
	for (i = 0; i < n_env; i++) {
		char *v;

		r = nextboot_grubenv_get(env[i].text, env[i].len, name, &v);
		if (r == -ENOENT)
			continue;
		if (r < 0) {
			free(*value);
			return r;
		}
		if (!*value) {
			*value = v;
			*where = env[i].path;
			continue;
		}
		if (!streq(*value, v)) {
			snprintf(why, why_size, "$%s differs between %s and %s", name, *where,
				 env[i].path);
			free(v);
			free(*value);
			*value = NULL;
			return -EINVAL;
		}
		free(v);
	}
	if (*value)
		return 0;
	if (!n_env)
		snprintf(why, why_size, "$%s: no grubenv gpuvm reads (/boot/grub2/grubenv)", name);
	else if (n_env == 1)
		snprintf(why, why_size, "$%s is not in %s", name, env[0].path);
	else
		snprintf(why, why_size, "$%s is in none of %s and %zu more grubenv", name,
			 env[0].path, n_env - 1);
	return -EINVAL;
}

int nextboot_expand(const char *line, const struct nb_env *env, size_t n_env, char **out, char *via,
		    size_t via_size, char *why, size_t why_size)
{
	struct buf b = { 0 };
	const char *p;

	*out = NULL;
	if (via_size)
		via[0] = '\0';
	for (p = line; *p; p++) {
		const char *n, *where;
		char name[128], *v;
		bool brace;
		size_t len = 0;
		int r;

		if (*p == '\\' || *p == '\'' || *p == '`') {
			snprintf(why, why_size, "it uses %c, which gpuvm does not read", *p);
			free(b.s);
			return -EINVAL;
		}
		if (*p != '$') {
			buf_add(&b, p, 1);
			continue;
		}
		brace = p[1] == '{';
		n = p + 1 + brace;
		while (name_char(n[len]))
			len++;
		if (!len || (n[0] >= '0' && n[0] <= '9') || (brace && n[len] != '}') ||
		    len >= sizeof(name)) {
			snprintf(why, why_size, "it uses a $ that is not $NAME or ${NAME}");
			free(b.s);
			return -EINVAL;
		}
		memcpy(name, n, len);
		name[len] = '\0';
		r = env_lookup(name, env, n_env, &v, &where, why, why_size);
		if (r < 0) {
			free(b.s);
			return r;
		}
		if (strpbrk(v, "$`\\'")) {
			snprintf(why, why_size,
				 "$%s in %s holds $, `, \\ or ', which gpuvm does not read", name,
				 where);
			free(v);
			free(b.s);
			return -EINVAL;
		}
		if (strstr(v, "gpuvm.") && via_size && !via[0])
			snprintf(via, via_size, "$%s from %s", name, where);
		buf_add(&b, v, strlen(v));
		free(v);
		p = n + len - 1 + brace;
	}
	buf_add(&b, "", 0);
	if (b.err) {
		free(b.s);
		return -ENOMEM;
	}
	*out = b.s;
	return 0;
}

/* The grubenv files the boot loader reads: GRUB's own, else those on the ESP. */
struct envs {
	struct nb_env *e;
	char **path, **text;
	size_t n;
	bool read; /* looked for (at the first BLS entry) */
};

static void envs_free(struct envs *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->path[i]);
		free(s->text[i]);
	}
	free(s->e);
	free(s->path);
	free(s->text);
	memset(s, 0, sizeof(*s));
}

/* One grubenv: 1 when read, 0 when absent or not readable (the reason names it), -ENOMEM. */
static int env_add(struct nextboot *nb, struct envs *s, const char *path)
{
	struct nb_env *e = realloc(s->e, (s->n + 1) * sizeof(*e));
	char **p, **t, *text;
	size_t len;
	int r;

	if (e)
		s->e = e;
	p = realloc(s->path, (s->n + 1) * sizeof(*p));
	if (p)
		s->path = p;
	t = realloc(s->text, (s->n + 1) * sizeof(*t));
	if (t)
		s->text = t;
	if (!e || !p || !t)
		return -ENOMEM;
	r = text_file(nb, path, &text);
	if (r <= 0)
		return r;
	len = strlen(text);
	if (asprintf(&s->path[s->n], "/%s", path) < 0) {
		free(text);
		return -ENOMEM;
	}
	s->text[s->n] = text;
	s->e[s->n] = (struct nb_env){ s->path[s->n], text, len };
	s->n++;
	return 1;
}

static int esp_env(const char *name, void *data)
{
	char *p;

	if (asprintf(&p, "boot/efi/EFI/%s/grubenv", name) < 0)
		p = NULL;
	return names_take(data, p);
}

static int grubenvs(struct nextboot *nb, struct envs *s)
{
	static const char *const own[] = { "boot/grub2/grubenv", "boot/grub/grubenv" };
	struct names esp = { .suffix = "" };
	size_t i;
	int r = 0;

	for (i = 0; i < ARRAY_SIZE(own) && r == 0; i++)
		r = env_add(nb, s, own[i]);
	if (r == 0) {
		r = list_sorted(nb, "boot/efi/EFI", esp_env, &esp);
		for (i = 0; i < esp.n && r >= 0; i++)
			r = env_add(nb, s, esp.v[i]);
		names_free(&esp);
	}
	return r < 0 ? r : 0;
}

/*
 * Each file of the folders (a NULL ends them) whose name ends in suffix, a folder's in name
 * order: fn(nb, "/PATH", data).
 */
static int each_file(struct nextboot *nb, const char *const *dirs, const char *suffix,
		     int (*fn)(struct nextboot *nb, const char *path, void *data), void *data)
{
	char *path;
	size_t i;
	int r = 0;

	for (; *dirs && r == 0; dirs++) {
		struct names n = { .suffix = suffix };

		r = list_sorted(nb, *dirs, names_add, &n);
		for (i = 0; i < n.n && r == 0; i++) {
			if (asprintf(&path, "/%s/%s", *dirs, n.v[i]) < 0) {
				r = -ENOMEM;
				break;
			}
			r = fn(nb, path, data);
			free(path);
		}
		names_free(&n);
	}
	return r;
}

/* One BLS entry: its options and initrd lines, grubenv variables resolved. */
static int bls_entry(struct nextboot *nb, const char *slash_path, void *data)
{
	struct collect c = { &nb->line, nb->line.n, NULL };
	char *buf, *s, *e, *x, via[NB_TEXT], why[NB_TEXT], *src = NULL;
	const char *path = slash_path + 1;
	struct envs *env = data;
	int r;

	if (!env->read) {
		env->read = true;
		r = grubenvs(nb, env);
		if (r < 0)
			return r;
	}
	r = text_file(nb, path, &buf);
	if (r <= 0)
		return r;
	nb->n_entries++;
	for (r = 0, s = buf; *s && r == 0; s = e) {
		bool opts;

		e = s + strcspn(s, "\n");
		if (*e)
			*e++ = '\0';
		s += strspn(s, " \t");
		rstrip(s);
		opts = startswith(s, "options") && (s[7] == ' ' || s[7] == '\t');
		if (!opts && !(startswith(s, "initrd") && (s[6] == ' ' || s[6] == '\t')))
			continue;
		r = nextboot_expand(s, env->e, env->n, &x, via, sizeof(via), why, sizeof(why));
		if (r == -ENOMEM)
			break;
		if (r < 0) {
			r = set_unknown(nb, "/%s: its %s line is not read: %s", path,
					opts ? "options" : "initrd", why);
			continue;
		}
		free(src);
		if (via[0])
			r = asprintf(&src, "/%s, %s", path, via);
		else
			r = asprintf(&src, "/%s", path);
		if (r < 0) {
			src = NULL;
			free(x);
			r = -ENOMEM;
			break;
		}
		r = 0;
		c.source = src;
		if (opts)
			r = cmdline_parse(x + 7, on_word, &c);
		free(x);
	}
	free(src);
	free(buf);
	return r;
}

/* The BLS entries: GRUB's and systemd-boot's, on /boot or the ESP. */
static int bls_entries(struct nextboot *nb)
{
	static const char *const dirs[] = { "boot/loader/entries", "boot/efi/loader/entries",
					    "efi/loader/entries", NULL };
	struct envs env = { 0 };
	int r = each_file(nb, dirs, ".conf", bls_entry, &env);

	envs_free(&env);
	return r;
}

/* The little-endian 32 bits at p (PE's fields; a 16-bit field masked by the caller). */
static size_t le32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

/*
 * A UKI's .cmdline: the PE image's headers and section table, read at once from the file's
 * first 4 KiB, where a PE image's headers are, then that section's bytes (the smaller of
 * its virtual and raw sizes, at most CONFIG_MAX_SIZE) into *text, NULL when it has none.
 * -ENOEXEC for what is no PE image gpuvm reads, -EFBIG, -errno.
 */
static int uki_cmdline(int fd, char **text)
{
	unsigned char h[4096], *s;
	ssize_t len = pread(fd, h, sizeof(h), 0);
	size_t pe, at, end, size;

	if (len < 0)
		return -errno;
	if (len < 64 || memcmp(h, "MZ", 2) != 0)
		return -ENOEXEC;
	pe = le32(h + 60);
	if (pe > (size_t)len - 24 || memcmp(h + pe, "PE\0\0", 4) != 0)
		return -ENOEXEC;
	at = pe + 24 + (le32(h + pe + 20) & 0xffff); /* past the optional header */
	end = at + 40 * (le32(h + pe + 4) >> 16);    /* 40 bytes a section */
	if (end > (size_t)len)
		return -ENOEXEC;
	for (; at < end; at += 40) {
		s = h + at;
		if (memcmp(s, ".cmdline", 8) != 0)
			continue;
		size = le32(s + 8) < le32(s + 16) ? le32(s + 8) : le32(s + 16);
		if (size > CONFIG_MAX_SIZE)
			return -EFBIG;
		*text = calloc(1, size + 1);
		if (!*text)
			return -ENOMEM;
		len = pread(fd, *text, size, (off_t)le32(s + 20));
		if (len < 0)
			return -errno;
		return (size_t)len == size ? 0 : -ENOEXEC;
	}
	return 0;
}

/* A UKI ("/boot/EFI/Linux/NAME.efi"): its .cmdline's words, or the reason it is not read. */
static int uki(struct nextboot *nb, const char *path, void *data)
{
	char *text = NULL;
	int fd = root_open_file(path, ROOT_FILE_LINKS), r;

	(void)data;
	r = fd < 0 ? fd : uki_cmdline(fd, &text);
	if (fd >= 0)
		close(fd);
	if (r == 0 && text)
		r = line_words(&nb->line, text, path);
	else if (r < 0 && r != -ENOMEM)
		r = set_unknown(nb, "/%s cannot be read: %s", path + 1, strerror(-r));
	free(text);
	return r;
}

/*
 * The UKIs (systemd-boot's type 2 entries, kernel-install's uki layout), on /boot or the
 * ESP: each one's .cmdline, which its stub gives the kernel.
 */
static int ukis(struct nextboot *nb)
{
	static const char *const dirs[] = { "boot/EFI/Linux", "efi/EFI/Linux", "boot/efi/EFI/Linux",
					    NULL };

	return each_file(nb, dirs, ".efi", uki, NULL);
}

static int kernel_cmdline(struct nextboot *nb)
{
	char *buf;
	int r = text_file(nb, "etc/kernel/cmdline", &buf);

	if (r <= 0)
		return r;
	r = line_words(&nb->line, buf, "/etc/kernel/cmdline");
	free(buf);
	return r;
}

static void this_boot_id(char *buf, size_t size)
{
	if (root_read(BOOT_ID, buf, size) <= 0)
		buf[0] = '\0';
	rstrip(buf);
}

/* /run/gpuvm/boot.json: did gpuvm run in this boot's initramfs, and what did it read? */
static int this_boot(struct nextboot *nb)
{
	static const char *const id_path[] = { "boot", "boot_id" };
	static const char *const hc_path[] = { "boot", "host_config" };
	static const char *const why_path[] = { "boot", "why" };
	static const char *const ms_path[] = { "mode_source" };
	char *text, id[64], now[64];
	size_t len;
	int r = root_read_file(BOOT_JSON, BOOT_JSON_MAX, ROOT_FILE_OWN, &text, &len);

	nb->boot_json = -1;
	if (r == -ENOMEM)
		return r;
	if (r == -ENOENT) {
		nb->boot_json = 0;
		strscpy(nb->boot_why,
			"no /run/gpuvm/boot.json: gpuvm did not run in this boot's initramfs (not installed then, or not in the image)",
			sizeof(nb->boot_why));
		return 0;
	}
	if (r < 0) {
		char why[128];

		config_read_why(r, BOOT_JSON_MAX, why, sizeof(why));
		snprintf(nb->boot_why, sizeof(nb->boot_why), "/run/gpuvm/boot.json: %s", why);
		return 0;
	}
	this_boot_id(now, sizeof(now));
	r = json_get_string(text, len, id_path, 2, id, sizeof(id));
	if (r < 0) {
		snprintf(nb->boot_why, sizeof(nb->boot_why),
			 "/run/gpuvm/boot.json has no boot.boot_id (%s): not written by this gpuvm at boot",
			 r == -ENOENT ? "absent" : "not a JSON string there");
	} else if (!now[0]) {
		strscpy(nb->boot_why,
			"/proc/sys/kernel/random/boot_id cannot be read: /run/gpuvm/boot.json cannot be told of this boot",
			sizeof(nb->boot_why));
	} else if (!streq(id, now)) {
		snprintf(nb->boot_why, sizeof(nb->boot_why),
			 "/run/gpuvm/boot.json is of another boot (boot_id %s, this boot %s)", id,
			 now);
	} else {
		nb->boot_json = 1;
		if (json_get_string(text, len, hc_path, 2, nb->host_config, sizeof(nb->host_config)) < 0)
			strscpy(nb->host_config, "", sizeof(nb->host_config));
		if (json_get_string(text, len, why_path, 2, nb->host_config_why,
				    sizeof(nb->host_config_why)) < 0)
			nb->host_config_why[0] = '\0';
		if (json_get_string(text, len, ms_path, 1, nb->boot_mode_source,
				    sizeof(nb->boot_mode_source)) < 0)
			nb->boot_mode_source[0] = '\0';
	}
	free(text);
	return 0;
}

/* The host config alone: its mode, its config= and its gpus=. */
static int host_file(struct nextboot *nb, const char *config_file)
{
	struct settings_input in = { .config_path = config_file ? config_file : CONFIG_PATH };
	struct settings *s = malloc(sizeof(*s));
	char *buf = NULL;
	size_t len = 0;
	int r;

	if (!s)
		return -ENOMEM;
	r = root_read_config(config_file, &buf, &len);
	if (r == -ENOMEM) {
		free(s);
		return r;
	}
	if (r < 0 && r != -ENOENT) {
		char why[128];

		config_read_why(r, CONFIG_MAX_SIZE, why, sizeof(why));
		/* the boot refuses it as well, and on_error decides: not a mode to promise */
		if (set_unknown(nb, "%s: %s", in.config_path, why) < 0) {
			free(s);
			return -ENOMEM;
		}
	}
	in.config = buf;
	in.config_len = buf ? len : 0;
	settings_load(s, &in, NULL);
	strscpy(nb->file_mode, mode_name(s->mode), sizeof(nb->file_mode));
	strscpy(nb->file_mode_source, settings_source(s, KEY_MODE), sizeof(nb->file_mode_source));
	strscpy(nb->file_config, s->config, sizeof(nb->file_config));
	settings_value(s, KEY_GPUS, nb->file_gpus, sizeof(nb->file_gpus));
	free(buf);
	free(s);
	return 0;
}

int nextboot_judge(struct nextboot *nb, const char *config_file, const char *cmdline)
{
	char *now = NULL;
	int r;

	memset(nb, 0, sizeof(*nb));
	nb->other_file = config_file;
	r = host_file(nb, config_file);
	if (r == 0)
		r = this_boot(nb);
	if (r == 0)
		r = grub_line(nb);
	if (r == 0)
		r = kernel_cmdline(nb);
	if (r == 0)
		r = bls_entries(nb);
	if (r == 0)
		r = ukis(nb);
	if (r == 0)
		r = ukis(nb);
	if (r == 0)
		r = dracut_line(nb);
	if (r == 0 && !cmdline) {
		r = slurp("proc/cmdline", &now, NULL);
		r = r == -ENOMEM ? r : 0;
		cmdline = now;
	}
	if (r == 0 && cmdline)
		r = line_words(&nb->now, cmdline, "/proc/cmdline");
	free(now);
	return r;
}

void nextboot_fini(struct nextboot *nb)
{
	words_free(&nb->line);
	words_free(&nb->now);
	free(nb->unknown);
	nb->unknown = NULL;
}

/* Does a word give the key value? A mode by its name, gpus= by its entries, the rest as written. */
static bool same_value(const char *key, const char *a, const char *b)
{
	enum mode ma, mb;

	if (streq(key, "mode") && mode_parse(a, &ma) == 0 && mode_parse(b, &mb) == 0)
		return ma == mb;
	return settings_same_value(key, a, b); /* gpus= by the entries it names */
}

static const struct nb_word *last_word(const struct nb_words *l, const char *key)
{
	size_t i;

	for (i = l->n; i-- > 0;)
		if (streq(l->w[i].key, key))
			return &l->w[i];
	return NULL;
}

const struct nb_word *nextboot_line_word(const struct nextboot *nb, const char *key)
{
	size_t i;

	for (i = 0; i < nb->line.n; i++)
		if (streq(nb->line.w[i].key, key))
			return &nb->line.w[i];
	return NULL;
}

static void unknown(struct nb_judgement *j, bool no_boot, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void unknown(struct nb_judgement *j, bool no_boot, const char *fmt, ...)
{
	va_list ap;

	j->verdict = NB_UNKNOWN;
	j->no_boot = no_boot;
	va_start(ap, fmt);
	vsnprintf(j->why, sizeof(j->why), fmt, ap);
	va_end(ap);
}

void nextboot_verdict(const struct nextboot *nb, const char *key, const char *value,
		      struct nb_judgement *j)
{
	const struct nb_word *same = NULL, *w;
	size_t i;

	memset(j, 0, sizeof(*j));
	/* A boot line that sets the key otherwise: the file cannot take effect. */
	for (i = 0; i < nb->line.n; i++) {
		w = &nb->line.w[i];
		if (!streq(w->key, key))
			continue;
		if (!same_value(key, w->value, value)) {
			j->verdict = NB_PINNED;
			j->pin = w;
			j->conflict = true;
			return;
		}
		if (!same)
			same = w;
	}
	if (nb->other_file) {
		unknown(j, false, "%s is not the file the next boot reads (%s)", nb->other_file,
			CONFIG_PATH);
		return;
	}
	w = last_word(&nb->line, "config");
	if (w) {
		unknown(j, false,
			"the boot line (%s) has gpuvm.config=%s: the next boot reads the host config from that disk, not this file",
			w->source, w->value);
		return;
	}
	if (nb->file_config[0]) {
		unknown(j, false,
			"the file says config=%s: the next boot reads the host config from that disk, not this file",
			nb->file_config);
		return;
	}
	if (nb->unknown) {
		unknown(j, false, "%s", nb->unknown);
		return;
	}
	w = last_word(&nb->now, key);
	if (w && !same) {
		unknown(j, false,
			"this boot's kernel command line has gpuvm.%s=%s (/proc/cmdline) and no boot-loader file gpuvm reads sets it",
			key, w->value);
		return;
	}
	if (nb->boot_json != 1) {
		unknown(j, true, "%s", nb->boot_why);
		return;
	}
	if (streq(nb->host_config, "disk")) {
		unknown(j, false,
			"this boot read the host config from config='s disk (/run/gpuvm/boot.json: host_config disk): the file here is not what the boot reads");
		return;
	}
	/* pinned: the first call's record, which the last stays with where it changes nothing */
	if (streq(nb->host_config, "pinned")) {
		if (!same) {
			unknown(j, false,
				"this boot's mode was pinned on its line and its record is the first call's (/run/gpuvm/boot.json: host_config pinned): it does not say that the root's file was read");
			return;
		}
	} else if (!streq(nb->host_config, "read") && !streq(nb->host_config, "missing")) {
		unknown(j, false,
			"this boot's initramfs did not read the root's file (/run/gpuvm/boot.json: host_config %s%s%s)",
			nb->host_config[0] ? nb->host_config : "not said",
			nb->host_config_why[0] ? ": " : "", nb->host_config_why);
		return;
	}
	if (!same && streq(key, "mode") && streq(nb->boot_mode_source, "cmdline") &&
	    !last_word(&nb->now, key)) {
		unknown(j, false,
			"this boot's mode came from its initramfs's own command line (/etc/cmdline.d: dracut's kernel_cmdline=), which gpuvm does not read");
		return;
	}
	if (same) {
		j->verdict = NB_PINNED;
		j->pin = same;
		return;
	}
	j->verdict = NB_READS;
	snprintf(j->why, sizeof(j->why),
		 "gpuvm ran in this boot's initramfs and %s %s on the root (/run/gpuvm/boot.json); no boot line gpuvm reads sets gpuvm.%s=",
		 streq(nb->host_config, "read") ? "read" : "looked for", CONFIG_PATH, key);
}

void nextboot_say(const struct nb_judgement *j, char *buf, size_t size)
{
	switch (j->verdict) {
	case NB_READS:
		snprintf(buf, size, "reads the file: %s", j->why);
		break;
	case NB_PINNED:
		snprintf(buf, size, "pinned: gpuvm.%s=%s on the boot line (%s)", j->pin->key,
			 j->pin->value, j->pin->source);
		break;
	default:
		snprintf(buf, size, "unknown: %s", j->why);
		break;
	}
}

const char *nextboot_verdict_name(enum nb_verdict v)
{
	switch (v) {
	case NB_READS:
		return "reads";
	case NB_PINNED:
		return "pinned";
	default:
		return "unknown";
	}
}
