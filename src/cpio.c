// SPDX-License-Identifier: MIT
/*
 * Reading an initramfs image (cpio.h): the newc archives as the kernel's buffer format has
 * them, and the compressed stream after them through the host's own decompressor.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cpio.h"
#include "util.h"

enum {
	ST_GAP,
	ST_HDR,
	ST_DATA
};

#define HDR_LEN 110
#define ALIGN4(x) (((x) + 3) & ~3UL)

void cpio_init(struct cpio *c, const struct cpio_visit *v)
{
	memset(c, 0, offsetof(struct cpio, hdr));
	c->v = v;
	c->st = ST_GAP;
}

void cpio_fini(struct cpio *c)
{
	free(c->keep);
	c->keep = NULL;
}

/* Field i of the header: 8 hex digits, all of them. */
static int field(const struct cpio *c, size_t i, unsigned long *out)
{
	const char *f = c->hdr + 6 + 8 * i;

	if (startswith(f, "0x") || parse_hex_n(f, 8, 8, out) < 0)
		return -EINVAL;
	return 0;
}

/* The header and name are whole: the member starts (or the archive ends). */
static int member_start(struct cpio *c)
{
	const char *name = c->hdr + HDR_LEN;
	unsigned long namesize;

	if (field(c, 11, &namesize) < 0)
		return -EINVAL;
	if (name[namesize - 1] != '\0' || strlen(name) != namesize - 1)
		return -EINVAL;
	c->have = 0;
	if (streq(name, "TRAILER!!!")) {
		c->in_archive = false;
		c->st = ST_GAP;
		return 0;
	}
	c->in_archive = true;
	c->left = ALIGN4(c->size);
	c->kept = 0;
	c->keep_max = c->v && c->v->member ? c->v->member(name, c->size, c->v->arg) : 0;
	if (c->keep_max > c->size)
		c->keep_max = c->size;
	if (c->keep_max) {
		c->keep = malloc(c->keep_max);
		if (!c->keep)
			return -ENOMEM;
	}
	c->st = ST_DATA;
	return 0;
}

static void member_end(struct cpio *c)
{
	if (c->keep_max && c->v->data)
		c->v->data(c->hdr + HDR_LEN, c->keep, c->kept, c->v->arg);
	free(c->keep);
	c->keep = NULL;
	c->keep_max = 0;
	c->need = HDR_LEN;
	c->st = ST_HDR;
}

/* The first 6 bytes of a header, or its 110, are there: check them. */
static int header_check(struct cpio *c)
{
	unsigned long namesize, mode;

	if (c->have == 6) {
		if (memcmp(c->hdr, "070701", 6) != 0 && memcmp(c->hdr, "070702", 6) != 0)
			return c->in_archive ? -EINVAL : 1;
		return 0;
	}
	if (field(c, 1, &mode) < 0 || field(c, 6, &c->size) < 0 || field(c, 11, &namesize) < 0 ||
	    namesize == 0 || namesize > CPIO_NAME_MAX)
		return -EINVAL;
	c->need = ALIGN4(HDR_LEN + namesize);
	return 0;
}

int cpio_feed(struct cpio *c, const unsigned char *p, size_t n)
{
	while (n) {
		size_t k;
		int r;

		switch (c->st) {
		case ST_GAP:
			if (*p == '\0') {
				p++, n--, c->off++;
				continue;
			}
			c->st = ST_HDR;
			c->have = 0;
			c->need = HDR_LEN;
			continue;
		case ST_HDR:
			k = c->have < 6 ? 6 - c->have : c->need - c->have;
			if (k > n)
				k = n;
			memcpy(c->hdr + c->have, p, k);
			c->have += k;
			if (c->have == 6 || (c->have == HDR_LEN && c->need == HDR_LEN)) {
				r = header_check(c);
				if (r > 0) /* c->off: where the other bytes start */
					c->off -= c->have - k;
				if (r)
					return r;
			}
			p += k, n -= k, c->off += k;
			if (c->have == c->need) {
				r = member_start(c);
				if (r < 0)
					return r;
				if (c->st == ST_DATA && c->left == 0)
					member_end(c);
			}
			continue;
		default: /* ST_DATA: the data and its padding */
			k = n < c->left ? n : (size_t)c->left;
			if (c->kept < c->keep_max) {
				unsigned long at = ALIGN4(c->size) - c->left;
				size_t take = k;

				if (at < c->keep_max) {
					if (take > c->keep_max - at)
						take = c->keep_max - at;
					memcpy(c->keep + at, p, take);
					c->kept = at + take;
				}
			}
			p += k, n -= k, c->off += k;
			c->left -= k;
			if (c->left == 0)
				member_end(c);
			continue;
		}
	}
	return 0;
}

int cpio_finish(struct cpio *c)
{
	return c->st == ST_GAP && !c->in_archive ? 0 : -ENODATA;
}

