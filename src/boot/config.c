// SPDX-License-Identifier: MIT
/* The host config: a small KEY=VALUE format that a label mirror can write. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "util.h"
#include "writefile.h"

static bool valid_key(const char *k)
{
	if (!*k)
		return false;
	for (; *k; k++) {
		unsigned char c = (unsigned char)*k;

		if (!isalnum(c) && c != '_' && c != '-' && c != '.' && c != '/')
			return false;
	}
	return true;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	rstrip(s);
	return s;
}

static void parse_line(char *s, unsigned lineno, config_cb cb, void *data)
{
	struct config_item it = { .line = lineno };
	char *eq, *key, *val;
	size_t n;

	s = trim(s);
	if (*s == '\0' || *s == '#')
		return;
	eq = strchr(s, '=');
	if (!eq) {
		it.error = "expected KEY=VALUE";
		cb(&it, data);
		return;
	}
	*eq = '\0';
	key = trim(s);
	val = trim(eq + 1);
	n = strlen(val);
	if (n >= 2 && (val[0] == '"' || val[0] == '\'') && val[n - 1] == val[0]) {
		val[n - 1] = '\0';
		val++;
	}
	if (!valid_key(key)) {
		it.error = "invalid key";
		cb(&it, data);
		return;
	}
	it.key = key;
	it.value = val;
	cb(&it, data);
}

int config_parse(const char *buf, size_t len, config_cb cb, void *data)
{
	char line[CONFIG_LINE_MAX];
	unsigned lineno = 0;
	size_t i = 0;

	while (i < len) {
		struct config_item bad = { 0 };
		const char *start = buf + i;
		const char *end = memchr(start, '\n', len - i);
		size_t n = end ? (size_t)(end - start) : len - i;

		lineno++;
		i += n + (end ? 1 : 0);
		bad.line = lineno;
		if (n >= sizeof(line)) {
			bad.error = "line too long";
			cb(&bad, data);
			continue;
		}
		if (memchr(start, '\0', n)) {
			bad.error = "NUL byte in line";
			cb(&bad, data);
			continue;
		}
		memcpy(line, start, n);
		line[n] = '\0';
		if (n > 0 && line[n - 1] == '\r')
			line[n - 1] = '\0';
		parse_line(line, lineno, cb, data);
	}
	return 0;
}

int config_read(const char *path, char **buf, size_t *len)
{
	return config_read_max(path, CONFIG_MAX_SIZE, buf, len);
}

/* Read the regular file open at fd, at most max bytes; closes fd. */
static int read_fd(int fd, size_t max, char **buf, size_t *len)
{
	struct stat st;
	int r = 0;

	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		r = -EISDIR;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = -EINVAL;
		goto out;
	}
	if ((size_t)st.st_size > max) {
		r = -EFBIG;
		goto out;
	}
	r = read_whole(fd, max, buf, len);
out:
	close(fd);
	return r;
}

int config_read_max(const char *path, size_t max, char **buf, size_t *len)
{
	/* door: a path of the caller's (--config, --pciids), never one beneath the root */
	int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	*buf = NULL;
	*len = 0;
	if (fd < 0)
		return -errno;
	return read_fd(fd, max, buf, len);
}

void config_read_why(int err, size_t max, char *buf, size_t size)
{
	if (err == -ELOOP)
		snprintf(buf, size, "a symlink on the way: not followed");
	else if (err == -EMLINK)
		snprintf(buf, size, "has another hard link: not read");
	else if (err == -EINVAL)
		snprintf(buf, size, "not a regular file");
	else if (err == -EXDEV)
		snprintf(buf, size, "'..' on the way: not followed");
	else if (err == -EFBIG)
		snprintf(buf, size, "larger than %zu bytes", max);
	else
		snprintf(buf, size, "cannot read: %s", strerror(-err));
}

