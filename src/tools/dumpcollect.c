// SPDX-License-Identifier: MIT
/*
 * What gpuvm dump collects: the preparation runs first (settings, scan, a plan in each
 * mode) with rootio's recorder on, so that the dump holds what inventory.c, hostdev.c and
 * each mode's plan read, for the functions they read; then each of those reads is made
 * again and written into the archive, links as links (dump_read). The dump's own readers
 * keep what is masked or filtered (the command line, the host config, gpuvm's records, the
 * mounts, pci.ids, /proc/iomem, the module indexes), and dump_diagnosis adds a short list
 * for the person who reads a report, each entry with why. What could name a person or a
 * site is left out or masked (gpuvm(8), DUMP). The archive is built in memory, bounded.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "cmdline.h"
#include "config.h"
#include "dumpcollect.h"
#include "inuse.h"
#include "iomem.h"
#include "kmod.h"
#include "kvsnippet.h"
#include "modindex.h"
#include "names.h"
#include "pciids.h"
#include "pciproc.h"
#include "prepare.h"
#include "rootio.h"
#include "state.h"
#include "util.h"

#define LINKS_MAX 40
#define RECORD_MAX ((size_t)1024 * 1024) /* a state file, boot.json: what state.c reads */
#define INFO_NAME "gpuvm-dump.txt"
#define DUMP_FORMAT 1

/* What stands for the host's boot_id, and for any other boot's in its records. */
#define BOOT_ID_THIS "00000000-0000-4000-8000-000000000001"
#define BOOT_ID_OTHER "00000000-0000-4000-8000-000000000002"

#define SECURE_BOOT_VAR "sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"

/* A read of the preparation's: what it was, and the path under the root. */
struct read {
	enum root_rec kind;
	char *path;
};

struct dump {
	struct tarw t;
	struct prep pp;
	const struct dump_from *o;
	unsigned long long deadline_ms;
	int err;	     /* what stopped the dump, 0 while it goes on */
	char what[PATH_MAX]; /* where it stopped */
	FILE *notes;	     /* what was left out, and why: the info file's last part */
	char *notes_buf;
	size_t notes_len;
	char boot_id[64]; /* the host's, "" when unknown */
	bool *keep;	  /* per inventory function: its directory is in the dump */
	size_t n_keep;
	struct read *read; /* what the preparation read (rootio's recorder), sorted */
	size_t n_read, cap_read;
	bool read_nomem;
};

/*
 * DIR/NAME into path (PATH_MAX bytes): false when it does not fit, and the entry is passed
 * over (no sysfs path is so long; a cut one would name another file).
 */
static bool join(char *path, const char *dir, const char *name)
{
	int n = snprintf(path, PATH_MAX, "%s/%s", dir, name);

	return n >= 0 && n < PATH_MAX;
}

static void note(struct dump *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct dump *d, const char *fmt, ...)
{
	va_list ap;

	if (!d->notes)
		return;
	fputs("left out: ", d->notes);
	va_start(ap, fmt);
	vfprintf(d->notes, fmt, ap);
	va_end(ap);
	fputc('\n', d->notes);
}

/*
 * An error that ends the dump: a bound reached (-ENOSPC the archive's bytes, -E2BIG its
 * members, -EFBIG one file's, -ETIME the time), or no memory.
 */
static bool fatal(int r)
{
	return r == -ENOSPC || r == -EFBIG || r == -E2BIG || r == -ENOMEM || r == -ETIME;
}

static void stop(struct dump *d, int r, const char *path)
{
	if (d->err)
		return;
	d->err = r;
	strscpy(d->what, path, sizeof(d->what));
}

/* Whether the dump has stopped, or must now (its time is up). */
static bool stopped(struct dump *d, const char *path)
{
	if (!d->err && clock_ms(CLOCK_MONOTONIC) > d->deadline_ms)
		stop(d, -ETIME, path);
	return d->err != 0;
}

/* What tarw said about path: a bound or memory ends the dump; anything else is noted. */
static void added(struct dump *d, int r, const char *path)
{
	if (r == 0)
		return;
	if (r == -EFBIG)
		r = -ENOSPC; /* the archive's bound, not a file's */
	if (fatal(r))
		stop(d, r, path);
	else
		note(d, "/%s: cannot be put in the archive: %s", path, strerror(-r));
}

/*
 * A link's target as the kernel writes them: relative, and inside the root from the link's
 * directory (path, under the root). Anything else (absolute, or out through "..") could
 * make the archive write outside the folder it is unpacked in.
 */
static bool target_inside(const char *path, const char *target)
{
	const char *p;
	long depth = 0;

	if (target[0] == '/' || !target[0])
		return false;
	for (p = path; (p = strchr(p, '/')); p++)
		depth++;
	for (p = target; *p;) {
		const char *e = strchrnul(p, '/');
		size_t n = (size_t)(e - p);

		if (n == 2 && p[0] == '.' && p[1] == '.')
			depth--;
		else if (n && !(n == 1 && p[0] == '.'))
			depth++;
		if (depth < 0)
			return false;
		p = *e ? e + 1 : e;
	}
	return true;
}

static int put_link(struct dump *d, const char *path, const char *target)
{
	int r;

	if (!target_inside(path, target)) {
		note(d, "/%s: a link to %s, outside the tree: not kept", path, target);
		return -EXDEV;
	}
	r = tarw_link(&d->t, path, target);
	added(d, r, path);
	return r;
}

/*
 * Where path (under the root) really is: each link on the way followed as the kernel's
 * relative links are, lexically, and put in the dump as it is. -ELOOP, -EXDEV (a link out
 * of the tree, or ".." above the root), -ENAMETOOLONG.
 */
