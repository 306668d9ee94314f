// SPDX-License-Identifier: MIT
/* The files gpuvm writes: no symlink followed, no file but its own opened for writing. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"
#include "writefile.h"

/*
 * One component under cur: opened, or made and opened; a symlink is never followed. One
 * made here is 0755 whatever the umask (a caller's 077 made /run/gpuvm/metrics 0700, which
 * node-exporter, running as nobody, cannot read): set on the descriptor, never by a path.
 */
static int open_component(int cur, const char *name, bool create, const char **why)
{
	struct stat st;
	bool made = false;
	int fd, tries;

	for (tries = 0; tries < 2; tries++) {
		fd = openat(cur, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			if (made)
				fchmod(fd, 0755);
			return fd;
		}
		if (errno == ENOENT && create && tries == 0) {
			if (mkdirat(cur, name, 0755) == 0)
				made = true;
			else if (errno != EEXIST)
				return -errno;
			continue;
		}
		break;
	}
	if (errno != ENOTDIR && errno != ELOOP)
		return -errno;
	/* O_DIRECTORY | O_NOFOLLOW says ENOTDIR for a symlink too: which one is it? */
	if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
		*why = "a directory on its path is a symbolic link (not followed)";
		return -ELOOP;
	}
	*why = "a component of its path is not a directory";
	return -ENOTDIR;
}

int wf_open_dir(int dirfd, const char *dir, bool create, const char **why)
{
	char path[PATH_MAX], *c, *next;
	int cur = dirfd, fd;

	*why = NULL;
	if (strscpy(path, dir, sizeof(path)) < 0)
		return -ENAMETOOLONG;
	c = path;
	if (*c == '/') {
		cur = openat(AT_FDCWD, "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cur < 0)
			return -errno;
	}
	for (; *c; c = next) {
		while (*c == '/')
			c++;
		if (!*c)
			break;
		next = strchrnul(c, '/');
		if (*next)
			*next++ = '\0';
		fd = open_component(cur, c, create, why);
		if (cur != dirfd)
			close(cur);
		if (fd < 0)
			return fd;
		cur = fd;
	}
	if (cur == dirfd) {
		/* No component ("", "/" under a root, "."): the start itself, as its own descriptor. */
		fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	return cur;
}

int wf_open_old(int dfd, const char *name, const char **why)
{
	struct stat st;
	int fd, r;

	*why = NULL;
	/* O_NONBLOCK: a FIFO planted under the name must not hang us at open. */
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP) {
			*why = "it is a symbolic link (not followed)";
			return -ELOOP;
		}
		return -errno;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		*why = "it is not a regular file";
		r = -EINVAL;
	} else if (st.st_nlink > 1) {
		/* another name of it could be anything: its bytes and mode are not ours to copy */
		*why = "it has more than one hard link";
		r = -EMLINK;
	} else {
		return fd;
	}
	close(fd);
	return r;
}

/*
 * This process's id, asked once: gpuvm forks only its writer process (rootio.c), which
 * creates no file, so the id read first stays this process's for every temporary.
 */
static long own_pid(void)
{
	static long pid;

	if (!pid)
		pid = (long)getpid();
	return pid;
}

int wf_create_tmp(int dfd, const char *name, mode_t mode, char *tmp, size_t size, const char **why)
{
	int fd, tries;

	*why = NULL;
	if (snprintf(tmp, size, ".%s.%ld.tmp", name, own_pid()) >= (int)size)
		return -ENAMETOOLONG;
	for (tries = 0; tries < 2; tries++) {
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd >= 0)
			break;
		/* A stale or planted one (a symlink, a hard link): its name goes, it is not opened. */
		if (errno != EEXIST || tries > 0 || unlinkat(dfd, tmp, 0) < 0) {
			if (errno == EEXIST || errno == EISDIR || errno == EPERM)
				*why = "its temporary file exists and cannot be removed";
			return -errno;
		}
	}
	if (fchmod(fd, mode) < 0) {
		int r = -errno;

		close(fd);
		unlinkat(dfd, tmp, 0);
		return r;
	}
	return fd;
}

const char *wf_strerror(int err)
{
	/* Only the walk says these: the files themselves are opened with O_EXCL or checked. */
	if (err == -ELOOP)
		return "a directory on its path is a symbolic link (not followed)";
	if (err == -ENOTDIR)
		return "a component of its path is not a directory";
	return strerror(-err);
}