/* The key of a line, as parse_line sees it (same trimming), into key; false if none. */
static bool line_key(const char *line, size_t n, char *key, size_t size)
{
	const char *eq = memchr(line, '=', n);
	size_t i = 0, end;

	while (i < n && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i == n || line[i] == '#' || !eq)
		return false;
	end = (size_t)(eq - line);
	while (end > i && isspace((unsigned char)line[end - 1]))
		end--;
	if (end == i || end - i >= size)
		return false;
	memcpy(key, line + i, end - i);
	key[end - i] = '\0';
	return true;
}

/* The new text: old with KEY=VALUE set. The caller frees *out. */
static int rewrite(const char *old, size_t len, const char *key, const char *value,
		   bool (*same_key)(const char *a, const char *b), char **out, size_t *outlen)
{
	size_t i = 0, last = (size_t)-1, last_end = 0, cap = len + strlen(key) + strlen(value) + 4;
	char lkey[128], *buf, spelled[128];

	strscpy(spelled, key, sizeof(spelled));
	while (i < len) {
		const char *nl = memchr(old + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - old - i) : len - i;

		if (line_key(old + i, n, lkey, sizeof(lkey)) && same_key(lkey, key)) {
			last = i;
			last_end = i + n;
			strscpy(spelled, lkey, sizeof(spelled));
		}
		i += n + (nl ? 1 : 0);
	}
	cap += strlen(spelled);
	buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;
	/* memcpy, not %.*s: the old text may hold NUL bytes, which must survive. */
	if (last != (size_t)-1) {
		size_t o = 0;

		memcpy(buf, old, last);
		o = last;
		o += (size_t)sprintf(buf + o, "%s=%s", spelled, value);
		memcpy(buf + o, old + last_end, len - last_end);
		*outlen = o + len - last_end;
	} else {
		size_t o = len;

		memcpy(buf, old, len);
		if (len && old[len - 1] != '\n')
			buf[o++] = '\n';
		o += (size_t)sprintf(buf + o, "%s=%s\n", key, value);
		*outlen = o;
	}
	*out = buf;
	return 0;
}

#define STR_(x) #x
#define STR(x) STR_(x)
#define LOCK_BUSY                                                                                  \
	"another process holds its lock file " CONFIG_LOCK_NAME                                    \
	" (waited " STR(CONFIG_LOCK_WAIT_S) " s)"
#define LOCK_LINK "its lock file " CONFIG_LOCK_NAME " is a symbolic link (not followed)"
#define LOCK_NOT_REG "its lock file " CONFIG_LOCK_NAME " is not a regular file"
#define LOCK_LINKS "its lock file " CONFIG_LOCK_NAME " has more than one hard link"
#define LOCK_NAMED "its name is that of the lock file (" CONFIG_LOCK_NAME ")"

/*
 * Open the lock file in dfd, creating it 0600: only who can write the directory can open it,
 * where the directory itself is open to every reader (and so to their flock). Nothing but a
 * file of ours is opened: a symlink is not followed (O_NOFOLLOW, also with O_CREAT), and
 * something else at the name (a FIFO, a device: looked at before it is opened), or a file
 * with another hard link, is refused. One that another writer left open to others is made
 * 0600 again. The descriptor, or -errno with *why.
 */
