// SPDX-License-Identifier: MIT
/*
 * floorprog: the per-function part of the syscall floor as a program, to time it on this
 * machine. It does what any tool that plans from sysfs must at least do to learn every PCI
 * function and its IDs, and nothing else: list /sys/bus/pci/devices with one 64 KiB
 * getdents64 buffer, then read /proc/bus/pci/devices (every function's vendor and device,
 * one line each) through a 64 KiB buffer. gpuvm's scan does that, then reads more only for
 * the functions a plan can touch. With -u, the per-function way instead: open, read and
 * close each function's uevent (what gpuvm did before its one-listing inventory, and what
 * a shell loop over sysfs does). Built static with musl like gpuvm, so that its wall time is the floor's:
 * what `gpuvm plan` could cost here if it did no other work.
 *
 *   floorprog [-u] ROOT   (ROOT as gpuvm's --root; exit 0, prints the number of functions)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct linux_dirent64 {
	unsigned long long d_ino;
	long long d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static char dents[65536];

static int uevent(int root, const char *name)
{
	char path[512], buf[1024];
	size_t len = strlen(name);
	int fd, ok = 0;

	if (len > 64)
		return 0;
	memcpy(path, "sys/bus/pci/devices/", 20);
	memcpy(path + 20, name, len);
	memcpy(path + 20 + len, "/uevent", 8);
	fd = openat(root, path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ok = read(fd, buf, sizeof(buf)) > 0;
		close(fd);
	}
	return ok;
}

int main(int argc, char **argv)
{
	int root, dir, fd, n = 0, lines = 0, per_function = 0;
	long got;

	if (argc == 3 && strcmp(argv[1], "-u") == 0) {
		per_function = 1;
		argv++;
		argc--;
	}
	if (argc != 2)
		return 2;
	root = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return 1;
	dir = openat(root, "sys/bus/pci/devices", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return 1;
	while ((got = syscall(SYS_getdents64, dir, dents, sizeof(dents))) > 0) {
		for (long off = 0; off < got;) {
			struct linux_dirent64 *d = (struct linux_dirent64 *)(dents + off);

			off += d->d_reclen;
			if (d->d_name[0] == '.')
				continue;
			n += per_function ? uevent(root, d->d_name) : 1;
		}
	}
	close(dir);
	if (!per_function) {
		fd = openat(root, "proc/bus/pci/devices", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return 1;
		while ((got = read(fd, dents, sizeof(dents))) > 0)
			for (char *p = dents; (p = memchr(p, '\n', (size_t)(dents + got - p))); p++)
				lines++;
		close(fd);
		if (lines != n)
			fprintf(stderr,
				"floorprog: %d functions listed, %d lines in /proc/bus/pci/devices\n",
				n, lines);
	}
	printf("%d\n", n);
	return 0;
}
