// SPDX-License-Identifier: MIT
/*
 * floorprog: the per-function part of the syscall floor as a program, to time it on this
 * machine. It does what any tool that plans from sysfs must at least do and nothing else:
 * list /sys/bus/pci/devices with one 64 KiB getdents64 buffer, then per function open, read
 * and close uevent (the IOMMU groups of the few devices that matter are read from their
 * own listings, not per function). Built static with musl like gpuvm, so that its wall
 * time is the floor's: what `gpuvm plan` could cost here if it did no other work.
 *
 *   floorprog ROOT      (ROOT as gpuvm's --root; exit 0, prints the number of functions)
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

int main(int argc, char **argv)
{
	char path[512], buf[1024];
	int root, dir, n = 0;
	long got;

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
			size_t len = strlen(d->d_name);
			int fd;

			off += d->d_reclen;
			if (d->d_name[0] == '.' || len > 64)
				continue;
			memcpy(path, "sys/bus/pci/devices/", 20);
			memcpy(path + 20, d->d_name, len);
			memcpy(path + 20 + len, "/uevent", 8);
			fd = openat(root, path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				if (read(fd, buf, sizeof(buf)) > 0)
					n++;
				close(fd);
			}
		}
	}
	close(dir);
	printf("%d\n", n);
	return 0;
}