static int open_lock(int dfd, const char **why)
{
	struct stat st;
	int fd, r;

	/* door: dfd is the config's directory, from root_open_dir() or --config's path */
	if (fstatat(dfd, CONFIG_LOCK_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode)) {
		*why = S_ISLNK(st.st_mode) ? LOCK_LINK : LOCK_NOT_REG;
		return S_ISLNK(st.st_mode) ? -ELOOP : -EINVAL;
	}
	/* door: in the config's directory, as above */
	fd = openat(dfd, CONFIG_LOCK_NAME,
		    O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
	if (fd < 0) {
		r = -errno;
		if (r == -ELOOP)
			*why = LOCK_LINK;
		else if (r == -EISDIR)
			*why = LOCK_NOT_REG;
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
	} else if (!S_ISREG(st.st_mode)) {
		*why = LOCK_NOT_REG;
		r = -EINVAL;
	} else if (st.st_nlink > 1) {
		*why = LOCK_LINKS;
		r = -EMLINK;
	} else {
		if ((st.st_mode & 0077) && fchmod(fd, st.st_mode & 0700) < 0) {
			r = -errno;
			close(fd);
			return r;
		}
		return fd;
	}
	close(fd);
	return r;
}

/*
 * Wait for the lock, CONFIG_LOCK_WAIT_S at most (-ETIMEDOUT): a writer that never lets go
 * must not hang the label mirror. Polled: flock(2) itself waits forever.
 */
static int lock_wait(int fd)
{
	struct timespec pause = { 0, 1000000 }; /* 1 ms, doubled up to 16 ms */
	unsigned long long start = clock_ms(CLOCK_MONOTONIC);

	for (;;) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		if (clock_ms(CLOCK_MONOTONIC) - start >= CONFIG_LOCK_WAIT_S * 1000ULL)
			return -ETIMEDOUT;
		nanosleep(&pause, NULL);
		if (pause.tv_nsec < 16000000)
			pause.tv_nsec *= 2;
	}
}

int config_update(int dirfd, const char *path, const char *key, const char *value,
		  bool (*same_key)(const char *a, const char *b), bool *changed, const char **why)
{
	char dir[PATH_MAX], tmp[NAME_MAX + 1];
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	char *old = NULL, *text = NULL;
	size_t oldlen = 0, len = 0;
	struct stat st;
	int dfd, fd, lfd = -1, r;
	mode_t mode = 0644;

	*changed = false;
	*why = NULL;
	if (!*base)
		return -EISDIR;
	if (streq(base, CONFIG_LOCK_NAME)) {
		*why = LOCK_NAMED;
		return -EINVAL;
	}
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		strscpy(dir, ".", sizeof(dir));
	if (!*dir)
		strscpy(dir, "/", sizeof(dir));
	dfd = wf_open_dir(dirfd, dir, true, why);
	if (dfd < 0)
		return dfd;
	/*
	 * One writer at a time: the lock is a file of the directory that the rename leaves
	 * alone, so the rename cannot lose it.
	 */
	lfd = open_lock(dfd, why);
	if (lfd < 0) {
		r = lfd;
		goto out;
	}
	r = lock_wait(lfd);
	if (r < 0) {
		if (r == -ETIMEDOUT)
			*why = LOCK_BUSY;
		goto out;
	}
	/* The old file is read only when it is the config itself: a regular file, one link. */
	r = wf_open_old(dfd, base, why);
	if (r >= 0) {
		if (fstat(r, &st) == 0)
			mode = st.st_mode & 0777;
		r = read_fd(r, CONFIG_MAX_SIZE, &old, &oldlen);
	}
	if (r == -ENOENT) {
		old = NULL;
		oldlen = 0;
	} else if (r < 0) {
		goto out;
	}
	r = rewrite(old ? old : "", oldlen, key, value, same_key, &text, &len);
	if (r < 0)
		goto out;
	if (old && len == oldlen && memcmp(old, text, len) == 0)
		goto out; /* already so: nothing to write */
	fd = wf_create_tmp(dfd, base, mode, tmp, sizeof(tmp), why);
	if (fd < 0) {
		r = fd;
		goto out;
	}
	if ((r = write_all(fd, text, len)) < 0 || fsync(fd) < 0) {
		r = r < 0 ? r : -errno;
		goto fail;
	}
	if (close(fd) < 0) {
		fd = -1;
		r = -errno;
		goto fail;
	}
	fd = -1;
	/* door: dfd walked by writefile.c from the caller's directory (root_open_dir()) */
	if (renameat(dfd, tmp, dfd, base) < 0) {
		r = -errno;
		goto fail;
	}
	fsync(dfd);
	*changed = true;
	r = 0;
	goto out;
fail:
	if (fd >= 0)
		close(fd);
	unlinkat(dfd, tmp, 0); /* door: the temporary made above, in the same directory */
out:
	free(old);
	free(text);
	if (lfd >= 0)
		close(lfd); /* drops the lock */
	close(dfd);
	return r;
}
