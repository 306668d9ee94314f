// SPDX-License-Identifier: MIT
/*
 * src/boot/blkdev.c against the host's libblkid and the real src/boot/rootio.c, not the fake kernel:
 * a root directory whose /proc/partitions lists devices and whose /dev/NAME are image files
 * made here without privileges (mkfs.ext4 -L -U, mkfs.vfat -i -n, sfdisk for a GPT with
 * fixed partition UUIDs and names, garbage bytes); a regular file probes like a block device.
 * blkdev_find: every tag, partition names (vdb2, nvme0n1p2), unlisted partitions, duplicates,
 * removable devices, devices without a file system, /proc/partitions' oddities.
 * blkdev_read_beneath: sizes, non-regular files, symlinks and '..' that leave the directory,
 * a crossed mount, a magic link; and its fallback for kernels without openat2.
 * Fault injection: each libblkid call that can fail is wrapped by the linker
 * (-Wl,--wrap, see the Makefile) and made to fail; the outcome is checked, and every probe
 * and every descriptor is released. blkdev_read_config mounts: root only, the e2e suite.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <blkid/blkid.h>
#include <linux/openat2.h>

#include "blkdev.h"
#include "rootio.h"
#include "tagspec.h"
#include "unit.h"

#define LABEL_A "gpuvm-a"
#define UUID_A "0c9c8a1e-3b1f-4b7e-9d2a-5f6e7d8c9b0a"
#define UUID_DUP "5d1f2e3a-9c8b-4a7d-8e6f-0a1b2c3d4e5f"
#define UUID_IN "7e2b9a44-1c3d-4e5f-8a9b-0c1d2e3f4a5b"
#define VFAT_ID "1234ABCD"
#define VFAT_UUID "1234-ABCD"
#define VFAT_LABEL "GPUVMCONF"
#define PART1_UUID "a1b2c3d4-0000-4000-8000-000000000001"
#define PART2_UUID "a1b2c3d4-0000-4000-8000-000000000002"
#define PART2_NAME "gpuvm-conf"
/* gpt2.img: gpt.img's layout and names, its own partition UUIDs (a disk partitioned alike). */
#define GPT2_PART1_UUID "b1b2c3d4-0000-4000-8000-000000000001"
#define GPT2_PART2_UUID "b1b2c3d4-0000-4000-8000-000000000002"
#define MPATH_UUID "mpath-3600a098038303053453f463045727a4b"

static char top[] = "/tmp/gpuvm-test-blkdev.XXXXXX";
static char root[sizeof(top) + 8], img[sizeof(top) + 8];
static bool have_images;

/* --- the wrapped libblkid calls ------------------------------------------------------ */

blkid_probe __real_blkid_new_probe(void);
void __real_blkid_free_probe(blkid_probe pr);
int __real_blkid_probe_set_device(blkid_probe pr, int fd, blkid_loff_t off, blkid_loff_t size);
int __real_blkid_do_safeprobe(blkid_probe pr);
int __real_blkid_probe_lookup_value(blkid_probe pr, const char *name, const char **data, size_t *len);
blkid_partlist __real_blkid_probe_get_partitions(blkid_probe pr);
int __real_blkid_partlist_numof_partitions(blkid_partlist ls);
blkid_partition __real_blkid_partlist_get_partition(blkid_partlist ls, int n);
const char *__real_blkid_partition_get_uuid(blkid_partition par);
const char *__real_blkid_partition_get_name(blkid_partition par);
long __real_syscall(long n, ...);

blkid_probe __wrap_blkid_new_probe(void);
void __wrap_blkid_free_probe(blkid_probe pr);
int __wrap_blkid_probe_set_device(blkid_probe pr, int fd, blkid_loff_t off, blkid_loff_t size);
int __wrap_blkid_do_safeprobe(blkid_probe pr);
int __wrap_blkid_probe_lookup_value(blkid_probe pr, const char *name, const char **data, size_t *len);
blkid_partlist __wrap_blkid_probe_get_partitions(blkid_probe pr);
int __wrap_blkid_partlist_numof_partitions(blkid_partlist ls);
blkid_partition __wrap_blkid_partlist_get_partition(blkid_partlist ls, int n);
const char *__wrap_blkid_partition_get_uuid(blkid_partition par);
const char *__wrap_blkid_partition_get_name(blkid_partition par);
long __wrap_syscall(long n, ...);

/* What fails: one call at a time. */
static struct {
	bool new_probe, set_device, get_partitions, numof, get_partition, part_uuid, part_name;
	bool safeprobe;
	int safeprobe_ret;  /* what blkid_do_safeprobe returns instead of probing */
	const char *lookup; /* the lookup_value name that fails, "*" for all */
	bool no_openat2;    /* syscall(SYS_openat2) fails with ENOSYS: Linux < 5.6 */
} fault;
static int probes_live, probes_made;

blkid_probe __wrap_blkid_new_probe(void)
{
	blkid_probe pr;

	if (fault.new_probe)
		return NULL;
	pr = __real_blkid_new_probe();
	if (pr) {
		probes_live++;
		probes_made++;
	}
	return pr;
}

void __wrap_blkid_free_probe(blkid_probe pr)
{
	if (pr)
		probes_live--;
	__real_blkid_free_probe(pr);
}

int __wrap_blkid_probe_set_device(blkid_probe pr, int fd, blkid_loff_t off, blkid_loff_t size)
{
	return fault.set_device ? -1 : __real_blkid_probe_set_device(pr, fd, off, size);
}

int __wrap_blkid_do_safeprobe(blkid_probe pr)
{
	return fault.safeprobe ? fault.safeprobe_ret : __real_blkid_do_safeprobe(pr);
}

int __wrap_blkid_probe_lookup_value(blkid_probe pr, const char *name, const char **data, size_t *len)
{
	if (fault.lookup && (strcmp(fault.lookup, "*") == 0 || strcmp(fault.lookup, name) == 0))
		return -1;
	return __real_blkid_probe_lookup_value(pr, name, data, len);
}

blkid_partlist __wrap_blkid_probe_get_partitions(blkid_probe pr)
{
	return fault.get_partitions ? NULL : __real_blkid_probe_get_partitions(pr);
}

int __wrap_blkid_partlist_numof_partitions(blkid_partlist ls)
{
	return fault.numof ? -1 : __real_blkid_partlist_numof_partitions(ls);
}

blkid_partition __wrap_blkid_partlist_get_partition(blkid_partlist ls, int n)
{
	return fault.get_partition ? NULL : __real_blkid_partlist_get_partition(ls, n);
}

const char *__wrap_blkid_partition_get_uuid(blkid_partition par)
{
	return fault.part_uuid ? NULL : __real_blkid_partition_get_uuid(par);
}

