// SPDX-License-Identifier: MIT
/*
 * The kernel command line as the boot sees it: the initramfs's /etc/cmdline.d (dracut) and
 * /proc/cmdline, each read to its end, with bounds that are said when reached.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kcmdline.h"
#include "log.h"
#include "rootio.h"
#include "util.h"

/*
 * The kernel command line: bootconfig makes it 32 KiB and more, far past one read's page,
 * so it is read to its end; CMDLINE_MAX, well above that, bounds /proc/cmdline and, in all,
 * the initramfs's /etc/cmdline.d. Past it, the rest is cut at a word and said.
 */
#define CMDLINE_D "etc/cmdline.d"
#define CMDLINE_MAX ((size_t)128 * 1024)
/* What is past the bound is only counted, and only so far: the file need not end. */
#define CMDLINE_COUNT_MAX ((size_t)16 * 1024 * 1024)

/*
 * The .conf files of /etc/cmdline.d, all of them up to CMDLINE_D_FILES_MAX: beyond that
 * (no initramfs has so many) the first in name order are kept, whatever order the directory
 * lists them in, and the rest counted and said.
 */
#define CMDLINE_D_FILES_MAX 4096
#define CMDLINE_D_NAME 256 /* NAME_MAX and its NUL */

struct names {
	char (*name)[CMDLINE_D_NAME];
	size_t n, cap, dropped;
};

