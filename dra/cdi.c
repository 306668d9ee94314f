// SPDX-License-Identifier: MIT
/* The files gpuvm-dra writes (CDI specs, device metadata) and the attributes of a GPU. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cdi.h"
#include "vfiodev.h"

bool dns_label(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

bool dns_subdomain(const char *s)
{
	char label[64];
	size_t n;

	if (!*s || strlen(s) > 253)
		return false;
	for (;;) {
		n = strcspn(s, ".");
		if (n > 63)
			return false;
		memcpy(label, s, n);
		label[n] = '\0';
		if (!dns_label(label))
			return false;
		if (!s[n])
			return true;
		s += n + 1;
	}
}

bool uid_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 63)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

static void put(struct json_object *attrs, const char *key, const char *type, struct json_object *v)
{
	struct json_object *a = json_object_new_object();

	json_object_object_add(a, type, v);
	json_object_object_add(attrs, key, a);
}

struct json_object *gpu_attributes(const struct vfio_gpu *g, bool iommu_dev)
{
	struct json_object *a = json_object_new_object();
	char id[8];

	if (!a)
		return NULL;
	put(a, "resource.kubernetes.io/pciBusID", "string", json_object_new_string(g->bdf));
	if (g->pcie_root[0])
		put(a, "resource.kubernetes.io/pcieRoot", "string",
		    json_object_new_string(g->pcie_root));
	snprintf(id, sizeof(id), "0x%04x", g->vendor);
	put(a, DRA_DRIVER "/vendorID", "string", json_object_new_string(id));
	snprintf(id, sizeof(id), "0x%04x", g->device);
	put(a, DRA_DRIVER "/deviceID", "string", json_object_new_string(id));
	if (g->numa >= 0)
		put(a, DRA_DRIVER "/numaNode", "int", json_object_new_int(g->numa));
	if (g->group >= 0)
		put(a, DRA_DRIVER "/iommuGroup", "int", json_object_new_int(g->group));
	put(a, DRA_DRIVER "/driver", "string", json_object_new_string(g->driver));
	put(a, DRA_DRIVER "/vfioCdev", "bool", json_object_new_boolean(g->cdev[0] != '\0'));
	put(a, DRA_DRIVER "/iommufd", "bool", json_object_new_boolean(iommu_dev));
	/* Where the pin came from: gpuvm's record (a device without one is never published). */
	if (g->pin_sel[0])
		put(a, DRA_DRIVER "/pinnedBy", "string", json_object_new_string(g->pin_sel));
	if (g->pin_mode[0])
		put(a, DRA_DRIVER "/mode", "string", json_object_new_string(g->pin_mode));
	return a;
}

char *json_text(struct json_object *o, bool pretty)
{
	int flags = JSON_C_TO_STRING_NOSLASHESCAPE |
		(pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED : JSON_C_TO_STRING_PLAIN);
	const char *s = json_object_to_json_string_ext(o, flags);

	return s ? strdup(s) : NULL;
}

static int mkdirs(const char *dir)
{
	char p[PATH_MAX];
	size_t i, n = strlen(dir);

	if (n >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, dir, n + 1);
	for (i = 1; i <= n; i++)
		if (p[i] == '/' || p[i] == '\0') {
			char c = p[i];

			p[i] = '\0';
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				return -errno;
			p[i] = c;
		}
	return 0;
}

/* Whether path holds exactly data. */
static bool same(const char *path, const char *data)
{
	size_t n = strlen(data), got = 0;
	char buf[4096];
	bool eq = true;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return false;
	while (eq && (r = read(fd, buf, sizeof(buf))) > 0) {
		if ((size_t)r > n - got || memcmp(buf, data + got, (size_t)r) != 0)
			eq = false;
		got += (size_t)r;
	}
	close(fd);
	return eq && got == n;
}

int file_put(const char *dir, const char *name, const char *data, bool *changed)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	size_t n = strlen(data), off = 0;
	int fd, r;

	*changed = false;
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path) ||
	    snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	if (same(path, data))
		return 0;
	if ((r = mkdirs(dir)) < 0)
		return r;
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	while (off < n) {
		ssize_t w = write(fd, data + off, n - off);

		if (w < 0) {
			r = -errno;
			close(fd);
			unlink(tmp);
			return r;
		}
		off += (size_t)w;
	}
	if (fsync(fd) < 0) {
		r = -errno;
		close(fd);
		unlink(tmp);
		return r;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		r = -errno;
		unlink(tmp);
		return r;
	}
	*changed = true;
	return 0;
}