static int canon(struct dump *d, const char *path, char *out, size_t size)
{
	char rest[PATH_MAX], cur[PATH_MAX] = "", cand[PATH_MAX], target[PATH_MAX], tmp[PATH_MAX];
	const char *p = rest;
	unsigned links = 0;
	int r;

	if (strscpy(rest, path, sizeof(rest)) < 0)
		return -ENAMETOOLONG;
	while (*p) {
		const char *e = strchrnul(p, '/'), *next = *e ? e + 1 : e;
		int n = (int)(e - p);

		if (n == 0 || (n == 1 && p[0] == '.')) {
			p = next;
			continue;
		}
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			char *slash = strrchr(cur, '/');

			if (!cur[0])
				return -EXDEV;
			if (slash)
				*slash = '\0';
			else
				cur[0] = '\0';
			p = next;
			continue;
		}
		if ((size_t)snprintf(cand, sizeof(cand), "%s%s%.*s", cur, cur[0] ? "/" : "", n, p) >=
		    sizeof(cand))
			return -ENAMETOOLONG;
		if (root_link_target(cand, target, sizeof(target)) == 0) {
			if (++links > LINKS_MAX)
				return -ELOOP;
			r = put_link(d, cand, target);
			if (r < 0 && r != -EEXIST)
				return r == -EXDEV ? r : -EINVAL;
			if ((size_t)snprintf(tmp, sizeof(tmp), "%s%s%s", target, *next ? "/" : "",
					     next) >= sizeof(tmp))
				return -ENAMETOOLONG;
			memcpy(rest, tmp, strlen(tmp) + 1);
			p = rest;
			continue;
		}
		memcpy(cur, cand, strlen(cand) + 1);
		p = next;
	}
	return strscpy(out, cur, size) < 0 ? -ENAMETOOLONG : 0;
}

/* dir/name, with dir made canonical: the path a member takes. */
static int canon_parent(struct dump *d, const char *path, char *out, size_t size)
{
	char dir[PATH_MAX];
	const char *base = strrchr(path, '/');
	int r;

	if (!base)
		return strscpy(out, path, size) < 0 ? -ENAMETOOLONG : 0;
	if ((size_t)(base - path) >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, path, (size_t)(base - path));
	dir[base - path] = '\0';
	r = canon(d, dir, dir, sizeof(dir));
	if (r < 0)
		return r;
	if ((size_t)snprintf(out, size, "%s/%s", dir, base + 1) >= size)
		return -ENAMETOOLONG;
	return 0;
}

struct slurp {
	char *buf;
	size_t len, cap, max;
};

static ssize_t slurp_chunk(const char *chunk, size_t len, bool eof, void *data)
{
	struct slurp *s = data;

	(void)eof;
	if (s->len + len > s->max)
		return -EFBIG;
	if (!s->buf || s->len + len + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		char *b;

		while (cap < s->len + len + 1)
			cap *= 2;
		b = realloc(s->buf, cap);
		if (!b)
			return -ENOMEM;
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, chunk, len);
	s->len += len;
	s->buf[s->len] = '\0';
	return (ssize_t)len;
}

/* The whole file at path (under the root), up to max bytes: 0 and *buf (to free), or -errno. */
static int slurp(const char *path, size_t max, char **buf, size_t *len)
{
	struct slurp s = { .max = max };
	char chunk[16384];
	int r = root_read_chunks(path, chunk, sizeof(chunk), slurp_chunk, &s);

	if (r == 0 && !s.buf)
		r = slurp_chunk("", 0, true, &s) < 0 ? -ENOMEM : 0;
	if (r < 0) {
		free(s.buf);
		return r;
	}
	*buf = s.buf;
	*len = s.len;
	return 0;
}

/* data as the file path (under the root), its directory made canonical. */
static void put_file(struct dump *d, const char *path, const char *data, size_t len)
{
	char real[PATH_MAX];
	int r;

	if (stopped(d, path))
		return;
	r = canon_parent(d, path, real, sizeof(real));
	if (r < 0) {
		note(d, "/%s: %s", path, strerror(-r));
		return;
	}
	added(d, tarw_file(&d->t, real, data, len), real);
}

static void copy_link(struct dump *d, const char *path);

/* A read that failed: nothing when the file is not there, else noted. */
static void unread(struct dump *d, const char *path, int r)
{
	if (r == -EFBIG)
		note(d, "/%s: larger than the dump takes of one file", path);
	else if (r != -ENOENT && r != -ENOTDIR)
		note(d, "/%s: cannot read: %s", path, strerror(-r));
}

/*
 * The file path as it is, up to max bytes; a link there is kept as the link, not followed.
 * 0, or what its read said.
 */
static int copy(struct dump *d, const char *path, size_t max)
{
	char *buf, target[PATH_MAX];
	size_t len;
	int r;

	if (stopped(d, path))
		return -ETIME;
	if (root_link_target(path, target, sizeof(target)) == 0) {
		copy_link(d, path);
		return 0;
	}
	r = slurp(path, max, &buf, &len);
	if (r < 0) {
		if (r == -ENOMEM)
			stop(d, r, path);
		unread(d, path, r);
		return r;
	}
	put_file(d, path, buf, len);
	free(buf);
	return 0;
}

/* The link at path, as it is, not followed; nothing when there is none. */
static void copy_link(struct dump *d, const char *path)
{
	char real[PATH_MAX], target[PATH_MAX];
	int r;

	if (stopped(d, path))
		return;
	r = canon_parent(d, path, real, sizeof(real));
	if (r == 0)
		r = root_link_target(real, target, sizeof(target));
	if (r == 0)
		put_link(d, real, target);
	else if (r != -ENOENT && r != -EINVAL)
		note(d, "/%s: %s", path, strerror(-r));
}

/*
 * The entries of the directory dir (made canonical into real) that want() takes, in name
 * order (so that one tree makes one archive), into l. -errno of the listing.
 */
static int list(struct dump *d, const char *dir, char *real, size_t size, struct names *l)
{
	int r;

	if (stopped(d, dir))
		return -ETIME;
	r = canon(d, dir, real, size);
	if (r == 0)
		r = root_list(real, names_add, l);
	if (r == 0)
		r = l->err;
	if (r == -ENOMEM)
		stop(d, r, dir);
	if (r < 0) {
		unread(d, dir, r);
		names_free(l);
		return r;
	}
	names_sort(l);
	return 0;
}

/*
 * The listing of dir, each entry as the kernel has it: a link as the link, anything else
 * as a directory (the listings the dump keeps are of links and directories). The names
 * stay in l for the caller (NULL: freed here).
 */
