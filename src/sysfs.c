// SPDX-License-Identifier: MIT
/* Root-prefixed reads and time-bounded writes of kernel attributes. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sysfs.h"
#include "util.h"

static int rootfd = -1;

int sysfs_init(const char *root)
{
	int fd = open(root ? root : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (rootfd >= 0)
		close(rootfd);
	rootfd = fd;
	return 0;
}

void sysfs_fini(void)
{
	if (rootfd >= 0)
		close(rootfd);
	rootfd = -1;
}

int sysfs_rootfd(void)
{
	return rootfd;
}

ssize_t sysfs_read(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = openat(rootfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	do
		n = read(fd, buf, size - 1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return n;
}

int sysfs_link_name(const char *path, char *buf, size_t size)
{
	char target[512];
	const char *base;
	ssize_t n;

	n = readlinkat(rootfd, path, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	base = strrchr(target, '/');
	return strscpy(buf, base ? base + 1 : target, size);
}

int sysfs_list(const char *dir, int (*cb)(const char *name, void *data), void *data)
{
	struct dirent *de;
	DIR *d;
	int fd, r = 0;

	fd = openat(rootfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' &&
		    (de->d_name[1] == '\0' || (de->d_name[1] == '.' && de->d_name[2] == '\0')))
			continue;
		r = cb(de->d_name, data);
		if (r)
			break;
	}
	closedir(d);
	return r;
}

bool sysfs_exists(const char *path)
{
	return faccessat(rootfd, path, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

static int write_once(const char *path, const char *value)
{
	size_t len = strlen(value);
	ssize_t n;
	int fd, r = 0;

	/* O_TRUNC: as `echo >` does; sysfs ignores it, a fixture's file is replaced. */
	fd = openat(rootfd, path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	do
		n = write(fd, value, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		r = -errno;
	else if ((size_t)n != len)
		r = -EIO;
	if (close(fd) < 0 && r == 0 && errno != EINTR)
		r = -errno;
	return r;
}

/*
 * The write happens in a child so that a driver stuck in its remove() cannot hold the
 * boot: the parent waits timeout_ms for the child's answer on a pipe and moves on.
 */
int sysfs_write(const char *path, const char *value, unsigned timeout_ms)
{
	struct pollfd pfd;
	int p[2], r, status;
	pid_t pid;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(p[0]);
		close(p[1]);
		return r;
	}
	if (pid == 0) {
		int res, nul = open("/dev/null", O_RDWR | O_CLOEXEC);

		/* A child that may outlive us must not hold our caller's pipes open. */
		if (nul >= 0) {
			dup2(nul, STDIN_FILENO);
			dup2(nul, STDOUT_FILENO);
			dup2(nul, STDERR_FILENO);
		}
		res = write_once(path, value);

		close(p[0]);
		if (write(p[1], &res, sizeof(res)) != sizeof(res))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	pfd.fd = p[0];
	pfd.events = POLLIN;
	do
		r = poll(&pfd, 1, (int)timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r == 0) {
		/* Still blocked in the kernel: leave the child; it cannot be killed anyway. */
		close(p[0]);
		return -ETIMEDOUT;
	}
	do
		n = read(p[0], &r, sizeof(r));
	while (n < 0 && errno == EINTR);
	close(p[0]);
	if (n != sizeof(r))
		r = -EIO;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return r;
}

static int mkdir_parents(const char *dir)
{
	char path[256];
	size_t i;

	if (strscpy(path, dir, sizeof(path)) < 0)
		return -ENAMETOOLONG;
	for (i = 1;; i++) {
		if (path[i] == '/' || path[i] == '\0') {
			char c = path[i];

			path[i] = '\0';
			if (mkdirat(rootfd, path, 0755) < 0 && errno != EEXIST)
				return -errno;
			path[i] = c;
			if (c == '\0')
				return 0;
		}
	}
}

int sysfs_write_file(const char *dir, const char *name, const char *data, size_t len)
{
	char tmp[300], dst[300];
	size_t off = 0;
	int fd, dfd, r = 0;

	r = mkdir_parents(dir);
	if (r < 0)
		return r;
	snprintf(tmp, sizeof(tmp), "%s/.%s.%ld", dir, name, (long)getpid());
	snprintf(dst, sizeof(dst), "%s/%s", dir, name);
	fd = openat(rootfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	while (off < len) {
		ssize_t n = write(fd, data + off, len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		off += (size_t)n;
	}
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(rootfd, tmp, rootfd, dst) < 0)
		r = -errno;
	if (r < 0) {
		unlinkat(rootfd, tmp, 0);
		return r;
	}
	dfd = openat(rootfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}
