// SPDX-License-Identifier: MIT
/* The boot's pending records under /run/gpuvm: written, read back and removed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "pending.h"
#include "rootio.h"
#include "util.h"
#include "writefile.h"

#define PENDING_DIR "run/gpuvm"
#define PENDING_NAME "pending"
#define PENDING_PATH PENDING_DIR "/" PENDING_NAME
#define ROOT_PENDING_NAME "root-pending"
#define PENDING_MAX 8192

struct pending_ctx {
	struct source *src;
	bool ok;
};

static void on_pending(const struct config_item *it, void *data)
{
	struct pending_ctx *c = data;
	struct source *src = c->src;

	if (it->error)
		return;
	if (streq(it->key, "deadline_ms")) {
		char *end;
		unsigned long long v = strtoull(it->value, &end, 10);

		if (end != it->value && *end == '\0') {
			src->deadline_ms = v;
			c->ok = true;
		}
	} else if (streq(it->key, "first_result")) {
		strscpy(src->first_result, it->value, sizeof(src->first_result));
	} else if (streq(it->key, "held")) {
		size_t n = 0;

		if (pci_addr_list_parse(it->value, src->held + src->n_held,
					SOURCE_HELD_MAX - src->n_held, &n, NULL, 0) == 0)
			src->n_held += n;
	}
}

/* A pending record: 0 and the deadline and held devices in src, -ENOENT, -EINVAL. */
static int record_read(const char *path, struct source *src)
{
	struct pending_ctx c = { .src = src };
	char *buf = malloc(PENDING_MAX);
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	n = root_read_own(path, buf, PENDING_MAX);
	if (n >= 0)
		config_parse(buf, (size_t)n, on_pending, &c);
	free(buf);
	if (n < 0)
		return (int)n;
	src->pending = true;
	return c.ok ? 0 : -EINVAL;
}

int pending_read(struct source *src)
{
	return record_read(PENDING_PATH, src);
}

int root_pending_read(struct source *src)
{
	return record_read(ROOT_PENDING_PATH, src);
}

/* "held=ADDR" lines after a header, into buf; the length. */
static size_t held_lines(char *buf, size_t size, size_t len, const struct pci_addr *held, size_t n)
{
	size_t i;

	for (i = 0; i < n && i < SOURCE_HELD_MAX && len + 32 < size; i++) {
		char a[PCI_ADDR_LEN];

		pci_addr_format(&held[i], a, sizeof(a));
		len += (size_t)snprintf(buf + len, size - len, "held=%s\n", a);
	}
	return len;
}

int pending_write(const struct source *src, const struct pci_addr *held, size_t n)
{
	char buf[PENDING_MAX];
	size_t len;

	len = (size_t)snprintf(buf, sizeof(buf),
			       "# gpuvm apply --defer: these GPUs are held until config=%s can be read\n"
			       "# or the deadline passes; `gpuvm apply --resume` decides.\n"
			       "deadline_ms=%llu\n",
			       src->spec, src->deadline_ms);
	len = held_lines(buf, sizeof(buf), len, held, n);
	return root_write_file(PENDING_DIR, PENDING_NAME, buf, len);
}

/* A record goes from /run/gpuvm itself: a symlink in its place is not followed. */
static int record_remove(const char *name)
{
	return root_remove_file(PENDING_DIR, name);
}

int pending_remove(void)
{
	return record_remove(PENDING_NAME);
}

int root_pending_write(const struct pci_addr *held, size_t n, const char *first_result)
{
	char buf[PENDING_MAX];
	size_t len;

	len = (size_t)snprintf(buf, sizeof(buf), "%s",
			       "# gpuvm apply --defer: the mode is decided at the end of the initramfs,\n"
			       "# by `gpuvm apply --resume --sysroot DIR` from DIR/etc/gpuvm/gpuvm.conf.\n");
	if (first_result)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "first_result=%s\n",
					first_result);
	len = held_lines(buf, sizeof(buf), len, held, n);
	return root_write_file(PENDING_DIR, ROOT_PENDING_NAME, buf, len);
}

int root_pending_remove(void)
{
	return record_remove(ROOT_PENDING_NAME);
}