static void listing(struct dump *d, const char *dir, bool (*want)(const char *), struct names *keep)
{
	struct names l = { .want = want };
	char real[PATH_MAX], path[PATH_MAX], target[PATH_MAX];
	size_t i;

	if (list(d, dir, real, sizeof(real), &l) < 0)
		return;
	added(d, tarw_dir(&d->t, real), real);
	for (i = 0; i < l.n && !stopped(d, dir); i++) {
		if (!join(path, real, l.v[i]))
			continue;
		if (root_link_target(path, target, sizeof(target)) == 0)
			put_link(d, path, target);
		else
			added(d, tarw_dir(&d->t, path), path);
	}
	if (keep)
		*keep = l;
	else
		names_free(&l);
}

/* ------------------------------------------------------------------ what is masked -- */

/*
 * The kernel parameters whose values stay: what gpuvm reads, and what shapes the PCI and
 * IOMMU setup a report is about. Every other word keeps its name; its value reads "-"
 * (root=UUID=..., ip=..., hostname=... say nothing of the host then).
 */
static bool value_kept(const char *word, size_t klen)
{
	static const char *const keep[] = {
		"gpuvm.",
		"rd.gpuvm.",
		"intel_iommu",
		"amd_iommu",
		"iommu",
		"vfio",
		"pci",
		"modprobe.blacklist",
		"module_blacklist",
		"rd.driver.",
		"console",
		"rd.retry",
		"rd_retry",
		"nouveau",
		"nvidia",
		"nomodeset",
		"video",
		"initcall_blacklist",
		"kvm",
		"hugepage",
		"default_hugepagesz",
		"e2e.",
	};
	size_t i, n;

	for (i = 0; i < ARRAY_SIZE(keep); i++) {
		n = strlen(keep[i]);
		if (klen >= n && !strncmp(word, keep[i], n))
			return true;
	}
	return false;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * Kernel command line text to f, the values of other words masked (value_kept): a word runs
 * to a blank outside quotes, as the kernel splits it; its name to its first '=' outside them.
 */
static void mask_cmdline(const char *s, size_t len, FILE *f)
{
	size_t i = 0;

	while (i < len) {
		size_t w = i, eq = 0;
		bool quoted = false;

		if (blank(s[i])) {
			fputc(s[i++], f);
			continue;
		}
		for (; i < len && (quoted || !blank(s[i])); i++) {
			if (s[i] == '"')
				quoted = !quoted;
			else if (s[i] == '=' && !eq && !quoted)
				eq = i;
		}
		if (!eq || value_kept(s + w, eq - w))
			fwrite(s + w, 1, i - w, f);
		else
			fprintf(f, "%.*s=-", (int)(eq - w), s + w);
	}
}

static void put_masked_cmdline(struct dump *d, const char *path, const char *s, size_t len, bool newline)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);

	if (!f) {
		stop(d, -ENOMEM, path);
		return;
	}
	mask_cmdline(s, len, f);
	if (newline)
		fputc('\n', f);
	if (fclose(f) != 0) {
		free(text);
		stop(d, -ENOMEM, path);
		return;
	}
	put_file(d, path, text, n);
	free(text);
}

static bool is_conf(const char *name)
{
	size_t n = strlen(name);

	return n > 5 && streq(name + n - 5, ".conf");
}

/* /proc/cmdline and /etc/cmdline.d, or --cmdline as /proc/cmdline (then cmdline.d is not read). */
static void dump_cmdline(struct dump *d)
{
	struct names l = { 0 };
	char real[PATH_MAX], path[PATH_MAX], *buf;
	size_t i, len;
	int r;

	if (d->o->cmdline) {
		put_masked_cmdline(d, "proc/cmdline", d->o->cmdline, strlen(d->o->cmdline), true);
		return;
	}
	r = slurp("proc/cmdline", DUMP_FILE_MAX, &buf, &len);
	if (r == 0) {
		put_masked_cmdline(d, "proc/cmdline", buf, len, false);
		free(buf);
	} else {
		unread(d, "proc/cmdline", r);
	}
	l.want = is_conf;
	if (list(d, "etc/cmdline.d", real, sizeof(real), &l) < 0)
		return;
	for (i = 0; i < l.n; i++) {
		if (!join(path, real, l.v[i]))
			continue;
		r = slurp(path, DUMP_FILE_MAX, &buf, &len);
		if (r < 0) {
			unread(d, path, r);
			continue;
		}
		put_masked_cmdline(d, path, buf, len, false);
		free(buf);
	}
	names_free(&l);
}

/* The host config, its comments emptied (a line stays a line: mode_source names lines). */
static void dump_config(struct dump *d)
{
	char *buf = NULL, *p;
	size_t len = 0;
	int r = root_read_config(d->o->config, &buf, &len);

	if (r < 0) {
		if (r != -ENOENT)
			note(d, "%s: %s", d->o->config ? d->o->config : CONFIG_PATH, strerror(-r));
		return;
	}
	for (p = buf; p < buf + len;) {
		char *nl = memchr(p, '\n', (size_t)(buf + len - p)), *c = p;

		if (!nl)
			nl = buf + len;
		while (c < nl && (*c == ' ' || *c == '\t'))
			c++;
		if (c < nl && *c == '#') {
			memmove(c + 1, nl, (size_t)(buf + len - nl));
			len -= (size_t)(nl - c - 1);
			nl = c + 1;
		}
		p = nl + 1;
	}
	put_file(d, &CONFIG_PATH[1], buf, len);
	free(buf);
}

/* Whether the n bytes at id are the host's boot_id. */
static bool this_boot(const struct dump *d, const char *id, size_t n)
{
	return d->boot_id[0] && n == strlen(d->boot_id) && !strncmp(id, d->boot_id, n);
}

/* After the JSON key at p ("KEY" and the blanks and colon after it), or NULL. */
static const char *after_key(const char *p, const char *key)
{
	size_t n = strlen(key);

	if (*p != '"' || strncmp(p + 1, key, n) != 0 || p[n + 1] != '"')
		return NULL;
	p += n + 2;
	return p + strspn(p, " \t\n:");
}

/* The end of a string's text (its closing quote, or where the text ends). */
static const char *text_end(const char *p, bool in_parens)
{
	for (; *p && *p != '"'; p++) {
		if (*p == '\\' && p[1])
			p++;
		else if (in_parens && *p == ')' && (p[1] == ';' || !strncmp(p + 1, " and ", 5)))
			break;
	}
	return p;
}

/*
 * The word of letters and digits at p (none before it), to f: 32 zeros where it is 32 hex
 * digits, a machine-id as BLS entry names carry it. Where the word ends.
 */
