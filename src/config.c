// SPDX-License-Identifier: MIT
/* The host config: a small KEY=VALUE format that a label mirror can write. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "util.h"

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

int config_read(int dirfd, const char *path, char **buf, size_t *len)
{
	struct stat st;
	char *b = NULL;
	size_t got = 0;
	int fd, r = 0;

	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
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
	if (st.st_size > CONFIG_MAX_SIZE) {
		r = -EFBIG;
		goto out;
	}
	b = malloc(CONFIG_MAX_SIZE + 1);
	if (!b) {
		r = -ENOMEM;
		goto out;
	}
	for (;;) {
		ssize_t k = read(fd, b + got, CONFIG_MAX_SIZE + 1 - got);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			goto out;
		}
		if (k == 0)
			break;
		got += (size_t)k;
		if (got > CONFIG_MAX_SIZE) {
			r = -EFBIG;	/* grew while we read it */
			goto out;
		}
	}
	b[got] = '\0';
	*buf = b;
	*len = got;
	b = NULL;
out:
	free(b);
	close(fd);
	return r;
}
