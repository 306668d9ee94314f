/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_CPIO_H
#define GPUVM_CPIO_H

#include <stdbool.h>
#include <stddef.h>

/*
 * An initramfs as the kernel reads it (Documentation/driver-api/early-userspace/
 * buffer-format.rst): newc cpio archives ("070701", or "070702" with a checksum), NUL
 * padding between them, and a compressed stream that holds more of them. The parser is fed
 * the bytes in chunks of any size and keeps only a member's header and name, and the first
 * bytes of a member the caller asks for.
 */
#define CPIO_NAME_MAX 4096 /* the kernel's PATH_MAX: a longer name is refused */

struct cpio_visit {
	/* A member's name and size: how many of its bytes data() should get (0: none). */
	size_t (*member)(const char *name, unsigned long size, void *arg);
	/* The bytes asked for, once the member has been read (len <= what member() asked). */
	void (*data)(const char *name, const char *buf, size_t len, void *arg);
	void *arg;
};

struct cpio {
	const struct cpio_visit *v;
	int st;		    /* where the parser is (cpio.c) */
	bool in_archive;    /* between a member and its archive's trailer */
	size_t have, need;  /* header and name bytes gathered, and wanted */
	unsigned long left; /* data and padding bytes of the member still to come */
	unsigned long size; /* the member's data size */
	char *keep;	    /* the member's bytes kept for data() */
	size_t keep_max, kept;
	unsigned long long off; /* bytes consumed so far */
	char hdr[110 + CPIO_NAME_MAX + 4];
};

void cpio_init(struct cpio *c, const struct cpio_visit *v);
/*
 * Parse n more bytes. 0: all taken; 1: the archives ended and what follows, from c->off
 * is not a cpio archive (a compressed stream); -EINVAL: a malformed
 * archive; -ENOMEM.
 */
int cpio_feed(struct cpio *c, const unsigned char *p, size_t n);
/* At the end of the bytes: 0 when the last archive ended whole, else -ENODATA. */
int cpio_finish(struct cpio *c);
void cpio_fini(struct cpio *c);

/* A compressed stream's decompressor, by its first bytes (at least 6); NULL when none. */
const char *cpio_decompressor(const unsigned char *p, size_t n);

/*
 * Read the initramfs image open at fd: its uncompressed archives, then the compressed
 * stream after them, through the host's decompressor (`TOOL -dc`, found on PATH), bounded
 * to timeout_ms and max_out decompressed bytes. 0, or -errno with why saying what could not
 * be read ("no zstd to read it", "truncated").
 */
int cpio_read_image(int fd, const struct cpio_visit *v, unsigned timeout_ms,
		    unsigned long long max_out, char *why, size_t why_size);

#endif