static const char *put_word(FILE *f, const char *p)
{
	size_t n = 0;

	while (isalnum((unsigned char)p[n]))
		n++;
	if (n == 32 && strspn(p, "0123456789abcdef") == 32)
		fputs("00000000000000000000000000000000", f);
	else
		fwrite(p, 1, n, f);
	return p + n;
}

/*
 * A file of gpuvm's own under /run/gpuvm, read as gpuvm reads it (root_read_own: no link
 * followed, a regular file), masked: each boot_id (this boot's as such), who held a device
 * (a holder's pid and comm, "held by pid P (COMM)" in a reason), and a machine-id (the next
 * boot's judgement names BLS entries by it).
 */
static void dump_record(struct dump *d, const char *path)
{
	char *buf = malloc(RECORD_MAX + 1), *out = NULL;
	const char *p, *q;
	size_t n = 0;
	ssize_t len;
	FILE *f;

	if (!buf) {
		stop(d, -ENOMEM, path);
		return;
	}
	len = root_read_own(path, buf, RECORD_MAX + 1);
	if (len < 0) {
		unread(d, path, (int)len);
		free(buf);
		return;
	}
	f = open_memstream(&out, &n);
	if (!f) {
		free(buf);
		stop(d, -ENOMEM, path);
		return;
	}
	for (p = buf; *p;) {
		if ((q = after_key(p, "boot_id")) && *q == '"') {
			fwrite(p, 1, (size_t)(q - p), f);
			p = q + 1;
			q = strchrnul(p, '"');
			fprintf(f, "\"%s",
				this_boot(d, p, (size_t)(q - p)) ? BOOT_ID_THIS : BOOT_ID_OTHER);
			p = q;
		} else if ((q = after_key(p, "comm")) && *q == '"') {
			fwrite(p, 1, (size_t)(q - p), f);
			fputs("\"-", f);
			p = text_end(q + 1, false);
		} else if (((q = after_key(p, "pid")) && isdigit((unsigned char)*q)) ||
			   (q = startswith(p, "held by pid ") ? p + 12 : NULL)) {
			fwrite(p, 1, (size_t)(q - p), f);
			fputc('0', f);
			p = q + strspn(q, "0123456789");
			if (startswith(p, " (")) {
				fputs(" (-", f);
				p = text_end(p + 2, true);
			}
		} else if (isalnum((unsigned char)*p)) {
			p = put_word(f, p);
		} else {
			fputc(*p++, f);
		}
	}
	if (fclose(f) == 0)
		put_file(d, path, out, n);
	else
		stop(d, -ENOMEM, path);
	free(out);
	free(buf);
}