const char *__wrap_blkid_partition_get_name(blkid_partition par)
{
	return fault.part_name ? NULL : __real_blkid_partition_get_name(par);
}

long __wrap_syscall(long n, ...)
{
	long a[6];
	va_list ap;
	int i;

	if (n == SYS_openat2 && fault.no_openat2) {
		errno = ENOSYS;
		return -1;
	}
	va_start(ap, n);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	return __real_syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* --- the root ------------------------------------------------------------------------ */

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Run a shell command line (with /usr/sbin on the PATH); 0 when it exited 0. */
static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int n;

	n = snprintf(cmd, sizeof(cmd), "PATH=/usr/sbin:/sbin:$PATH; ");
	va_start(ap, fmt);
	vsnprintf(cmd + n, sizeof(cmd) - (size_t)n, fmt, ap);
	va_end(ap);
	return system(cmd) == 0 ? 0 : -1; // NOLINT(cert-env33-c): a test's fixture commands
}

static void write_file(const char *dir, const char *name, const char *data)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(data, f) < 0 || fclose(f) != 0) {
		printf("Bail out! cannot write %s\n", path);
		exit(1);
	}
}

/* The end of partitions()' list: a null pointer of the type va_arg reads. */
#define END ((const char *)NULL)

/* /proc/partitions as the kernel writes it, from "NAME", BLOCKS pairs up to END. */
static void partitions(const char *first, ...)
{
	char buf[4096];
	const char *name;
	va_list ap;
	size_t n;
	unsigned minor = 0;

	n = (size_t)snprintf(buf, sizeof(buf), "major minor  #blocks  name\n\n");
	va_start(ap, first);
	for (name = first; name; name = va_arg(ap, const char *)) {
		unsigned blocks = va_arg(ap, unsigned);

		n += (size_t)snprintf(buf + n, sizeof(buf) - n, " 254 %8u %10u %s\n", minor, blocks,
				      name);
		minor += 16;
	}
	va_end(ap);
	write_file(root, "proc/partitions", buf);
}

/* A fresh /dev and /sys/class/block; the images stay. */
static void clear_root(void)
{
	if (sh("cd '%s' && rm -rf dev sys && mkdir -p dev sys/class/block sys/devices/virtual/block",
	       root) != 0) {
		printf("Bail out! cannot reset %s\n", root);
		exit(1);
	}
}

/* ROOT/dev/NAME: a hard link to an image. */
static void dev(const char *name, const char *image)
{
	char from[512], to[512];

	snprintf(from, sizeof(from), "%s/%s", img, image);
	snprintf(to, sizeof(to), "%s/dev/%s", root, name);
	unlink(to);
	if (link(from, to) != 0) {
		printf("Bail out! cannot link %s to %s\n", to, from);
		exit(1);
	}
}

/* sysfs as the kernel lays it out: /sys/class/block/NAME links, partitions under their disk. */
static void sys_disk(const char *disk, const char *removable_value, const char *part)
{
	sh("cd '%s/sys' && mkdir -p devices/virtual/block/%s && "
	   "ln -sfn ../../devices/virtual/block/%s class/block/%s && "
	   "printf '%s\\n' >devices/virtual/block/%s/removable",
	   root, disk, disk, disk, removable_value, disk);
	if (part)
		sh("cd '%s/sys' && mkdir -p devices/virtual/block/%s/%s && "
		   "ln -sfn ../../devices/virtual/block/%s/%s class/block/%s",
		   root, disk, part, disk, part, part);
}

/*
 * A device-mapper device as the kernel shows it: /sys/class/block/NAME with dm/uuid ("mpath-…"
 * for a multipath map, "LVM-…", "CRYPT-…"; NULL for none) and a slaves/ link per device under it.
 */
static void sys_dm(const char *name, const char *uuid, const char *slaves)
{
	if (sh("cd '%s/sys' && rm -rf devices/virtual/block/%s && "
	       "mkdir -p devices/virtual/block/%s/dm devices/virtual/block/%s/slaves && "
	       "ln -sfn ../../devices/virtual/block/%s class/block/%s && "
	       "printf '0\\n' >devices/virtual/block/%s/removable && "
	       "for s in %s; do ln -s ../../$s devices/virtual/block/%s/slaves/$s; done",
	       root, name, name, name, name, name, name, slaves, name) != 0 ||
	    (uuid &&
	     sh("printf '%%s\\n' '%s' >'%s/sys/devices/virtual/block/%s/dm/uuid'", uuid, root,
		name) != 0)) {
		printf("Bail out! cannot make %s in %s/sys\n", name, root);
		exit(1);
	}
}