static int collect_conf(const char *name, void *data)
{
	struct names *l = data;
	size_t len = strlen(name), i, max;
	char(*t)[CMDLINE_D_NAME];

	if (len < 6 || len >= CMDLINE_D_NAME || !streq(name + len - 5, ".conf"))
		return 0;
	if (l->n == l->cap && l->cap < CMDLINE_D_FILES_MAX) {
		size_t cap = 2 * l->cap < CMDLINE_D_FILES_MAX ? 2 * l->cap : CMDLINE_D_FILES_MAX;

		t = realloc(l->name, cap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		l->name = t;
		l->cap = cap;
	}
	if (l->n < l->cap) {
		strscpy(l->name[l->n++], name, CMDLINE_D_NAME);
		return 0;
	}
	/* Full: keep the first in name order, so that which are read does not depend on readdir. */
	l->dropped++;
	for (i = 1, max = 0; i < l->n; i++)
		if (strcmp(l->name[i], l->name[max]) > 0)
			max = i;
	if (strcmp(name, l->name[max]) < 0)
		strscpy(l->name[max], name, CMDLINE_D_NAME);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* What a cut-short read keeps of the bytes past its bound: enough to name the first word. */
#define PEEK_LEN 48

/*
 * Read the regular file path (under the root) to its end: up to max bytes into buf (of max
 * + 1), NUL-terminated, in *len; the bytes past max are counted in *over (up to
 * CMDLINE_COUNT_MAX) and not kept but for the first ones, in peek. -errno.
 */
static int read_to_eof(const char *path, char *buf, size_t max, size_t *len, size_t *over,
		       char peek[PEEK_LEN])
{
	static char skip[4096]; /* what is past max: counted, its first bytes peeked at */
	int fd, r = 0;

	*len = *over = 0;
	buf[0] = peek[0] = '\0';
	fd = root_open_file(path, 0);
	if (fd < 0)
		return fd;
	while (*over < CMDLINE_COUNT_MAX) {
		bool keep = *len < max;
		ssize_t n =
			read_nointr(fd, keep ? buf + *len : skip, keep ? max - *len : sizeof(skip));

		if (n < 0) {
			r = (int)n;
			break;
		}
		if (n == 0)
			break;
		if (keep) {
			*len += (size_t)n;
			continue;
		}
		if (*over == 0) {
			size_t p = (size_t)n < PEEK_LEN - 1 ? (size_t)n : PEEK_LEN - 1;

			memcpy(peek, skip, p);
			peek[p] = '\0';
		}
		*over += (size_t)n;
	}
	buf[*len] = '\0';
	close(fd);
	return r;
}

/*
 * Text cut at max bytes: keep only whole words (a blank outside quotes ends one), so that
 * no half of a gpuvm.KEY=VALUE is taken for the whole. The new length.
 */
static size_t cut_at_word(const char *s, size_t len)
{
	size_t i, cut = 0;
	bool quoted = false;

	for (i = 0; i < len; i++) {
		if (s[i] == '"')
			quoted = !quoted;
		else if (!quoted && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n'))
			cut = i;
	}
	return cut;
}

/*
 * Say what is ignored past the bound: the bytes from offset from of the len kept at s (a
 * word cut there), over more, and the word they start with (its rest in peek).
 */
static void say_cut(const char *head, const char *s, size_t from, size_t len, size_t over,
		    const char *peek)
{
	char word[PEEK_LEN + 48];
	size_t n, kept;

	while (from < len && (s[from] == ' ' || s[from] == '\t' || s[from] == '\n'))
		from++;
	kept = len - from < 48 ? len - from : 48;
	snprintf(word, sizeof(word), "%.*s%s", (int)kept, s + from,
		 kept ? peek : peek + strspn(peek, " \t\n"));
	n = strcspn(word, " \t\n\r");
	if (n > 40)
		memcpy(word + 40, "...", 4);
	else
		word[n] = '\0';
	log_warn("%s; the last %s%zu bytes ignored%s%s%s", head,
		 over >= CMDLINE_COUNT_MAX ? "more than " : "", len - from + over,
		 n ? ", from '" : "", word, n ? "'" : "");
}

/*
 * The kernel command line, as dracut's getcmdline sees it: the initramfs's
 * /etc/cmdline.d/NAME.conf files in name order (dracut's kernel_cmdline= lands there), then
 * /proc/cmdline, so that the latter wins. A string the caller frees.
 */
char *kcmdline_read(const char *given)
{
	struct names l = { .cap = 32 };
	char *all, peek[PEEK_LEN];
	size_t len = 0, n, over, i;
	int r;

	if (given)
		return strdup(given);
	/* cmdline.d in all, then /proc/cmdline, each up to CMDLINE_MAX: neither crowds out the other */
	all = malloc(2 * CMDLINE_MAX + 2);
	l.name = malloc(l.cap * sizeof(*l.name));
	if (!all || !l.name) {
		free(all);
		free(l.name);
		return NULL;
	}
	all[0] = '\0';
	r = root_list(CMDLINE_D, collect_conf, &l);
	if (r == -ENOMEM) {
		free(all);
		free(l.name);
		return NULL;
	}
	if (l.dropped)
		log_warn("/%s: more than %d .conf files: the first %d in name order read, %zu ignored",
			 CMDLINE_D, CMDLINE_D_FILES_MAX, CMDLINE_D_FILES_MAX, l.dropped);
	if (r == 0 && l.n) {
		qsort(l.name, l.n, sizeof(*l.name), name_cmp);
		for (i = 0; i < l.n; i++) {
			char path[320], head[400];

			snprintf(path, sizeof(path), CMDLINE_D "/%s", l.name[i]);
			if (read_to_eof(path, all + len, CMDLINE_MAX - len, &n, &over, peek) < 0)
				continue;
			n = strnlen(all + len, n); /* a NUL ends a file's text */
			for (char *c = all + len; *c; c++)
				if (*c == '\n' || *c == '\r')
					*c = ' ';
			if (over) {
				size_t cut = cut_at_word(all + len, n);

				snprintf(head, sizeof(head), "/%s: past %zu bytes of /%s in all",
					 path, CMDLINE_MAX, CMDLINE_D);
				say_cut(head, all + len, cut, n, over, peek);
				n = cut;
			}
			len += n;
			if (n && len < CMDLINE_MAX)
				all[len++] = ' ';
		}
	}
	free(l.name);
	all[len] = '\0';
	r = read_to_eof("proc/cmdline", all + len, CMDLINE_MAX, &n, &over, peek);
	if (r < 0) {
		log_warn("cannot read /proc/cmdline: %s; no kernel parameters used", strerror(-r));
	} else if (over) {
		size_t cut = cut_at_word(all + len, n);
		char head[64];

		snprintf(head, sizeof(head), "/proc/cmdline: longer than %zu bytes", CMDLINE_MAX);
		say_cut(head, all + len, cut, n, over, peek);
		all[len + cut] = '\0';
	}
	rstrip(all);
	return all;
}