/* The lines of text (len bytes) that keep() takes, as the file path. */
static void put_lines(struct dump *d, const char *path, const char *text, size_t len,
		      bool (*keep)(struct dump *d, const char *line, size_t n))
{
	char *out = malloc(len + 1);
	const char *p = text;
	size_t n = 0;

	if (!out) {
		stop(d, -ENOMEM, path);
		return;
	}
	while (p < text + len) {
		const char *nl = memchr(p, '\n', (size_t)(text + len - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(text + len - p);

		if (nl && keep(d, p, l)) {
			memcpy(out + n, p, l + 1);
			n += l + 1;
		}
		p += l + 1;
	}
	put_file(d, path, out, n);
	free(out);
}

/* ----------------------------------------------------------------------- the host -- */

/* The lines of /proc/cpuinfo gpuvm reads (iommu.c: its first 4 KiB, vendor_id or CPU implementer). */
static void dump_cpuinfo(struct dump *d)
{
	char buf[4096], *at, *end;

	if (root_read("proc/cpuinfo", buf, sizeof(buf)) <= 0)
		return;
	at = strstr(buf, "vendor_id");
	if (!at)
		at = strstr(buf, "CPU implementer");
	if (!at) {
		put_file(d, "proc/cpuinfo", "", 0);
		return;
	}
	while (at > buf && at[-1] != '\n')
		at--;
	end = strchrnul(at, '\n');
	*end = '\n';
	put_file(d, "proc/cpuinfo", at, (size_t)(end - at) + 1);
}

static void dump_kernel(struct dump *d)
{
	char id[64];

	copy(d, "proc/sys/kernel/osrelease", DUMP_ATTR_MAX);
	dump_cmdline(d);
	dump_cpuinfo(d);
	if (root_read("proc/sys/kernel/random/boot_id", id, sizeof(id)) > 0) {
		rstrip(id);
		strscpy(d->boot_id, id, sizeof(d->boot_id));
		put_file(d, "proc/sys/kernel/random/boot_id", BOOT_ID_THIS "\n", sizeof(BOOT_ID_THIS));
	}
	dump_config(d);
	dump_record(d, STATE_PATH);
	dump_record(d, BOOT_STATE_PATH);
	dump_record(d, "run/gpuvm/pending");
	dump_record(d, "run/gpuvm/root-pending");
}

/* -------------------------------------------------------------- the PCI functions -- */

/* dir/sub's entries that want() takes, each with its file leaf (a node's dev, a type's name). */
static void entries_with(struct dump *d, const char *dir, const char *sub,
			 bool (*want)(const char *), const char *const *leaf)
{
	struct names l = { 0 };
	char path[PATH_MAX];
	size_t i, k;

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	listing(d, path, want, &l);
	for (i = 0; i < l.n; i++)
		for (k = 0; leaf[k]; k++) {
			snprintf(path, sizeof(path), "%s/%s/%s/%s", dir, sub, l.v[i], leaf[k]);
			copy(d, path, DUMP_ATTR_MAX);
		}
	names_free(&l);
}

/*
 * Whether reading the function's config would wake it: the kernel resumes a function in
 * D3cold for a config read. Without power_state (before 5.17), a runtime-suspended one is
 * taken to be there.
 */
static bool asleep(const char *dir)
{
	char path[PATH_MAX], buf[32];

	if (join(path, dir, "power_state") && root_read(path, buf, sizeof(buf)) > 0)
		return startswith(buf, "D3cold");
	return join(path, dir, "power/runtime_status") && root_read(path, buf, sizeof(buf)) > 0 &&
		startswith(buf, "suspended");
}

/*
 * What the dump adds, for the person who reads a report, to what the preparation read
 * (dump_read) of each function it reads in detail; nothing here is needed to replay a
 * plan or status. Why each is there:
 */
static const char *const diag_attrs[] = {
	/* its identity as lspci -nn prints it, to hold against its uevent */
	"vendor",
	"device",
	"subsystem_vendor",
	"subsystem_device",
	"class",
	"revision",
	/* whether vfio-pci can reset it, and whether it sleeps: a bind or a VM that fails */
	"reset_method",
	"power_state",
	"power/runtime_status",
	/* its BARs: one the firmware left unassigned stops a VM */
	"resource",
	/* a PF's VFs: how many, where, of which device, probed by their driver or not */
	"sriov_totalvfs",
	"sriov_numvfs",
	"sriov_offset",
	"sriov_stride",
	"sriov_vf_device",
	"sriov_drivers_autoprobe",
	/* the vGPU types kubevirt reads (its reads are not the preparation's) */
	"nvidia/creatable_vgpu_types",
};
/* who has it, whom it shares its group with, its PF */
static const char *const diag_links[] = { "driver", "iommu_group", "physfn" };

static void dump_diagnosis(struct dump *d, const struct pci_dev *dev)
{
	static const char *const dev_leaf[] = { "dev", NULL };
	static const char *const type_leaf[] = { "name", "device_api", "available_instances", NULL };
	char link[PATH_MAX], dir[PATH_MAX], path[PATH_MAX], buf[80];
	struct names l = { 0 };
	ssize_t n;
	size_t i;
	int r;

	snprintf(link, sizeof(link), "sys/bus/pci/devices/%s", dev->name);
	r = canon(d, link, dir, sizeof(dir));
	if (r < 0) {
		note(d, "/%s: %s", link, strerror(-r));
		return;
	}
	for (i = 0; i < ARRAY_SIZE(diag_attrs); i++) {
		if (join(path, dir, diag_attrs[i]))
			copy(d, path, DUMP_ATTR_MAX);
	}
	for (i = 0; i < ARRAY_SIZE(diag_links); i++) {
		if (join(path, dir, diag_links[i]))
			copy_link(d, path);
	}
	/* Config's header, 64 bytes (what any user may read), unless that would wake it. */
	if (join(path, dir, "config") && asleep(dir))
		note(d, "/%s: not read: the function is suspended", path);
	else if (join(path, dir, "config") && (n = root_read(path, buf, 65)) > 0)
		put_file(d, path, buf, (size_t)n);
	if (list(d, dir, path, sizeof(path), &l) < 0)
		return;
	for (i = 0; i < l.n; i++) {
		const char *e = l.v[i];

		if (startswith(e, "virtfn")) { /* its VFs */
			if (join(path, dir, e))
				copy_link(d, path);
		} else if (streq(e, "drm")) { /* the nodes that could hold it: plan --in-use */
			entries_with(d, dir, e, inuse_drm_node, dev_leaf);
		} else if (streq(e, "graphics")) {
			entries_with(d, dir, e, inuse_fb_node, dev_leaf);
		} else if (streq(e, "vfio-dev")) {
			entries_with(d, dir, e, inuse_vfio_node, dev_leaf);
		} else if (streq(e, "mdev_supported_types")) { /* kubevirt's mediatedDevices */
			entries_with(d, dir, e, NULL, type_leaf);
		}
	}
	names_free(&l);
}

static bool any(const char *name)
{
	(void)name;
	return true;
}

/*
 * The functions beyond what the preparation read: every function's name (the listing, as
 * ls /sys/bus/pci/devices shows it to whoever reads the report), /proc/bus/pci/devices whole
 * but bounded, and each function read in detail with dump_diagnosis.
 */
static void dump_functions(struct dump *d)
{
	const struct inventory *inv = &d->pp.inv;
	size_t i;

	listing(d, "sys/bus/pci/devices", any, NULL);
	if (copy(d, "proc/bus/pci/devices", DUMP_FILE_MAX) == -EFBIG)
		stop(d, -EFBIG, "proc/bus/pci/devices");
	for (i = 0; i < inv->n && !d->err; i++)
		if (d->keep[i] && inv->dev[i].details)
			dump_diagnosis(d, &inv->dev[i]);
}

/* ------------------------------------------------- the running host's root disk -- */

/* A space-separated field of a mountinfo line. */
static bool field(const char *line, size_t len, int nth, const char **f, size_t *flen)
{
	const char *p = line, *end = line + len, *e;

	for (; nth > 0; nth--) {
		p = memchr(p, ' ', (size_t)(end - p));
		if (!p)
			return false;
		p++;
	}
	e = memchr(p, ' ', (size_t)(end - p));
	*f = p;
	*flen = (size_t)((e ? e : end) - p);
	return *flen > 0;
}

static bool root_mount(struct dump *d, const char *line, size_t n)
{
	const char *f;
	size_t fl;

	(void)d;
	return field(line, n, 4, &f, &fl) && fl == 1 && *f == '/';
}

/*
 * The root's mount lines, masked: the mount's IDs, device number, mount point and file
 * system type stay; its root, options and super options read "masked", and so does its
 * source unless that is /dev/NAME of a block device the host has, which hostdev.c reads
 * (written so): a volume group named after the host, a label, an NFS server are not kept.
 */
static void put_mounts(struct dump *d, const char *text, size_t len)
{
	char *out = NULL, path[96], target[PATH_MAX];
	const char *line, *nl, *f, *t, *s, *sep, *b;
	size_t n = 0, l, fl, tl, sl;
	FILE *mf = open_memstream(&out, &n);

	if (!mf) {
		stop(d, -ENOMEM, "proc/self/mountinfo");
		return;
	}
	for (line = text; (nl = memchr(line, '\n', (size_t)(text + len - line))); line = nl + 1) {
		l = (size_t)(nl - line);
		sep = memmem(line, l, " - ", 3);
		if (!root_mount(d, line, l) || !field(line, l, 2, &f, &fl) || !sep ||
		    !field(sep + 3, (size_t)(nl - sep - 3), 0, &t, &tl))
			continue;
		fprintf(mf, "%.*s masked / masked - %.*s ", (int)(f + fl - line), line, (int)tl, t);
		b = NULL;
		if (field(sep + 3, (size_t)(nl - sep - 3), 1, &s, &sl) && sl > 5 && sl < 64 &&
		    !strncmp(s, "/dev/", 5)) {
			b = (const char *)memrchr(s, '/', sl) + 1;
			snprintf(path, sizeof(path), "sys/class/block/%.*s", (int)(s + sl - b), b);
			if (!valid_driver_name(path + 16) ||
			    root_link_target(path, target, sizeof(target)))
				b = NULL;
		}
		if (b)
			fprintf(mf, "/dev/%s masked\n", path + 16);
		else
			fputs("masked masked\n", mf);
	}
	if (fclose(mf) == 0)
		put_file(d, "proc/self/mountinfo", out, n);
	else
		stop(d, -ENOMEM, "proc/self/mountinfo");
	free(out);
}

/* The root's mount line, as hostdev.c reads it, masked (its disk's links: dump_read). */
static void dump_mounts(struct dump *d)
{
	char buf[16384];
	ssize_t n = root_read("proc/self/mountinfo", buf, sizeof(buf));

	if (n > 0)
		put_mounts(d, buf, (size_t)n);
}

/* ------------------------------------------------------- check's and kubevirt's -- */

static bool keep_iomem(struct dump *d, const char *line, size_t n)
{
	const char *name = memmem(line, n, " : ", 3);
	const struct inventory *inv = &d->pp.inv;
	size_t i, k;

	if (!name)
		return false;
	name += 3;
	k = (size_t)(line + n - name);
	if (iomem_is_framebuffer(name, k))
		return true;
	for (i = 0; i < inv->n; i++)
		if (d->keep[i] && inv->dev[i].details && k == strlen(inv->dev[i].name) &&
		    !memcmp(name, inv->dev[i].name, k))
			return true;
	return false;
}

static bool keep_fabric(struct dump *d, const char *line, size_t n)
{
	(void)d;
	while (n && (*line == ' ' || *line == '\t')) {
		line++;
		n--;
	}
	return n >= 12 && !strncmp(line, "FABRIC_MODE=", 12);
}

/* The lines keep() takes of what one read of max bytes gives, as check.c reads the file. */
static void dump_filtered(struct dump *d, const char *path, size_t max,
			  bool (*keep)(struct dump *d, const char *line, size_t n))
{
	char *buf = malloc(max);
	ssize_t n;

	if (!buf) {
		stop(d, -ENOMEM, path);
		return;
	}
	n = root_read(path, buf, max);
	if (n >= 0)
		put_lines(d, path, buf, (size_t)n, keep);
	else if (n < 0)
		unread(d, path, (int)n);
	free(buf);
}

static bool vfio_or_nvidia(const char *name)
{
	return startswith(name, "vfio") || startswith(name, "nvidia");
}

static int id_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/*
 * pci.ids as gpuvm finds it (the first of pciids_paths), with the lines of the IDs of the
 * functions the dump reads in detail only: each vendor's line, then its devices' lines.
 */
static void dump_pciids(struct dump *d)
{
	const struct inventory *inv = &d->pp.inv;
	char *ids, *out = NULL, name[160];
	size_t len = 0, which = 0, n = 0, i, olen = 0;
	uint32_t *id = malloc((inv->n + 1) * sizeof(*id));
	FILE *f;

	ids = pciids_read(&len, &which);
	if (!ids || !id || !(f = open_memstream(&out, &olen))) {
		free(ids);
		free(id);
		return;
	}
	for (i = 0; i < inv->n; i++)
		if (d->keep[i] && inv->dev[i].details && !inv->dev[i].unidentified)
			id[n++] = (uint32_t)inv->dev[i].vendor << 16 | inv->dev[i].device;
	qsort(id, n, sizeof(*id), id_cmp);
	for (i = 0; i < n; i++) {
		unsigned v = id[i] >> 16, dv = id[i] & 0xffff;
		char ven[5];

		if (i && id[i] == id[i - 1])
			continue;
		if (!i || v != id[i - 1] >> 16) {
			/* The vendor's line: the first that starts with its ID, as pciids_name() reads. */
			const char *p = ids;

			snprintf(ven, sizeof(ven), "%04x", v);
			while (p && *p && strncmp(p, ven, 4) != 0) {
				p = strchr(p, '\n');
				p = p ? p + 1 : NULL;
			}
			if (!p || !*p)
				continue;
			fprintf(f, "%.*s\n", (int)strcspn(p, "\n"), p);
		}
		if (pciids_name(ids, len, (uint16_t)v, (uint16_t)dv, name, sizeof(name)) == 0)
			fprintf(f, "\t%04x%s\n", dv, name);
	}
	if (fclose(f) == 0 && olen)
		put_file(d, pciids_paths[which], out, olen);
	free(out);
	free(ids);
	free(id);
}

/* ----------------------------------------------------------------- the modules -- */

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct modindex_entry *)a)->key, ((const struct modindex_entry *)b)->key);
}