/* The compressed formats the kernel can unpack an initramfs from, by their magic. */
static const struct {
	const char *magic;
	size_t len;
	const char *tool;
} formats[] = {
	{ "\x1f\x8b", 2, "gzip" },
	{ "\x1f\x9e", 2, "gzip" },
	{ "\xfd\x37\x7a\x58\x5a\x00", 6, "xz" },
	{ "\x5d\x00\x00", 3, "xz" }, /* lzma: xz reads it as well */
	{ "\x28\xb5\x2f\xfd", 4, "zstd" },
	{ "\x02\x21\x4c\x18", 4, "lz4" }, /* lz4's legacy frame, as the kernel makes it */
	{ "\x04\x22\x4d\x18", 4, "lz4" },
	{ "BZh", 3, "bzip2" },
	{ "\x89\x4c\x5a\x4f", 4, "lzop" },
};

const char *cpio_decompressor(const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(formats); i++)
		if (n >= formats[i].len && !memcmp(p, formats[i].magic, formats[i].len))
			return formats[i].tool;
	return NULL;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Spawn `tool -dc` reading fd (at its offset) into a pipe: the child's pid, or -errno. */
static pid_t spawn(const char *tool, int fd, int *out)
{
	int p[2], null;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid == 0) {
		null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (dup2(fd, 0) < 0 || dup2(p[1], 1) < 0 || (null >= 0 && dup2(null, 2) < 0))
			_exit(126);
		execlp(tool, tool, "-dc", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	*out = p[0];
	return pid;
}

/* Feed what tool -dc makes of fd into c, bounded; 0 or -errno with why. */
static int decompress(struct cpio *c, const char *tool, int fd, unsigned timeout_ms,
		      unsigned long long max_out, char *why, size_t why_size)
{
	long long end = now_ms() + timeout_ms;
	unsigned long long total = 0;
	unsigned char buf[16384];
	int in = -1, status, r = 0;
	pid_t pid = spawn(tool, fd, &in);

	if (pid < 0) {
		snprintf(why, why_size, "cannot run %s: %s", tool, strerror((int)-pid));
		return (int)pid;
	}
	for (;;) {
		struct pollfd pfd = { .fd = in, .events = POLLIN };
		long long wait = end - now_ms();
		ssize_t n;

		if (wait <= 0 || poll(&pfd, 1, (int)wait) == 0) {
			snprintf(why, why_size, "%s -dc took longer than %u ms", tool, timeout_ms);
			r = -ETIMEDOUT;
			break;
		}
		n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			snprintf(why, why_size, "reading %s -dc: %s", tool, strerror(errno));
			break;
		}
		if (n == 0)
			break;
		total += (unsigned long long)n;
		if (total > max_out) {
			snprintf(why, why_size, "over %llu MiB once decompressed", max_out >> 20);
			r = -EFBIG;
			break;
		}
		r = cpio_feed(c, buf, (size_t)n);
		if (r) {
			snprintf(why, why_size, "what %s -dc gives is not a cpio archive", tool);
			r = -EINVAL;
			break;
		}
	}
	close(in);
	if (r < 0)
		kill(pid, SIGKILL); /* our own child, and only it */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (r < 0)
		return r;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		snprintf(why, why_size, "no %s to read it", tool);
		return -ENOENT;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(why, why_size, "%s -dc failed: truncated or corrupt", tool);
		return -EINVAL;
	}
	return 0;
}

int cpio_read_image(int fd, const struct cpio_visit *v, unsigned timeout_ms,
		    unsigned long long max_out, char *why, size_t why_size)
{
	unsigned char buf[16384], magic[8];
	const char *tool;
	struct cpio *c;
	struct stat st;
	ssize_t n;
	int r = 0;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, why_size, "not a regular file");
		return -EINVAL;
	}
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	cpio_init(c, v);
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		r = cpio_feed(c, buf, (size_t)n);
		if (r)
			break;
		if (c->off > max_out) { /* a sparse file of zeros would never end */
			snprintf(why, why_size, "over %llu MiB of archives", max_out >> 20);
			r = -EFBIG;
			goto out;
		}
	}
	if (n < 0) {
		r = -errno;
		snprintf(why, why_size, "cannot read it: %s", strerror(errno));
		goto out;
	}
	if (r == 0) {
		r = cpio_finish(c);
		if (r < 0)
			snprintf(why, why_size, "truncated");
		goto out;
	}
	if (r < 0) {
		snprintf(why, why_size, "not a cpio archive at byte %llu", c->off);
		goto out;
	}
	/* The archives gave way to other bytes at c->off: a compressed stream, or garbage. */
	n = pread(fd, magic, sizeof(magic), (off_t)c->off);
	tool = n > 0 ? cpio_decompressor(magic, (size_t)n) : NULL;
	if (!tool) {
		snprintf(why, why_size, "neither cpio nor a compressed stream at byte %llu", c->off);
		r = -EINVAL;
		goto out;
	}
	if (lseek(fd, (off_t)c->off, SEEK_SET) < 0) {
		r = -errno;
		snprintf(why, why_size, "cannot seek: %s", strerror(errno));
		goto out;
	}
	cpio_fini(c);
	cpio_init(c, v);
	r = decompress(c, tool, fd, timeout_ms, max_out, why, why_size);
	if (r == 0 && cpio_finish(c) < 0) {
		snprintf(why, why_size, "truncated (what %s -dc gives ends inside an archive)", tool);
		r = -ENODATA;
	}
out:
	cpio_fini(c);
	free(c);
	return r;
}