/* Are mkfs.ext4, mkfs.vfat and sfdisk there? Under CI=true they must be: CI installs them. */
static bool have_tools(void)
{
	static const char *const tools[] = { "mkfs.ext4", "mkfs.vfat", "sfdisk" };
	const char *ci = getenv("CI");
	size_t i;

	for (i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		if (sh("command -v %s >/dev/null", tools[i]) != 0) {
			printf("# %s is missing (scripts/install-packages.sh installs it)\n", tools[i]);
			CHECK(!ci || strcmp(ci, "true") != 0, "CI=true: %s is installed", tools[i]);
			return false;
		}
	return true;
}

/* The images: false when one could not be made (a failure, not a reason to skip). */
static bool make_images(void)
{
	char garbage[65536];
	size_t i;
	FILE *f;

	if (sh("cd '%s' && truncate -s 4M a.img dup.img part.img && "
	       "mkfs.ext4 -q -F -L " LABEL_A " -U " UUID_A " a.img && "
	       "mkfs.ext4 -q -F -L " LABEL_A " -U " UUID_DUP " dup.img && "
	       "mkfs.ext4 -q -F -L in-partition -U " UUID_IN " part.img && "
	       "truncate -s 2M vfat.img && "
	       "mkfs.vfat -i " VFAT_ID " -n " VFAT_LABEL " vfat.img >/dev/null && "
	       "truncate -s 4M gpt.img && "
	       "printf 'label: gpt\\n"
	       "start=2048, size=2048, type=linux, uuid=" PART1_UUID ", name=other\\n"
	       "start=4096, size=2048, type=linux, uuid=" PART2_UUID ", name=" PART2_NAME "\\n' | "
	       "sfdisk -q gpt.img >/dev/null && "
	       "truncate -s 4M gpt2.img && "
	       "printf 'label: gpt\\n"
	       "start=2048, size=2048, type=linux, uuid=" GPT2_PART1_UUID ", name=other\\n"
	       "start=4096, size=2048, type=linux, uuid=" GPT2_PART2_UUID ", name=" PART2_NAME "\\n' | "
	       "sfdisk -q gpt2.img >/dev/null",
	       img) != 0) {
		printf("# making the images in %s failed\n", img);
		return false;
	}
	/* No file system, no partition table: a pattern that no signature matches. */
	for (i = 0; i < sizeof(garbage); i++)
		garbage[i] = (char)(0x5a ^ (i * 131 % 251));
	snprintf(garbage, 64, "%s", "gpuvm: garbage, no file system here");
	{
		char path[512];

		snprintf(path, sizeof(path), "%s/garbage.img", img);
		f = fopen(path, "w");
		if (!f || fwrite(garbage, 1, sizeof(garbage), f) != sizeof(garbage) || fclose(f) != 0)
			return false;
	}
	return true;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/*
 * blkdev_find(spec): its status, and (when want_dev) the device and type it names.
 * Every probe made is freed and no descriptor is left open, whatever the outcome.
 */
static void find(const char *spec, int want, const char *want_dev, const char *want_type,
		 struct blkdev_found *out)
{
	struct blkdev_found f;
	struct tag_spec t;
	const char *why;
	int fds = count_fds(), r;

	if (tag_parse(spec, &t, &why) != 0) {
		CHECK(0, "%s parses (%s)", spec, why);
		return;
	}
	probes_live = 0;
	r = blkdev_find(&t, &f);
	CHECK_INT(r, want, "%s: blkdev_find returns %d (%s)", spec, want, strerror(-want));
	if (want_dev)
		CHECK_STR(f.dev, want_dev, "%s: the device", spec);
	if (want_type)
		CHECK_STR(f.fstype, want_type, "%s: the file system type", spec);
	CHECK_INT(probes_live, 0, "%s: every probe freed", spec);
	CHECK_INT(count_fds(), fds, "%s: no descriptor left open", spec);
	if (out)
		*out = f;
}

static void skip(const char *what, const char *why)
{
	unit_n++;
	printf("ok %d - %s # SKIP %s\n", unit_n, what, why);
}

/* --- blkdev_find ----------------------------------------------------------------------- */

static void tags(void)
{
	clear_root();
	dev("vda", "garbage.img");
	dev("vdb", "a.img");
	dev("vdc", "vfat.img");
	partitions("vda", 64u, "vdb", 4096u, "vdc", 2048u, END);

	find("LABEL=" LABEL_A, 0, "/dev/vdb", "ext4", NULL);
	find("LABEL=" LABEL_A ":/gpuvm.conf", 0, "/dev/vdb", "ext4", NULL);
	find("UUID=" UUID_A, 0, "/dev/vdb", "ext4", NULL);
	find("UUID=0C9C8A1E-3B1F-4B7E-9D2A-5F6E7D8C9B0A", 0, "/dev/vdb", "ext4", NULL);
	find("LABEL=" VFAT_LABEL, 0, "/dev/vdc", "vfat", NULL);
	find("UUID=" VFAT_UUID, 0, "/dev/vdc", "vfat", NULL);
	find("UUID=1234-abcd", 0, "/dev/vdc", "vfat", NULL);
	find("LABEL=GPUVM-A", -ENOENT, "", NULL, NULL);
	find("LABEL=gpuvm", -ENOENT, "", NULL, NULL);
	find("UUID=" UUID_DUP, -ENOENT, "", NULL, NULL);
	/* A file system's label is not a partition's name, nor its UUID a PARTUUID. */
	find("PARTLABEL=" LABEL_A, -ENOENT, "", NULL, NULL);
	find("PARTUUID=" UUID_A, -ENOENT, "", NULL, NULL);

	/* Listed, but no node (yet); a node that is a directory, or a fifo: passed over. */
	partitions("vdz", 4096u, "vdy", 4096u, "vdx", 4096u, "vdb", 4096u, END);
	sh("mkdir '%s/dev/vdy' && mkfifo '%s/dev/vdx'", root, root);
	find("LABEL=" LABEL_A, 0, "/dev/vdb", "ext4", NULL);

	/* A device of 0 blocks is not probed; lines that are no device line are passed over. */
	write_file(root, "proc/partitions",
		   "major minor  #blocks  name\n\n"
		   " 254        0          0 vdb\n"
		   "garbage line\n"
		   " 254       16       4096\n"
		   " 254       32       4096 ../vdb\n"
		   " 254       48       4096 x/vdb\n"
		   " 254       64       4096 .vdb\n");
	sh("ln -s vdb '%s/dev/.vdb' && mkdir -p '%s/dev/x' && ln '%s/a.img' '%s/dev/x/vdb'", root,
	   root, img, root);
	find("LABEL=" LABEL_A, -ENOENT, "", NULL, NULL);
	write_file(root, "proc/partitions", "major minor  #blocks  name\n\n");
	find("LABEL=" LABEL_A, -ENOENT, "", NULL, NULL);
	write_file(root, "proc/partitions", "");
	find("LABEL=" LABEL_A, -ENOENT, "", NULL, NULL);
	/* Fields by tabs too; a fifth field, a sign, an overflow or a long name: not a device line. */
	write_file(root, "proc/partitions",
		   "major minor  #blocks  name\n\n"
		   " 254 0 4096 vdb extra\n"
		   " 254 0 +4096 vdb\n"
		   " 254 0 -4096 vdb\n"
		   " 254 0 99999999999999999999999 vdb\n"
		   " 254 0 4096x vdb\n"
		   " 254 0 4096 vdbvdbvdbvdbvdbvdbvdbvdbvdbvdbvdbvdbvdbvdbvdbvdbvdbvdbvdbvdbvdbvdbvdbvdbvdbvdbvdbvdbvdbvdbvdbvdbvdb\n");
	find("LABEL=" LABEL_A, -ENOENT, "", NULL, NULL);
	write_file(root, "proc/partitions", "major minor  #blocks  name\n\n254\t0\t4096\tvdb\n");
	find("LABEL=" LABEL_A, 0, "/dev/vdb", "ext4", NULL);
	/* No trailing newline, and a 1-block extended partition, still read. */
	write_file(root, "proc/partitions",
		   "major minor  #blocks  name\n\n 254 1 1 vdy\n 254 0 4096 vdb");
	find("LABEL=" LABEL_A, 0, "/dev/vdb", "ext4", NULL);

	/* No /proc/partitions at all. */
	sh("rm -f '%s/proc/partitions'", root);
	find("LABEL=" LABEL_A, -ENOENT, NULL, NULL, NULL);
	find("PARTUUID=" PART2_UUID, -ENOENT, NULL, NULL, NULL);
}

static void partuuid(void)
{
	struct blkdev_found f;

	/* The whole disk carries the GPT; its second partition an ext4 file system of its own. */
	clear_root();
	dev("vda", "a.img");
	dev("vdb", "gpt.img");
	dev("vdb1", "garbage.img");
	dev("vdb2", "part.img");
	partitions("vda", 4096u, "vdb", 4096u, "vdb1", 1024u, "vdb2", 1024u, END);
	find("PARTUUID=" PART2_UUID, 0, "/dev/vdb2", "ext4", NULL);
	find("PARTUUID=A1B2C3D4-0000-4000-8000-000000000002", 0, "/dev/vdb2", "ext4", NULL);
	find("PARTLABEL=" PART2_NAME, 0, "/dev/vdb2", "ext4", NULL);
	find("PARTLABEL=" PART2_NAME ":/etc/x", 0, "/dev/vdb2", "ext4", NULL);
	find("PARTLABEL=Gpuvm-conf", -ENOENT, "", NULL, NULL);
	find("PARTUUID=a1b2c3d4-0000-4000-8000-000000000003", -ENOENT, "", NULL, NULL);
	/* The partition's own file system is found by its tags too, and the disk's first one. */
	find("UUID=" UUID_IN, 0, "/dev/vdb2", "ext4", NULL);
	find("LABEL=in-partition", 0, "/dev/vdb2", "ext4", NULL);
	/* A partition without a file system: there, but nothing to mount. */
	find("PARTLABEL=other", -ENOMEDIUM, "/dev/vdb1", "", NULL);
	find("PARTUUID=" PART1_UUID, -ENOMEDIUM, "/dev/vdb1", "", NULL);

	/* The kernel has not made the partition (yet): not listed, or listed without a node. */
	partitions("vda", 4096u, "vdb", 4096u, "vdb1", 1024u, END);
	find("PARTUUID=" PART2_UUID, -ENOENT, "", NULL, NULL);
	partitions("vda", 4096u, "vdb", 4096u, "vdb1", 1024u, "vdb2", 1024u, END);
	sh("rm -f '%s/dev/vdb2'", root);
	find("PARTUUID=" PART2_UUID, -ENOENT, "", NULL, NULL);
	/* Listed with a 0-block size: not there. */
	dev("vdb2", "part.img");
	partitions("vda", 4096u, "vdb", 4096u, "vdb1", 1024u, "vdb2", 0u, END);
	find("PARTLABEL=" PART2_NAME, -ENOENT, "", NULL, NULL);

	/* A disk name that ends in a digit: its partitions take a "p". */
	clear_root();
	dev("nvme0n1", "gpt.img");
	dev("nvme0n1p2", "part.img");
	dev("nvme0n12", "a.img");
	partitions("nvme0n1", 4096u, "nvme0n1p2", 1024u, END);
	find("PARTUUID=" PART2_UUID, 0, "/dev/nvme0n1p2", "ext4", NULL);
	find("PARTLABEL=" PART2_NAME, 0, "/dev/nvme0n1p2", "ext4", NULL);
	partitions("nvme0n1", 4096u, "nvme0n12", 1024u, END);
	find("PARTUUID=" PART2_UUID, -ENOENT, "", NULL, NULL);
	clear_root();
	dev("mmcblk0", "gpt.img");
	dev("mmcblk0p2", "part.img");
	partitions("mmcblk0", 4096u, "mmcblk0p2", 1024u, END);
	find("PARTLABEL=" PART2_NAME, 0, "/dev/mmcblk0p2", "ext4", NULL);

	/* Two disks with the same partition table (a cloned disk): refused, both named. */
	clear_root();
	dev("vdb", "gpt.img");
	dev("vdb2", "part.img");
	dev("vdc", "gpt.img");
	dev("vdc2", "part.img");
	partitions("vdb", 4096u, "vdb2", 1024u, "vdc", 4096u, "vdc2", 1024u, END);
	find("PARTUUID=" PART2_UUID, -ENOTUNIQ, "/dev/vdb2", NULL, &f);
	CHECK_STR(f.other, "/dev/vdc2", "PARTUUID on two disks: the other one named");
	find("UUID=" UUID_IN, -ENOTUNIQ, "/dev/vdb2", NULL, &f);
	CHECK_STR(f.other, "/dev/vdc2", "UUID on two partitions: the other one named");
}

static void duplicates_and_removable(void)
{
	struct blkdev_found f;

	clear_root();
	dev("vdb", "a.img");
	dev("vdc", "vfat.img");
	dev("vdd", "dup.img");
	dev("vde", "a.img");
	partitions("vdb", 4096u, "vdc", 2048u, "vdd", 4096u, END);
	find("LABEL=" LABEL_A, -ENOTUNIQ, "/dev/vdb", NULL, &f);
	CHECK_STR(f.other, "/dev/vdd", "duplicate label: the second device named");
	CHECK_INT(f.skipped_removable, 0, "duplicate label: nothing removable");
	/* The UUIDs differ: each one is unique. */
	find("UUID=" UUID_DUP, 0, "/dev/vdd", "ext4", NULL);
	/* Three: the first two named. */
	partitions("vdb", 4096u, "vdc", 2048u, "vdd", 4096u, "vde", 4096u, END);
	find("LABEL=" LABEL_A, -ENOTUNIQ, "/dev/vdb", NULL, &f);
	CHECK_STR(f.other, "/dev/vdd", "three with the label: the second one named");
	find("UUID=" UUID_A, -ENOTUNIQ, "/dev/vdb", NULL, &f);
	CHECK_STR(f.other, "/dev/vde", "the same image twice: the same UUID, refused");

	/* A removable device with the label is passed over, and counted. */
	partitions("vdb", 4096u, "vdc", 2048u, "vdd", 4096u, END);
	sys_disk("vdb", "0", NULL);
	sys_disk("vdd", "1", NULL);
	find("LABEL=" LABEL_A, 0, "/dev/vdb", "ext4", &f);
	CHECK_INT(f.skipped_removable, 1, "removable vdd: skipped and counted");
	CHECK_STR(f.other, "", "removable vdd: not a duplicate");
	find("UUID=" UUID_DUP, -ENOENT, "", NULL, &f);
	CHECK_INT(f.skipped_removable, 1, "a tag only a removable device carries: not found, counted");
	/* Only devices with the tag are counted. */
	find("LABEL=" VFAT_LABEL, 0, "/dev/vdc", "vfat", &f);
	CHECK_INT(f.skipped_removable, 0, "a removable device without the tag: not counted");
	/* removable 0 is not removable. */
	sys_disk("vdd", "0", NULL);
	find("LABEL=" LABEL_A, -ENOTUNIQ, "/dev/vdb", NULL, NULL);
	/* A device path is taken even when removable. */
	sys_disk("vdd", "1", NULL);
	find("/dev/vdd", 0, "/dev/vdd", "ext4", NULL);

	/* A partition of a removable disk: its disk says (sys/class/block/vdb2/../removable). */
	clear_root();
	dev("vdb", "gpt.img");
	dev("vdb2", "part.img");
	partitions("vdb", 4096u, "vdb2", 1024u, END);
	sys_disk("vdb", "1", "vdb2");
	find("PARTUUID=" PART2_UUID, -ENOENT, "", NULL, &f);
	CHECK_INT(f.skipped_removable, 1, "a partition of a removable disk: skipped, counted");
	find("UUID=" UUID_IN, -ENOENT, "", NULL, &f);
	CHECK_INT(f.skipped_removable, 1, "a file system on a removable disk's partition: skipped");
	sys_disk("vdb", "0", "vdb2");
	find("PARTUUID=" PART2_UUID, 0, "/dev/vdb2", "ext4", &f);
	CHECK_INT(f.skipped_removable, 0, "a partition of a fixed disk: taken");
}

#define BIT(t) (1u << (t))

/*
 * What the advice for an ambiguous tag rests on: how many devices carry it, which tags tell
 * every one of them apart, which ones they all share (clones).
 */
static void ambiguous(void)
{
	struct blkdev_found f;

	/* Two whole-disk file systems with one label: their UUIDs differ, no partitions. */
	clear_root();
	dev("vdb", "a.img");
	dev("vdc", "dup.img");
	dev("vdd", "a.img");
	partitions("vdb", 4096u, "vdc", 4096u, END);
	find("LABEL=" LABEL_A, -ENOTUNIQ, "/dev/vdb", NULL, &f);
	CHECK_INT(f.matches, 2, "one label on two file systems: two matches");
	CHECK_INT(f.apart, BIT(TAG_UUID), "one label, two UUIDs: UUID= tells them apart");
	CHECK_INT(f.same, BIT(TAG_LABEL), "one label, two UUIDs: only the label shared");
	CHECK_INT(f.paths, 0, "no multipath map");
	/* Three, two of them clones: no UUID tells all three apart. */
	partitions("vdb", 4096u, "vdc", 4096u, "vdd", 4096u, END);
	find("LABEL=" LABEL_A, -ENOTUNIQ, "/dev/vdb", NULL, &f);
	CHECK_STR(f.other, "/dev/vdc", "three with the label: the second one named");
	CHECK_INT(f.matches, 3, "three with the label: three matches");
	CHECK_INT(f.apart, 0, "three with the label, two clones: nothing tells them all apart");
	CHECK_INT(f.same, BIT(TAG_LABEL),
		  "three with the label, one of another UUID: the label shared");
	/* The same image twice: a cloned file system. */
	find("UUID=" UUID_A, -ENOTUNIQ, "/dev/vdb", NULL, &f);
	CHECK_STR(f.other, "/dev/vdd", "a cloned file system: the clone named");
	CHECK_INT(f.matches, 2, "a cloned file system: two matches");
	CHECK_INT(f.apart, 0, "a cloned whole-disk file system: no tag tells them apart");
	CHECK_INT(f.same, BIT(TAG_LABEL) | BIT(TAG_UUID), "a cloned file system: label and UUID");

	/* A cloned partition on disks partitioned alike: the partition UUIDs differ. */
	clear_root();
	dev("vdb", "gpt.img");
	dev("vdb2", "part.img");
	dev("vdc", "gpt2.img");
	dev("vdc2", "part.img");
	partitions("vdb", 4096u, "vdb2", 1024u, "vdc", 4096u, "vdc2", 1024u, END);
	find("UUID=" UUID_IN, -ENOTUNIQ, "/dev/vdb2", NULL, &f);
	CHECK_STR(f.other, "/dev/vdc2", "a cloned partition: the other one named");
	CHECK_INT(f.apart, BIT(TAG_PARTUUID), "a cloned partition: PARTUUID= tells them apart");
	CHECK_INT(f.same, BIT(TAG_LABEL) | BIT(TAG_UUID) | BIT(TAG_PARTLABEL),
		  "a cloned partition: label, UUID and partition name shared");
	find("LABEL=in-partition", -ENOTUNIQ, "/dev/vdb2", NULL, &f);
	CHECK_INT(f.apart, BIT(TAG_PARTUUID),
		  "a cloned partition by label: PARTUUID= tells them apart");
	find("PARTLABEL=" PART2_NAME, -ENOTUNIQ, "/dev/vdb2", NULL, &f);
	CHECK_INT(f.apart, BIT(TAG_PARTUUID), "one partition name twice: PARTUUID= tells them apart");
	CHECK_INT(f.same, BIT(TAG_LABEL) | BIT(TAG_UUID) | BIT(TAG_PARTLABEL),
		  "one partition name twice: the file systems are clones");
	/* A whole-disk file system and a partition with one label: no PARTUUID for one of them. */
	dev("vdd", "part.img");
	partitions("vdb", 4096u, "vdb2", 1024u, "vdd", 1024u, END);
	find("LABEL=in-partition", -ENOTUNIQ, "/dev/vdb2", NULL, &f);
	CHECK_STR(f.other, "/dev/vdd", "a partition and a disk: the disk named");
	CHECK_INT(f.apart, 0, "a partition and a whole-disk clone: no tag tells them apart");

	/* A cloned disk: the same partition table, the same file system. */
	clear_root();
	dev("vdb", "gpt.img");
	dev("vdb2", "part.img");
	dev("vdc", "gpt.img");
	dev("vdc2", "part.img");
	partitions("vdb", 4096u, "vdb2", 1024u, "vdc", 4096u, "vdc2", 1024u, END);
	find("UUID=" UUID_IN, -ENOTUNIQ, "/dev/vdb2", NULL, &f);
	CHECK_INT(f.apart, 0, "a cloned disk: no tag tells the partitions apart");
	CHECK_INT(f.same, BIT(TAG_LABEL) | BIT(TAG_UUID) | BIT(TAG_PARTUUID) | BIT(TAG_PARTLABEL),
		  "a cloned disk: every tag shared");
	find("PARTUUID=" PART2_UUID, -ENOTUNIQ, "/dev/vdb2", NULL, &f);
	CHECK_INT(f.apart, 0, "a cloned disk by PARTUUID: no tag tells them apart");
}

/*
 * Multipath: one LUN seen on several paths (sda, sdb) and the dm map over them (dm-0) carry
 * the same file system. The map is the answer when every other device with the tag is one of
 * its slaves and its dm UUID says multipath; anything else stays ambiguous.
 */
static void multipath(void)
{
	struct blkdev_found f;

	clear_root();
	dev("sda", "a.img");
	dev("sdb", "a.img");
	dev("sdc", "a.img");
	dev("dm-0", "a.img");
	dev("dm-1", "a.img");
	partitions("sda", 4096u, "sdb", 4096u, "dm-0", 4096u, END);
	sys_dm("dm-0", MPATH_UUID, "sda sdb");
	find("UUID=" UUID_A, 0, "/dev/dm-0", "ext4", &f);
	CHECK_INT(f.paths, 2, "multipath: the map taken, its two paths counted");
	CHECK_STR(f.other, "", "multipath: no other device named");
	find("LABEL=" LABEL_A, 0, "/dev/dm-0", "ext4", &f);
	CHECK_INT(f.paths, 2, "multipath by label: the map taken");
	/* The map listed before its paths; one path up so far; the map alone. */
	partitions("dm-0", 4096u, "sda", 4096u, "sdb", 4096u, END);
	find("UUID=" UUID_A, 0, "/dev/dm-0", "ext4", &f);
	CHECK_INT(f.paths, 2, "multipath, the map listed first: the map taken");
	partitions("sda", 4096u, "dm-0", 4096u, END);
	find("UUID=" UUID_A, 0, "/dev/dm-0", "ext4", &f);
	CHECK_INT(f.paths, 1, "multipath, one path up: the map taken");
	partitions("dm-0", 4096u, END);
	find("UUID=" UUID_A, 0, "/dev/dm-0", "ext4", &f);
	CHECK_INT(f.paths, 0, "the map alone: taken, no paths counted");
	/* The paths before the map is made: ambiguous, both named. */
	partitions("sda", 4096u, "sdb", 4096u, END);
	find("UUID=" UUID_A, -ENOTUNIQ, "/dev/sda", NULL, &f);
	CHECK_STR(f.other, "/dev/sdb", "paths without their map: ambiguous");
	/* A device with the tag that is no path of the map: not guessed. */
	partitions("sda", 4096u, "sdb", 4096u, "dm-0", 4096u, "sdc", 4096u, END);
	find("UUID=" UUID_A, -ENOTUNIQ, "/dev/sda", NULL, &f);
	CHECK_INT(f.matches, 4, "a map, its paths and a clone: four matches, ambiguous");
	CHECK_INT(f.paths, 0, "a map, its paths and a clone: no map taken");
	/* A path of the map that its slaves do not list. */
	sys_dm("dm-0", MPATH_UUID, "sda");
	partitions("sda", 4096u, "sdb", 4096u, "dm-0", 4096u, END);
	find("UUID=" UUID_A, -ENOTUNIQ, "/dev/sda", NULL, NULL);
	/* Two maps over clones: neither is the answer. */
	sys_dm("dm-0", MPATH_UUID, "sda sdb");
	sys_dm("dm-1", "mpath-3600a098038303053453f463045727a4c", "sdc");
	partitions("sda", 4096u, "sdb", 4096u, "dm-0", 4096u, "sdc", 4096u, "dm-1", 4096u, END);
	find("UUID=" UUID_A, -ENOTUNIQ, "/dev/sda", NULL, NULL);
	/* A dm device that is not multipath (LVM, crypt, none said): not guessed. */
	partitions("sda", 4096u, "sdb", 4096u, "dm-0", 4096u, END);
	sys_dm("dm-0", "LVM-Xc2kq0OedG1m0d5cLJ1Rb2TH9uYJvR3YbhbCAk1H6sSUDvHcW6FeWmNqP3MtM5ET",
	       "sda sdb");
	find("UUID=" UUID_A, -ENOTUNIQ, "/dev/sda", NULL, NULL);
	sys_dm("dm-0", "CRYPT-LUKS2-0c9c8a1e3b1f4b7e9d2a5f6e7d8c9b0a-luks", "sda sdb");
	find("UUID=" UUID_A, -ENOTUNIQ, "/dev/sda", NULL, NULL);
	sys_dm("dm-0", NULL, "sda sdb");
	find("UUID=" UUID_A, -ENOTUNIQ, "/dev/sda", NULL, NULL);
	/* A removable path is passed over; the map is still the answer. */
	sys_dm("dm-0", MPATH_UUID, "sda sdb");
	sys_disk("sdb", "1", NULL);
	find("UUID=" UUID_A, 0, "/dev/dm-0", "ext4", &f);
	CHECK_INT(f.paths, 1, "multipath, a removable path: skipped, the map taken");
	CHECK_INT(f.skipped_removable, 1, "multipath, a removable path: counted");
}

static void paths(void)
{
	clear_root();
	dev("vda", "garbage.img");
	dev("vdb", "a.img");
	dev("vdc", "vfat.img");
	dev("vdd", "gpt.img");
	sh("mkdir -p '%s/dev/disk/by-label' '%s/dev/dir' && mkfifo '%s/dev/fifo' && "
	   "ln -s ../../vdb '%s/dev/disk/by-label/" LABEL_A "'",
	   root, root, root, root);
	/* A device path needs no /proc/partitions. */
	sh("rm -f '%s/proc/partitions'", root);
	find("/dev/vdb", 0, "/dev/vdb", "ext4", NULL);
	find("/dev/vdb:/etc/x", 0, "/dev/vdb", "ext4", NULL);
	find("/dev/vdc", 0, "/dev/vdc", "vfat", NULL);
	find("/dev/disk/by-label/" LABEL_A, 0, "/dev/disk/by-label/" LABEL_A, "ext4", NULL);
	find("/dev/vda", -ENOMEDIUM, "/dev/vda", "", NULL);
	find("/dev/vda:/etc/gpuvm/gpuvm.conf", -ENOMEDIUM, "/dev/vda", NULL, NULL);
	/* A whole disk with a partition table: no file system on it as such. */
	find("/dev/vdd", -ENOMEDIUM, "/dev/vdd", NULL, NULL);
	find("/dev/missing", -ENOENT, NULL, NULL, NULL);
	find("/dev/disk/by-label/none", -ENOENT, NULL, NULL, NULL);
	find("/dev/dir", -ENOTBLK, NULL, NULL, NULL);
	find("/dev/fifo", -ENOTBLK, NULL, NULL, NULL);
}

/* Each libblkid call made to fail: an outcome, never a crash, a leaked probe or descriptor. */
static void faults(void)
{
	clear_root();
	dev("vda", "garbage.img");
	dev("vdb", "a.img");
	dev("vdc", "gpt.img");
	dev("vdc2", "part.img");
	partitions("vda", 64u, "vdb", 4096u, "vdc", 4096u, "vdc2", 1024u, END);

	memset(&fault, 0, sizeof(fault));
	probes_made = 0;
	find("LABEL=" LABEL_A, 0, "/dev/vdb", "ext4", NULL);
	CHECK(probes_made > 0, "the probes go through the wrapped calls");

	/* blkid_new_probe: no memory. A device path says so; a tag finds nothing. */
	fault.new_probe = true;
	find("/dev/vdb", -ENOMEM, NULL, NULL, NULL);
	find("LABEL=" LABEL_A, -ENOENT, "", NULL, NULL);
	find("PARTUUID=" PART2_UUID, -ENOENT, "", NULL, NULL);
	memset(&fault, 0, sizeof(fault));

	/* blkid_probe_set_device: an I/O error. */
	fault.set_device = true;
	find("/dev/vdb", -EIO, NULL, NULL, NULL);
	find("UUID=" UUID_A, -ENOENT, "", NULL, NULL);
	find("PARTLABEL=" PART2_NAME, -ENOENT, "", NULL, NULL);
	memset(&fault, 0, sizeof(fault));

	/* blkid_do_safeprobe: -1 an error, 1 nothing found, -2 two candidate file systems. */
	fault.safeprobe = true;
	fault.safeprobe_ret = -1;
	find("/dev/vdb", -EIO, NULL, NULL, NULL);
	find("LABEL=" LABEL_A, -ENOENT, "", NULL, NULL);
	fault.safeprobe_ret = 1;
	find("/dev/vdb", -ENOMEDIUM, NULL, NULL, NULL);
	find("LABEL=" LABEL_A, -ENOENT, "", NULL, NULL);
	fault.safeprobe_ret = -2;
	find("/dev/vdb", -ENOMEDIUM, NULL, NULL, NULL);
	find("UUID=" UUID_A, -ENOENT, "", NULL, NULL);
	/* The partition found by the table, its file system not probed: nothing to mount. */
	fault.safeprobe_ret = -1;
	find("PARTUUID=" PART2_UUID, -ENOMEDIUM, "/dev/vdc2", "", NULL);
	memset(&fault, 0, sizeof(fault));

	/* blkid_probe_lookup_value: no TYPE is no file system; no LABEL matches nothing. */
	fault.lookup = "TYPE";
	find("/dev/vdb", -ENOMEDIUM, NULL, NULL, NULL);
	find("LABEL=" LABEL_A, -ENOENT, "", NULL, NULL);
	fault.lookup = "LABEL";
	find("LABEL=" LABEL_A, -ENOENT, "", NULL, NULL);
	find("UUID=" UUID_A, 0, "/dev/vdb", "ext4", NULL);
	find("/dev/vdb", 0, "/dev/vdb", "ext4", NULL);
	fault.lookup = "UUID";
	find("UUID=" UUID_A, -ENOENT, "", NULL, NULL);
	find("LABEL=" LABEL_A, 0, "/dev/vdb", "ext4", NULL);
	memset(&fault, 0, sizeof(fault));

	/* The partition table: no list, a failed count, no entry, an entry without UUID or name. */
	fault.get_partitions = true;
	find("PARTUUID=" PART2_UUID, -ENOENT, "", NULL, NULL);
	find("LABEL=in-partition", 0, "/dev/vdc2", "ext4", NULL);
	memset(&fault, 0, sizeof(fault));
	fault.numof = true;
	find("PARTUUID=" PART2_UUID, -ENOENT, "", NULL, NULL);
	memset(&fault, 0, sizeof(fault));
	fault.get_partition = true;
	find("PARTLABEL=" PART2_NAME, -ENOENT, "", NULL, NULL);
	memset(&fault, 0, sizeof(fault));
	fault.part_uuid = true;
	find("PARTUUID=" PART2_UUID, -ENOENT, "", NULL, NULL);
	find("PARTLABEL=" PART2_NAME, 0, "/dev/vdc2", "ext4", NULL);
	memset(&fault, 0, sizeof(fault));
	fault.part_name = true;
	find("PARTLABEL=" PART2_NAME, -ENOENT, "", NULL, NULL);
	find("PARTUUID=" PART2_UUID, 0, "/dev/vdc2", "ext4", NULL);
	memset(&fault, 0, sizeof(fault));
}

/* --- blkdev_read_beneath ------------------------------------------------------------- */

static bool openat2_works(void)
{
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC };
	const char *preload = getenv("LD_PRELOAD");
	long fd;

	/* valgrind 3.19 has no handler for openat2 (ENOSYS and a warning): do not ask it. */
	if (preload && strstr(preload, "vgpreload"))
		return false;
	fd = syscall(SYS_openat2, AT_FDCWD, ".", &how, sizeof(how));
	if (fd < 0)
		return false;
	close((int)fd);
	return true;
}

static void beneath(int dirfd, const char *path, size_t max, int want, const char *want_data,
		    const char *what)
{
	char *buf = (char *)"unset";
	size_t len = 12345;
	int r = blkdev_read_beneath(dirfd, path, max, &buf, &len);

	CHECK_INT(r, want, "read_beneath %s (%s): %s", path, what, strerror(-want));
	if (want == 0 && r == 0) {
		CHECK(buf && strlen(want_data) == len && memcmp(buf, want_data, len) == 0 && !buf[len],
		      "read_beneath %s: the content, NUL-terminated", path);
	} else {
		CHECK(buf == NULL && len == 0, "read_beneath %s: no buffer on failure", path);
	}
	free(r == 0 ? buf : NULL);
}

/* An escape: openat2 says -EXDEV (a '..' or an absolute symlink) or -ELOOP. */
static void escape(int dirfd, const char *path, const char *what)
{
	char *buf = NULL;
	size_t len = 0;
	int r = blkdev_read_beneath(dirfd, path, 4096, &buf, &len);

	CHECK(r == -EXDEV || r == -ELOOP, "read_beneath %s (%s): refused as an escape", path, what);
	if (r != -EXDEV && r != -ELOOP)
		printf("#   got %d (%s)\n", r, strerror(-r));
	CHECK(buf == NULL, "read_beneath %s: no buffer", path);
	if (r == 0)
		free(buf);
}

static void read_beneath(void)
{
	char dir[512], big[4097];
	int fd, fds = count_fds();
	bool o2 = openat2_works();

	snprintf(dir, sizeof(dir), "%s/fs", top);
	if (sh("mkdir -p '%s/etc/gpuvm' '%s/sub' && cd '%s' && "
	       "printf 'mode=vm-passthrough\\n' >etc/gpuvm/gpuvm.conf && : >empty && "
	       "mkfifo fifo && ln -s /etc/passwd abs && ln -s etc/gpuvm/gpuvm.conf rel && "
	       "ln -s ../../outside sub/out && "
	       "ln -s etc linkdir && printf 'secret\\n' >../outside",
	       dir, dir, dir) != 0) {
		CHECK(0, "the file system for read_beneath is made");
		return;
	}
	memset(big, 'x', sizeof(big));
	big[4096] = '\0';
	write_file(dir, "max", big);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* Without openat2 (valgrind 3.19 has no handler for it), ask no more: the fallback. */
	fault.no_openat2 = !o2;

	beneath(fd, "etc/gpuvm/gpuvm.conf", 65536, 0, "mode=vm-passthrough\n", "a regular file");
	beneath(fd, "/etc/gpuvm/gpuvm.conf", 65536, 0, "mode=vm-passthrough\n",
		"absolute: beneath dirfd");
	beneath(fd, "//etc/gpuvm/gpuvm.conf", 65536, 0, "mode=vm-passthrough\n", "leading slashes");
	beneath(fd, "empty", 10, 0, "", "an empty file");
	beneath(fd, "empty", 0, 0, "", "an empty file, max 0");
	beneath(fd, "etc/gpuvm/gpuvm.conf", 20, 0, "mode=vm-passthrough\n", "exactly max bytes");
	beneath(fd, "etc/gpuvm/gpuvm.conf", 19, -EFBIG, NULL, "max + 1 bytes");
	beneath(fd, "max", 4096, 0, big, "4096 bytes, max 4096");
	beneath(fd, "max", 4095, -EFBIG, NULL, "4096 bytes, max 4095");
	beneath(fd, "etc", 4096, -EINVAL, NULL, "a directory");
	beneath(fd, ".", 4096, -EINVAL, NULL, "the directory itself");
	alarm(10); /* a fifo opened without O_NONBLOCK would block: SIGALRM ends the test */
	beneath(fd, "fifo", 4096, -EINVAL, NULL, "a fifo, without blocking");
	alarm(0);
	beneath(fd, "missing", 4096, -ENOENT, NULL, "missing");
	beneath(fd, "etc/missing/x", 4096, -ENOENT, NULL, "a missing directory");
	beneath(fd, "empty/x", 4096, -ENOTDIR, NULL, "a file as a directory");

	if (o2) {
		beneath(fd, "rel", 4096, 0, "mode=vm-passthrough\n", "a relative symlink inside");
		beneath(fd, "linkdir/gpuvm/gpuvm.conf", 4096, 0, "mode=vm-passthrough\n",
			"a symlinked directory inside");
		beneath(fd, "etc/../etc/gpuvm/gpuvm.conf", 4096, 0, "mode=vm-passthrough\n",
			"a '..' that stays inside");
		escape(fd, "abs", "an absolute symlink");
		escape(fd, "../outside", "'..' out");
		escape(fd, "etc/../../outside", "'..' out, deeper");
		escape(fd, "sub/out", "a relative symlink out");
		escape(fd, "/../outside", "'/..' out");
	} else {
		skip("read_beneath with openat2", "openat2 unavailable (valgrind 3.19, Linux < 5.6)");
	}
	close(fd);
	fault.no_openat2 = false;

	/* A mount crossed: RESOLVE_NO_XDEV. /proc is one under /. */
	{
		struct stat a, b;

		fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (o2 && stat("/", &a) == 0 && stat("/proc/self", &b) == 0 && a.st_dev != b.st_dev) {
			escape(fd, "proc/self/status", "a mount crossed");
		} else {
			skip("read_beneath across a mount", "openat2 or a separate /proc missing");
		}
		close(fd);
		/* A magic link (/proc/self/fd/N): RESOLVE_NO_MAGICLINKS. */
		fd = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (o2 && fd >= 0) {
			char path[32];

			snprintf(path, sizeof(path), "fd/%d", fd);
			escape(fd, path, "a magic link");
			escape(fd, "exe", "a magic link");
		} else {
			skip("read_beneath through a magic link", "openat2 or /proc missing");
		}
		if (fd >= 0)
			close(fd);
	}

	/* Linux < 5.6: no openat2, every symlink refused and every "..". */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fault.no_openat2 = true;
	beneath(fd, "etc/gpuvm/gpuvm.conf", 65536, 0, "mode=vm-passthrough\n", "no openat2: a file");
	beneath(fd, "/etc//gpuvm/gpuvm.conf", 65536, 0, "mode=vm-passthrough\n", "no openat2: slashes");
	beneath(fd, "etc/gpuvm/gpuvm.conf", 19, -EFBIG, NULL, "no openat2: max + 1");
	beneath(fd, "etc", 4096, -EINVAL, NULL, "no openat2: a directory");
	beneath(fd, "", 4096, -EINVAL, NULL, "no openat2: the directory itself");
	beneath(fd, "fifo", 4096, -EINVAL, NULL, "no openat2: a fifo");
	beneath(fd, "missing", 4096, -ENOENT, NULL, "no openat2: missing");
	beneath(fd, "rel", 4096, -ELOOP, NULL, "no openat2: a symlink, even inside");
	escape(fd, "abs", "no openat2: an absolute symlink");
	escape(fd, "../outside", "no openat2: '..'");
	escape(fd, "etc/../etc/gpuvm/gpuvm.conf", "no openat2: any '..'");
	{
		char *buf = NULL;
		size_t len = 0;
		int r = blkdev_read_beneath(fd, "linkdir/gpuvm/gpuvm.conf", 4096, &buf, &len);

		CHECK(r < 0 && buf == NULL, "no openat2: a symlinked directory refused (%d %s)", r,
		      strerror(-r));
		r = blkdev_read_beneath(fd, "sub/out", 4096, &buf, &len);
		CHECK(r < 0 && buf == NULL, "no openat2: a symlink out refused (%d %s)", r,
		      strerror(-r));
	}
	fault.no_openat2 = false;
	close(fd);
	CHECK_INT(count_fds(), fds, "read_beneath: no descriptor left open");
}

int main(void)
{
	if (!mkdtemp(top)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(root, sizeof(root), "%s/root", top);
	snprintf(img, sizeof(img), "%s/img", top);
	sh("mkdir -p '%s/proc' '%s'", root, img);
	if (root_init(root) != 0) {
		printf("Bail out! root_init(%s) failed\n", root);
		return 1;
	}

	read_beneath();
	if (have_tools()) {
		have_images = make_images();
		CHECK(have_images, "the images are made in %s", img);
	}
	if (have_images) {
		tags();
		partuuid();
		duplicates_and_removable();
		ambiguous();
		multipath();
		paths();
		faults();
	} else {
		skip("blkdev_find on image files",
		     "mkfs.ext4, mkfs.vfat or sfdisk missing, or no images");
	}

	root_fini();
	sh("rm -rf '%s'", top);
	return unit_done();
}