/* An index and its text twin, under the dump's module directory. */
static void put_index(struct dump *d, const char *dir, const char *name, struct modindex_entry *e,
		      size_t n, const char *text, size_t tlen)
{
	char path[PATH_MAX], *bin;
	size_t blen, i, k;
	int r;

	qsort(e, n, sizeof(*e), entry_cmp);
	for (i = k = 0; i < n; i++)
		if (!k || strcmp(e[k - 1].key, e[i].key) != 0)
			e[k++] = e[i];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	put_file(d, path, text, tlen);
	r = modindex_build(e, k, &bin, &blen);
	if (r < 0) {
		note(d, "/%s.bin: %s", path, strerror(-r));
		return;
	}
	snprintf(path, sizeof(path), "%s/%s.bin", dir, name);
	put_file(d, path, bin, blen);
	free(bin);
}

/*
 * The modules gpuvm asks about, as the host's module directory answered: the vfio variant
 * of each function a vm-passthrough plan looked one up for (modules.alias: its exact
 * modalias), and whether vfio-pci and nvidia_vgpu_vfio are there (check: modules.dep, or
 * modules.builtin). Nothing when the host has no module directory.
 */
static void dump_modules(struct dump *d)
{
	static const char *const asked[] = { "vfio_pci", "nvidia_vgpu_vfio" };
	const struct inventory *inv = &d->pp.inv;
	struct modindex_entry *al = calloc(inv->n + 1, sizeof(*al)), dep[2], bi[2];
	char(*keys)[MODALIAS_LEN + 8] = calloc(inv->n + 1, sizeof(*keys));
	char dir[PATH_MAX], *atext = NULL, dtext[256] = "", btext[256] = "";
	char dval[2][64];
	size_t i, na = 0, nd = 0, nb = 0, at_len = 0, dt_len = 0, bt_len = 0;
	FILE *f = NULL;

	if (!al || !keys || !mod_dir() || streq(mod_dir(), "(none)") ||
	    (!d->o->root && root_opens(mod_dir()) < 0) || !(f = open_memstream(&atext, &at_len))) {
		free(al);
		free(keys);
		return;
	}
	snprintf(dir, sizeof(dir), "lib/modules/%s", d->pp.kver);
	for (i = 0; i < inv->n; i++) {
		const struct pci_dev *dev = &inv->dev[i];
		char alias[MODALIAS_LEN];

		if (!dev->variant[0])
			continue;
		pci_dev_modalias(dev, alias, sizeof(alias));
		snprintf(keys[na], sizeof(keys[na]), "vfio_%s", alias);
		al[na].key = keys[na];
		al[na].value = dev->variant;
		fprintf(f, "alias %s %s\n", keys[na], dev->variant);
		na++;
	}
	if (fclose(f) != 0) {
		stop(d, -ENOMEM, dir);
		na = 0;
	}
	for (i = 0; i < ARRAY_SIZE(asked); i++) {
		enum mod_state st = mod_state(asked[i], !d->o->root);

		if (st == MOD_AVAILABLE || st == MOD_LOADED) {
			snprintf(dval[nd], sizeof(dval[nd]), "kernel/%s.ko:", asked[i]);
			dep[nd] = (struct modindex_entry){ asked[i], dval[nd] };
			dt_len += (size_t)snprintf(dtext + dt_len, sizeof(dtext) - dt_len, "%s\n",
						   dval[nd]);
			nd++;
		} else if (st == MOD_BUILTIN) {
			bi[nb++] = (struct modindex_entry){ asked[i], "" };
			bt_len += (size_t)snprintf(btext + bt_len, sizeof(btext) - bt_len,
						   "kernel/%s.ko\n", asked[i]);
		}
	}
	put_index(d, dir, "modules.alias", al, na, atext, at_len);
	put_index(d, dir, "modules.dep", dep, nd, dtext, dt_len);
	put_index(d, dir, "modules.builtin", bi, nb, btext, bt_len);
	free(atext);
	free(al);
	free(keys);
}

static void dump_checks(struct dump *d)
{
	char buf[16];
	ssize_t n;

	dump_filtered(d, "proc/iomem", (size_t)256 * 1024, keep_iomem);
	n = root_read(SECURE_BOOT_VAR, buf, sizeof(buf));
	if (n > 0)
		put_file(d, SECURE_BOOT_VAR, buf, (size_t)n);
	dump_filtered(d, FABRIC_MANAGER_CFG, (size_t)256 * 1024, keep_fabric);
	listing(d, "sys/module", vfio_or_nvidia, NULL);
	copy(d, "sys/module/nvidia/version", DUMP_ATTR_MAX);
	dump_pciids(d);
	dump_modules(d);
}

/* ------------------------------------------------------ what the preparation read -- */

static void on_read(enum root_rec kind, const char *path, void *data)
{
	struct dump *d = data;

	while (*path == '/')
		path++;
	if (d->read_nomem)
		return;
	if (d->n_read == d->cap_read) {
		size_t cap = d->cap_read ? d->cap_read * 2 : 1024;
		struct read *v = realloc(d->read, cap * sizeof(*v));

		if (!v) {
			d->read_nomem = true;
			return;
		}
		d->read = v;
		d->cap_read = cap;
	}
	d->read[d->n_read].kind = kind;
	d->read[d->n_read].path = strdup(path);
	if (d->read[d->n_read].path)
		d->n_read++;
	else
		d->read_nomem = true;
}

static int read_cmp(const void *a, const void *b)
{
	const struct read *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	return c ? c : (int)x->kind - (int)y->kind;
}

/*
 * The files the dump's own readers put in the archive, masked or filtered (the command
 * line, the host config, gpuvm's records, the mounts, pci.ids, ...): not copied as read.
 */
static bool own_reader(const char *path)
{
	static const char *const exact[] = {
		"proc/cmdline",	       "proc/cpuinfo",	       "proc/sys/kernel/random/boot_id",
		"proc/self/mountinfo", "proc/bus/pci/devices", "proc/iomem"
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(exact); i++)
		if (streq(path, exact[i]))
			return true;
	for (i = 0; i < PCIIDS_PATHS; i++)
		if (streq(path, pciids_paths[i]))
			return true;
	return startswith(path, "etc/cmdline.d/") || streq(path, &CONFIG_PATH[1]) ||
		startswith(path, "run/gpuvm/") || streq(path, FABRIC_MANAGER_CFG);
}

static int first_entry(const char *name, void *data)
{
	(void)name;
	(void)data;
	return 1;
}

/* A name looked up: a link as the link, a directory as one, a file as it is. */
static void copy_name(struct dump *d, const char *path)
{
	char real[PATH_MAX], target[PATH_MAX];

	if (root_link_target(path, target, sizeof(target)) == 0) {
		copy_link(d, path);
	} else if (root_list(path, first_entry, NULL) >= 0) {
		if (canon(d, path, real, sizeof(real)) == 0)
			added(d, tarw_dir(&d->t, real), real);
	} else {
		copy(d, path, DUMP_ATTR_MAX);
	}
}

/*
 * A directory the preparation listed: each entry that is a link as the link, one that is a
 * directory as one; a file is there when a read of it put it there (it was read after the
 * listing, or one of the dump's own readers keeps it), else left out.
 */
static void listing_read(struct dump *d, const char *dir)
{
	struct names l = { 0 };
	char real[PATH_MAX], path[PATH_MAX], target[PATH_MAX];
	size_t i;

	if (list(d, dir, real, sizeof(real), &l) < 0)
		return;
	added(d, tarw_dir(&d->t, real), real);
	for (i = 0; i < l.n && !stopped(d, dir); i++) {
		if (!join(path, real, l.v[i]) || tarw_kind(&d->t, path))
			continue;
		if (root_link_target(path, target, sizeof(target)) == 0)
			put_link(d, path, target);
		else if (root_list(path, first_entry, NULL) >= 0)
			added(d, tarw_dir(&d->t, path), path);
	}
	names_free(&l);
}

static void copy_read(struct dump *d, const struct read *r)
{
	char real[PATH_MAX];
	const char *base, *path = r->path;
	int rc;

	switch (r->kind) {
	case ROOT_REC_FILE:
		/* where it is (a function's attribute under /sys/devices): what a note names */
		if (canon_parent(d, r->path, real, sizeof(real)) == 0)
			path = real;
		rc = copy(d, path, startswith(path, "sys/") ? DUMP_ATTR_MAX : DUMP_FILE_MAX);
		base = strrchr(path, '/');
		/* A function's uevent unreadable: kept empty, so it replays unidentified as here. */
		if (rc < 0 && rc != -ENOENT && rc != -ENOTDIR && !fatal(rc) && base &&
		    streq(base, "/uevent"))
			put_file(d, path, "", 0);
		break;
	case ROOT_REC_LINK:
		copy_link(d, r->path);
		break;
	case ROOT_REC_DIR:
		listing_read(d, r->path);
		break;
	case ROOT_REC_NAME:
		copy_name(d, r->path);
		break;
	}
}

/*
 * Each path the preparation read, once, as it read it: the files, links and names first,
 * then the directories it listed (whose files are in the archive by then).
 */
static void dump_read(struct dump *d)
{
	size_t i;
	int pass;

	if (d->n_read)
		qsort(d->read, d->n_read, sizeof(*d->read), read_cmp);
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < d->n_read && !d->err; i++) {
			const struct read *r = &d->read[i];

			if ((i && read_cmp(r, r - 1) == 0) || own_reader(r->path) ||
			    (r->kind == ROOT_REC_DIR) != (pass == 1))
				continue;
			copy_read(d, r);
		}
}

/* ------------------------------------------------------------------- the command -- */

static int prepare_read(struct dump *d);

/*
 * The preparation, and a plan in each mode, with rootio's recorder on: what they read is
 * what the dump copies; which functions the dump keeps. -errno.
 */
static int prepare(struct dump *d)
{
	int r = 0;

	root_record(on_read, d);
	r = prepare_read(d);
	root_record(NULL, NULL);
	if (r == 0 && d->read_nomem)
		r = -ENOMEM;
	return r;
}

/* prepare()'s reads, which the recorder keeps. */
static int prepare_read(struct dump *d)
{
	static const enum mode modes[] = { MODE_CONTAINER, MODE_VM_PASSTHROUGH, MODE_VM_VGPU };
	struct prep *pp = &d->pp;
	size_t i, m;

	if (prep_settings(pp, d->o->root, d->o->cmdline, d->o->config, SRC_LOOK, NULL) < 0 ||
	    prep_scan(pp) < 0)
		return -EIO;
	d->keep = calloc(pp->inv.n + 1, sizeof(*d->keep));
	if (!d->keep)
		return -ENOMEM;
	for (i = 0; i < pp->inv.n; i++)
		d->keep[i] = pp->inv.dev[i].details || !pp->inv.dev[i].partial;
	for (m = 0; m < ARRAY_SIZE(modes); m++) {
		pp->s.mode = modes[m];
		if (prep_plan(pp) < 0)
			return -EIO;
		for (i = 0; i < pp->inv.n; i++)
			d->keep[i] |= pp->p.dev[i].listed;
		plan_free(&pp->p);
		pp->planned = false;
	}
	return 0;
}

static void put_info(struct dump *d)
{
	char *text = NULL;
	size_t n = 0, i, kept = 0;
	FILE *f = open_memstream(&text, &n);

	if (!f) {
		stop(d, -ENOMEM, INFO_NAME);
		return;
	}
	for (i = 0; i < d->pp.inv.n; i++)
		kept += d->keep[i];
	fprintf(f,
		"gpuvm dump, format %d, made by gpuvm %s\n"
		"what gpuvm reads to decide, as a --root tree: see gpuvm(8), DUMP\n"
		"replay: mkdir DIR && tar -xf THIS.tar -C DIR && gpuvm --root DIR plan --mode MODE --json\n"
		"root: %s\ncommand line: %s\nhost config: %s\n"
		"functions: %zu listed, %zu read beyond their IDs\n",
		DUMP_FORMAT, GPUVM_VERSION, d->o->root ? "--root (its path is not kept)" : "/",
		d->o->cmdline ? "--cmdline" : "/proc/cmdline and /etc/cmdline.d",
		d->o->config ? "--config (kept as /etc/gpuvm/gpuvm.conf)" : CONFIG_PATH,
		d->pp.inv.n_all, kept);
	if (d->notes && fflush(d->notes) == 0 && d->notes_len)
		fwrite(d->notes_buf, 1, d->notes_len, f);
	if (fclose(f) == 0)
		added(d, tarw_file(&d->t, INFO_NAME, text, n), INFO_NAME);
	else
		stop(d, -ENOMEM, INFO_NAME);
	free(text);
}

int dump_collect(const struct dump_from *from, struct tarw *t, char *what, size_t size)
{
	struct dump d = { .o = from };
	int r;

	what[0] = '\0';
	d.deadline_ms = clock_ms(CLOCK_MONOTONIC) + DUMP_SECONDS * 1000ULL;
	d.notes = open_memstream(&d.notes_buf, &d.notes_len);
	r = d.notes ? tarw_init(&d.t, DUMP_BYTES_MAX, DUMP_ENTRIES_MAX) : -ENOMEM;
	if (r == 0)
		r = prepare(&d);
	if (r == 0) {
		dump_kernel(&d);
		dump_functions(&d);
		dump_mounts(&d);
		dump_checks(&d);
		dump_read(&d);
		put_info(&d);
		if (!d.err)
			added(&d, tarw_finish(&d.t), "the end of the archive");
		r = d.err;
		if (r)
			strscpy(what, d.what, size);
	}
	if (d.notes)
		fclose(d.notes);
	free(d.notes_buf);
	free(d.keep);
	while (d.n_read)
		free(d.read[--d.n_read].path);
	free(d.read);
	prep_fini(&d.pp);
	if (r == 0)
		*t = d.t;
	else
		tarw_free(&d.t);
	return r;
}
