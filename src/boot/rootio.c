// SPDX-License-Identifier: MIT
/* Root-prefixed reads and time-bounded writes of kernel attributes. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "rootio.h"
#include "util.h"
#include "writefile.h"

static int rootfd = -1;
static bool writes_denied;

/* The recorder (root_record): off (NULL) but for dump's preparation. */
static void (*rec_fn)(enum root_rec kind, const char *path, void *data);
static void *rec_data;

static void record(enum root_rec kind, const char *path)
{
	if (rec_fn)
		rec_fn(kind, path, rec_data);
}

void root_record(void (*fn)(enum root_rec kind, const char *path, void *data), void *data)
{
	rec_fn = fn;
	rec_data = data;
}

static void stop_writer(bool blocked);
static void reap_abandoned(void);

int root_init(const char *root)
{
	int fd = openat(AT_FDCWD, root ? root : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	stop_writer(false); /* it writes under the old root */
	if (rootfd >= 0)
		close(rootfd);
	rootfd = fd;
	return 0;
}

void root_fini(void)
{
	stop_writer(false);
	reap_abandoned();
	if (rootfd >= 0)
		close(rootfd);
	rootfd = -1;
}

static int open_attr(const char *path)
{
	return openat(rootfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
}

int root_open(const char *path)
{
	int fd;

	while (*path == '/')
		path++;
	fd = open_attr(path);
	return fd < 0 ? -errno : fd;
}

static ssize_t read_attr(int fd, char *buf, size_t size)
{
	ssize_t n = read_nointr(fd, buf, size - 1);

	if (n >= 0)
		buf[n] = '\0';
	return n;
}

ssize_t root_read(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	record(ROOT_REC_FILE, path);
	fd = open_attr(path);
	if (fd < 0)
		return -errno;
	n = read_attr(fd, buf, size);
	close(fd);
	return n;
}

/*
 * The one door to whole files beneath a top directory (the root, or --sysroot's): openat2(2)
 * resolves the path beneath it, no symlink followed (RESOLVE_NO_SYMLINKS: -ELOOP) or, for
 * ROOT_FILE_LINKS, links resolved as if the top were / (RESOLVE_IN_ROOT). Where openat2 is
 * missing (ENOSYS: Linux before 5.6, qemu-user, a seccomp filter) the path is walked a
 * component at a time with O_NOFOLLOW: no link at all, no "..".
 */
static int open_walk(int top, const char *path, int oflags)
{
	char part[PATH_MAX], *c = part, *end;
	struct stat st;
	int cur = top, fd, r;
	bool last;

	if (strscpy(part, path, sizeof(part)) < 0)
		return -ENAMETOOLONG;
	for (;;) {
		while (*c == '/')
			c++;
		if (!*c) {
			r = -EISDIR; /* no component (left): a directory */
			break;
		}
		end = strchrnul(c, '/');
		last = !*end;
		*end = '\0';
		if (streq(c, "..")) {
			r = -EXDEV; /* nothing above the top */
			break;
		}
		fd = openat(cur, c, (last ? oflags : O_PATH | O_DIRECTORY | O_CLOEXEC) | O_NOFOLLOW);
		r = fd < 0 ? -errno : 0;
		/* A symlink on the way reads as "not a directory": say what it is. */
		if (r == -ENOTDIR && fstatat(cur, c, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(st.st_mode))
			r = -ELOOP;
		if (cur != top)
			close(cur);
		if (r < 0)
			return r;
		if (last)
			return fd;
		cur = fd;
		c = end + 1;
	}
	if (cur != top)
		close(cur);
	return r;
}

static int open_file(int top, const char *path, unsigned flags)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
		.resolve = RESOLVE_NO_MAGICLINKS,
	};
	struct stat st;
	int fd, r = 0;

	while (*path == '/')
		path++;
	how.resolve |=
		flags & ROOT_FILE_LINKS ? RESOLVE_IN_ROOT : RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS;
	fd = (int)syscall(SYS_openat2, top, *path ? path : ".", &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS)
		fd = open_walk(top, path, (int)how.flags);
	else if (fd < 0)
		fd = -errno;
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if ((flags & ROOT_FILE_OWN) && S_ISREG(st.st_mode) && st.st_nlink != 1)
		r = -EMLINK;
	else if (S_ISDIR(st.st_mode))
		r = -EISDIR;
	else if (!S_ISREG(st.st_mode))
		r = -EINVAL;
	if (r == 0)
		return fd;
	close(fd);
	return r;
}

/* The top directory a caller names (NULL: the root), as a descriptor to close, or -errno. */
static int open_top(const char *top)
{
	int fd;

	if (!top)
		fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
	else
		fd = openat(AT_FDCWD, top, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int root_open_file_at(const char *top, const char *path, unsigned flags)
{
	int dfd, fd;

	if (!top) {
		record(ROOT_REC_FILE, path);
		return open_file(rootfd, path, flags);
	}
	dfd = open_top(top);
	if (dfd < 0)
		return dfd;
	fd = open_file(dfd, path, flags);
	close(dfd);
	return fd;
}

int root_open_file(const char *path, unsigned flags)
{
	return root_open_file_at(NULL, path, flags);
}

int root_read_file_at(const char *top, const char *path, size_t max, unsigned flags, char **buf,
		      size_t *len)
{
	struct stat st;
	int fd, r;

	*buf = NULL;
	*len = 0;
	fd = root_open_file_at(top, path, flags);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if ((unsigned long long)st.st_size > max)
		r = -EFBIG; /* a file of /proc says 0: read_whole bounds it */
	else
		r = read_whole(fd, max, buf, len);
	close(fd);
	return r;
}

int root_read_file(const char *path, size_t max, unsigned flags, char **buf, size_t *len)
{
	return root_read_file_at(NULL, path, max, flags, buf, len);
}

int root_dir_at(const char *top, const char *dir)
{
	struct stat st;
	int dfd = open_top(top), r = 0;

	if (dfd < 0)
		return dfd;
	if (dir && fstatat(dfd, dir, &st, AT_SYMLINK_NOFOLLOW) < 0)
		r = -errno;
	else if (dir && !S_ISDIR(st.st_mode))
		r = -ENOTDIR;
	close(dfd);
	return r;
}

bool root_is(const char *dir)
{
	struct stat a, b;

	return stat(dir, &a) == 0 && fstat(rootfd, &b) == 0 && a.st_dev == b.st_dev &&
		a.st_ino == b.st_ino;
}

ssize_t root_read_own(const char *path, char *buf, size_t size)
{
	ssize_t got = 0, n, r = 0;
	int fd;

	record(ROOT_REC_FILE, path);
	if (size == 0)
		return -EINVAL;
	fd = open_file(rootfd, path, ROOT_FILE_OWN);
	if (fd == -EISDIR)
		return -EINVAL; /* not a regular file */
	if (fd < 0)
		return fd;
	/* Up to size bytes: one that fills buf leaves no room for the NUL, so it is too large. */
	while (r == 0) {
		n = read_nointr(fd, buf + got, size - (size_t)got);
		if (n < 0)
			r = (int)n;
		else if (n == 0)
			break;
		else if (n > 0 && (size_t)(got += n) == size)
			r = -EFBIG;
	}
	close(fd);
	if (r < 0)
		return r;
	buf[got] = '\0';
	return got;
}

/*
 * Held at most ROOT_BATCH_MAX at once: a page or so of the kernel's a file, and far below
 * any descriptor limit; 10,000 functions close in some 160 calls instead of 10,000.
 * Descriptors come lowest first, so those held are mostly one run; one that someone else
 * holds (inherited) only splits it, and is never in a range closed.
 */
void root_batch_close(struct root_batch *b)
{
	unsigned i = 0, j, k;

	while (i < b->n) {
		for (j = i; j + 1 < b->n && b->fd[j + 1] == b->fd[j] + 1; j++)
			;
		/* close_range(2) is Linux 5.9; before it, one close a descriptor. */
		if (syscall(SYS_close_range, (unsigned)b->fd[i], (unsigned)b->fd[j], 0) < 0)
			for (k = i; k <= j; k++)
				close(b->fd[k]);
		i = j + 1;
	}
	b->n = 0;
}

ssize_t root_read_batched(struct root_batch *b, const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	record(ROOT_REC_FILE, path);
	if (b->n == ROOT_BATCH_MAX)
		root_batch_close(b);
	fd = open_attr(path);
	if (fd < 0 && errno == EMFILE && b->n) {
		root_batch_close(b);
		fd = open_attr(path);
	}
	if (fd < 0)
		return -errno;
	n = read_attr(fd, buf, size);
	b->fd[b->n++] = fd;
	return n;
}

/*
 * A file read through buf, size bytes at a time: proc's seq_file fills a read as far as
 * the buffer goes, so a 64 KiB buffer takes some 240 lines of /proc/bus/pci/devices a
 * call. What cb leaves of a chunk (a line cut by the read) starts the next.
 */
int root_read_chunks(const char *path, char *buf, size_t size,
		     ssize_t (*cb)(const char *chunk, size_t len, bool eof, void *data), void *data)
{
	size_t have = 0;
	int fd, r = 0;

	record(ROOT_REC_FILE, path);
	if (size < 2)
		return -EINVAL;
	fd = open_attr(path);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n = read_nointr(fd, buf + have, size - have), used;

		if (n < 0) {
			r = (int)n;
			break;
		}
		have += (size_t)n;
		used = cb(buf, have, n == 0, data);
		if (used < 0) {
			r = (int)used;
			break;
		}
		if (n == 0)
			break;
		have -= (size_t)used;
		if (have == size) {
			r = -EFBIG; /* a record longer than buf */
			break;
		}
		memmove(buf, buf + used, have);
	}
	close(fd);
	return r;
}

int root_link_name(const char *path, char *buf, size_t size)
{
	char target[512];
	const char *base;
	ssize_t n;

	record(ROOT_REC_LINK, path);
	n = readlinkat(rootfd, path, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	base = strrchr(target, '/');
	return strscpy(buf, base ? base + 1 : target, size);
}

int root_link_target(const char *path, char *buf, size_t size)
{
	ssize_t n;

	record(ROOT_REC_LINK, path);
	if (size < 2)
		return -EINVAL;
	n = readlinkat(rootfd, path, buf, size);
	if (n < 0)
		return -errno;
	if ((size_t)n >= size)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return 0;
}

/* A directory entry as getdents64(2) returns it. */
struct dirent64_raw {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/*
 * getdents64 itself rather than readdir: musl's DIR reads 2 KiB at a time (a call per ~50
 * PCI functions) and costs an fstat, two fcntl and an allocation per directory. The buffer
 * is on the stack; only what the kernel fills is touched.
 */
#define LIST_BUF (64 * 1024)

int root_list(const char *dir, int (*cb)(const char *name, void *data), void *data)
{
	char buf[LIST_BUF] __attribute__((aligned(8)));
	long n = 0;
	int fd, r = 0;

	record(ROOT_REC_DIR, dir);
	fd = openat(rootfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (r == 0 && (n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		long off = 0;

		while (off < n) {
			const struct dirent64_raw *de = (const void *)(buf + off);
			const char *name = de->d_name;

			off += de->d_reclen;
			if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
				continue;
			r = cb(name, data);
			if (r)
				break;
		}
	}
	if (r == 0 && n < 0)
		r = -errno;
	close(fd);
	return r;
}

bool root_exists(const char *path)
{
	record(ROOT_REC_NAME, path);
	return faccessat(rootfd, path, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

int root_dir_links(const char *path, unsigned long *links)
{
	struct stat st;

	record(ROOT_REC_DIR, path);
	if (fstatat(rootfd, path, &st, 0) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	*links = (unsigned long)st.st_nlink;
	return 0;
}

int root_stat_rdev(const char *path, unsigned *maj, unsigned *min)
{
	struct stat st;

	record(ROOT_REC_NAME, path);
	if (fstatat(rootfd, path, &st, 0) < 0)
		return -errno;
	if (!S_ISCHR(st.st_mode))
		return -ENODEV;
	*maj = major(st.st_rdev);
	*min = minor(st.st_rdev);
	return 0;
}

/*
 * Writes go through a writer process so that a driver stuck in its remove() cannot hold the
 * boot. One writer serves every write: the parent sends a sequence of writes, "path\0value\0"
 * each, in one SOCK_SEQPACKET message; the writer does openat + write + close for each in
 * order, stops at the first that fails, and answers once with how many were done and that
 * one's error. Each write is bounded by timeout_ms on its own: the writer stamps the
 * monotonic clock into a page it shares with the parent before it begins a write, and the
 * parent, woken by SO_RCVTIMEO while it waits for the answer, waits on until timeout_ms after
 * the stamp of the write under way (before the first stamp, the writer's start and the
 * scheduler's delay are no write's: WRITER_START_MS more). A write that does not end in
 * time has its writer cancelled in that page (a compare-and-swap, so that the writer cannot
 * have begun the next write meanwhile) and abandoned, still blocked in the kernel (it
 * cannot be killed there anyway): when that write returns, the writer does none of the
 * rest and exits. The next write starts a new writer. A writer exits when its socket
 * closes: at root_fini(), which reaps it, or when gpuvm exits in any other way. Without the
 * shared page (mmap failed) a request holds one write, bounded from when it was sent.
 */
#define WRITE_MSG_MAX 1024
#define ABANDONED_MAX 8
#define SEQ_CANCELLED UINT32_MAX

/* The page a writer shares with the parent: its progress, and its cancellation. */
struct progress {
	uint64_t started_ms; /* CLOCK_MONOTONIC when the write under way began, or the last ended */
	uint32_t seq;	     /* writes begun so far, or SEQ_CANCELLED */
	uint32_t ended;	     /* writes ended so far: seq while none is under way */
};

static struct {
	pid_t pid;	       /* -1: none running */
	int fd;		       /* our end of its socket */
	unsigned timeout_ms;   /* what SO_RCVTIMEO is set to */
	struct progress *prog; /* shared with the running writer, or the next; may be NULL */
} writer = { .pid = -1, .fd = -1 };

/* The answer to a request: the writes done in order, and the error of the next (0: all). */
struct answer {
	int32_t done;
	int32_t err;
};

/* Abandoned writers, reaped at root_fini() if their write ended meanwhile. */
static pid_t abandoned[ABANDONED_MAX];
static size_t n_abandoned;

static int write_once(const char *path, const char *value, size_t len)
{
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
 * A writer that may outlive us must hold none of our caller's files (a caller's pipe left
 * open would make the caller wait for a writer blocked in the kernel): every descriptor but
 * the root's and its socket is closed, stdio included, since the writer prints nothing.
 * The writer's end of the socket is the lower of the pair, so that the parent's end goes
 * with the rest (two calls where the root and the socket are 3 and 4, as at boot).
 * close_range(2) is Linux 5.9: on an older kernel the parent's end (other) is closed alone,
 * else the writer would never see the socket close; stdio goes to /dev/null instead and
 * the rest stay open.
 */
static void writer_detach(int fd, int other)
{
	int lo = rootfd >= 0 && rootfd < fd ? rootfd : fd;
	int hi = rootfd > fd ? rootfd : fd;
	int nul, i;

	if (syscall(SYS_close_range, hi + 1, ~0U, 0) == 0) {
		if (lo > 0)
			syscall(SYS_close_range, 0, lo - 1, 0);
		if (hi > lo + 1)
			syscall(SYS_close_range, lo + 1, hi - 1, 0);
		return;
	}
	close(other);
	nul = openat(AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC);
	if (nul < 0)
		return;
	for (i = STDIN_FILENO; i <= STDERR_FILENO; i++)
		if (i != nul && i != lo && i != hi)
			dup2(nul, i);
	if (nul > STDERR_FILENO)
		close(nul);
}

/* Stamp and claim the next write: false when the parent has cancelled this writer. */
static bool begin_write(struct progress *prog, uint32_t *seq)
{
	uint32_t want = *seq;

	if (!prog)
		return true;
	__atomic_store_n(&prog->started_ms, clock_ms(CLOCK_MONOTONIC), __ATOMIC_RELAXED);
	if (!__atomic_compare_exchange_n(&prog->seq, &want, want + 1, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return false;
	*seq = want + 1;
	return true;
}

/* Write seq has returned: none is under way until the next begins. */
static void end_write(struct progress *prog, uint32_t seq)
{
	if (!prog)
		return;
	__atomic_store_n(&prog->started_ms, clock_ms(CLOCK_MONOTONIC), __ATOMIC_RELAXED);
	__atomic_store_n(&prog->ended, seq, __ATOMIC_RELEASE);
}

/* The writes of a request ("path\0value\0" each), in order, up to the first that fails. */
static struct answer do_request(const char *msg, size_t len, struct progress *prog, uint32_t *seq)
{
	struct answer a = { 0, 0 };
	size_t off = 0;

	while (off < len) {
		const char *path = msg + off, *value;
		size_t plen = strnlen(path, len - off), vlen;

		if (plen + 1 >= len - off) {
			a.err = -EINVAL;
			break;
		}
		value = path + plen + 1;
		vlen = strnlen(value, len - off - plen - 1);
		if (vlen == len - off - plen - 1) {
			a.err = -EINVAL; /* no NUL after the value */
			break;
		}
		if (!begin_write(prog, seq)) {
			a.err = -ECANCELED;
			break;
		}
		a.err = write_once(path, value, vlen);
		end_write(prog, *seq);
		if (a.err)
			break;
		a.done++;
		off += plen + vlen + 2;
	}
	return a;
}

static void __attribute__((noreturn)) writer_main(int fd, int other, struct progress *prog)
{
	char msg[WRITE_MSG_MAX];
	uint32_t seq = prog ? __atomic_load_n(&prog->seq, __ATOMIC_ACQUIRE) : 0;

	writer_detach(fd, other);
	for (;;) {
		ssize_t n = recv(fd, msg, sizeof(msg), 0);
		struct answer a;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0); /* the parent closed its end: done */
		a = do_request(msg, (size_t)n, prog, &seq);
		if (a.err == -ECANCELED || send(fd, &a, sizeof(a), MSG_NOSIGNAL) != (ssize_t)sizeof(a))
			_exit(0); /* abandoned meanwhile */
	}
}

static int set_timeout(unsigned timeout_ms)
{
	struct timeval tv;

	tv.tv_sec = (time_t)(timeout_ms / 1000);
	tv.tv_usec = (suseconds_t)(timeout_ms % 1000) * 1000;
	if (setsockopt(writer.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	writer.timeout_ms = timeout_ms;
	return 0;
}

static int start_writer(void)
{
	int sv[2], r;
	pid_t pid;

	if (!writer.prog) {
		void *p = mmap(NULL, sizeof(*writer.prog), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

		writer.prog = p == MAP_FAILED ? NULL : p;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(sv[0]);
		close(sv[1]);
		return r;
	}
	if (pid == 0)
		writer_main(sv[0], sv[1], writer.prog);
	close(sv[0]);
	writer.pid = pid;
	writer.fd = sv[1];
	writer.timeout_ms = 0;
	return 0;
}

static void reap(pid_t pid, int flags)
{
	while (waitpid(pid, NULL, flags) < 0 && errno == EINTR)
		;
}

/*
 * Let the writer go. An idle or dead one exits on the closed socket and is reaped, and its
 * page serves the next; one still blocked in the kernel is abandoned with its page (the
 * caller has cancelled it there) and reaped later if it can be.
 */
static void stop_writer(bool blocked)
{
	if (writer.pid < 0)
		return;
	close(writer.fd);
	if (!blocked) {
		reap(writer.pid, 0);
	} else {
		if (n_abandoned < ABANDONED_MAX)
			abandoned[n_abandoned++] = writer.pid;
		/* beyond that, init reaps it after we exit */
		if (writer.prog)
			munmap(writer.prog, sizeof(*writer.prog));
		writer.prog = NULL;
	}
	writer.pid = -1;
	writer.fd = -1;
}

static void reap_abandoned(void)
{
	size_t i;

	for (i = 0; i < n_abandoned; i++)
		reap(abandoned[i], WNOHANG);
	n_abandoned = 0;
}

/*
 * Hand the request to a writer that waits timeout_ms for: a running one, or a new one if
 * the last one died since (its socket refuses: no write of it was done). *base: the writer's
 * count of writes begun, read before the send: a writer that has the request at once may
 * stamp its writes before a sender descheduled after the send would read it, and the
 * blocked one would then look not begun.
 */
static int send_request(const char *msg, size_t len, unsigned timeout_ms, uint32_t *base)
{
	int r = 0, tries;

	for (tries = 0; tries < 2; tries++) {
		if (writer.pid < 0) {
			r = start_writer();
			if (r < 0)
				return r;
		}
		if (writer.timeout_ms != timeout_ms) {
			r = set_timeout(timeout_ms);
			if (r < 0)
				return r;
		}
		*base = writer.prog ? __atomic_load_n(&writer.prog->seq, __ATOMIC_ACQUIRE) : 0;
		if (send(writer.fd, msg, len, MSG_NOSIGNAL) == (ssize_t)len)
			return 0;
		r = -errno;
		/* EPIPE, ECONNRESET: it is gone, the write not done; else do not wait for it */
		stop_writer(r != -EPIPE && r != -ECONNRESET);
	}
	return r;
}

void root_deny_writes(void)
{
	writes_denied = true;
}

/*
 * Woken with no answer (the bound, or a signal): whether to wait on. Once the writer has
 * begun the request's first write (seq past base), the deadline is timeout_ms from the stamp
 * of the write under way; between two writes (the last ended, the next not begun: the writer
 * descheduled, nothing that can hang) WRITER_START_MS more from the last one's end, as before
 * the first. One past its bound has its writer cancelled, unless the writer began the next
 * write first, which then has its own bound.
 */
#define WRITER_START_MS 10000

static bool wait_on(unsigned timeout_ms, uint64_t *deadline, uint32_t base, uint32_t *seen)
{
	struct progress *prog = writer.prog;
	uint32_t seq = *seen, ended;
	uint64_t now, at;

	for (;;) {
		if (prog) {
			do { /* the three of one moment: seq again after the others */
				seq = __atomic_load_n(&prog->seq, __ATOMIC_ACQUIRE);
				ended = __atomic_load_n(&prog->ended, __ATOMIC_ACQUIRE);
				at = __atomic_load_n(&prog->started_ms, __ATOMIC_RELAXED);
			} while (seq != __atomic_load_n(&prog->seq, __ATOMIC_ACQUIRE));
			if (seq != base && seq != SEQ_CANCELLED) {
				*seen = seq;
				*deadline = at + timeout_ms + (ended == seq ? WRITER_START_MS : 0);
			}
		}
		now = clock_ms(CLOCK_MONOTONIC);
		if (now < *deadline)
			return set_timeout((unsigned)(*deadline - now)) == 0;
		seq = *seen;
		if (!prog ||
		    __atomic_compare_exchange_n(&prog->seq, &seq, SEQ_CANCELLED, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return false;
	}
}

/*
 * One request: as many of the n writes as a message holds (one without a shared page), in
 * *sent. 0 when they were all done, else the -errno of write *failed; -ETIMEDOUT: it did
 * not end in time and is left blocked, the rest not done.
 */
static int request(const struct root_wr *w, size_t n, unsigned timeout_ms, size_t *sent, size_t *failed)
{
	char msg[WRITE_MSG_MAX];
	size_t len = 0, k, max;
	uint32_t seen, base;
	uint64_t deadline;
	struct answer a;
	ssize_t got;
	int r;

	*failed = 0;
	if (writer.pid < 0) {
		r = start_writer();
		if (r < 0)
			return r;
	}
	max = writer.prog ? n : 1;
	for (k = 0; k < max; k++) {
		size_t plen = strlen(w[k].path), vlen = strlen(w[k].value);

		if (len + plen + vlen + 2 > sizeof(msg))
			break;
		memcpy(msg + len, w[k].path, plen + 1);
		memcpy(msg + len + plen + 1, w[k].value, vlen + 1);
		len += plen + vlen + 2;
	}
	if (k == 0)
		return -ENAMETOOLONG;
	*sent = k;
	r = send_request(msg, len, timeout_ms, &base);
	if (r < 0)
		return r;
	seen = base;
	/*
	 * A write's bound counts from its stamp: until the writer stamps the first, no write
	 * is under way (a writer just forked, a busy scheduler), and it gets WRITER_START_MS
	 * more to get there. Without the page the bound is all there is.
	 */
	deadline = clock_ms(CLOCK_MONOTONIC) + timeout_ms + (writer.prog ? WRITER_START_MS : 0);
	for (;;) {
		got = recv(writer.fd, &a, sizeof(a), 0);
		if (got >= 0 || (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK))
			break;
		if (!wait_on(timeout_ms, &deadline, base, &seen)) {
			*failed = seen > base ? seen - base - 1 : 0;
			stop_writer(true); /* still blocked in the kernel: leave it there */
			return -ETIMEDOUT;
		}
	}
	if (got == (ssize_t)sizeof(a) && a.done >= 0 && (size_t)a.done <= k && a.err <= 0 &&
	    ((size_t)a.done == k) == (a.err == 0)) {
		*failed = (size_t)a.done;
		return a.err;
	}
	/* Closed (it died; it is reaped) or a failed recv: the next write starts a new one. */
	stop_writer(got != 0);
	return -EIO;
}

int root_write_seq(const struct root_wr *w, size_t n, unsigned timeout_ms, size_t *failed)
{
	size_t i = 0, sent, at;
	int r;

	*failed = 0;
	if (writes_denied)
		return -EROFS;
	if (!timeout_ms)
		timeout_ms = 1; /* 0 would mean "forever" to SO_RCVTIMEO */
	while (i < n) {
		r = request(w + i, n - i, timeout_ms, &sent, &at);
		if (r < 0) {
			*failed = i + at;
			return r;
		}
		i += sent;
	}
	return 0;
}

int root_write(const char *path, const char *value, unsigned timeout_ms)
{
	struct root_wr w = { path, value };
	size_t failed;

	return root_write_seq(&w, 1, timeout_ms, &failed);
}

/*
 * The stdio buffer of a file written whole: a state file of 10,000 functions in a few writes.
 * One for the process (a fill function writes no file), in the BSS: no mmap and munmap for
 * each file, and its pages are touched only as far as a file reaches.
 */
static char file_buf[65536];

/*
 * The directory is walked without following a symlink and the temporary is created with
 * O_EXCL (src/writefile.h): a symlinked /run/gpuvm or a link planted at the temporary's
 * name cannot send the write elsewhere. The file itself is replaced by the rename, which
 * never follows what it replaces. No fsync: /run is a tmpfs, which no crash leaves behind
 * (and where fsync does nothing), and the rename alone keeps a reader from a torn file.
 */
int root_write_file_with(const char *dir, const char *name, void (*fill)(FILE *f, void *data),
			 void *data)
{
	char tmp[NAME_MAX + 1];
	const char *why;
	int fd, dfd, r = 0;
	FILE *f;

	if (writes_denied)
		return -EROFS;
	if (strncmp(dir, "run/", 4) != 0)
		return -EINVAL; /* not made to last: see above */
	dfd = wf_open_dir(rootfd, dir, true, &why);
	if (dfd < 0)
		return dfd;
	fd = wf_create_tmp(dfd, name, 0644, tmp, sizeof(tmp), &why);
	if (fd < 0) {
		close(dfd);
		return fd;
	}
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		goto out;
	}
	setvbuf(f, file_buf, _IOFBF, sizeof(file_buf));
	errno = 0;
	fill(f, data);
	if (fflush(f) != 0 || ferror(f))
		r = errno ? -errno : -EIO;
	if (fclose(f) != 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dfd, tmp, dfd, name) < 0)
		r = -errno;
out:
	if (r < 0)
		unlinkat(dfd, tmp, 0);
	close(dfd);
	return r;
}

int root_open_dir(const char *dir, bool create, const char **why)
{
	*why = NULL;
	if (writes_denied)
		return -EROFS;
	return wf_open_dir(rootfd, dir, create, why);
}

int root_remove_file(const char *dir, const char *name)
{
	const char *why;
	int dfd, r = 0;

	if (writes_denied)
		return -EROFS;
	dfd = wf_open_dir(rootfd, dir, false, &why);
	if (dfd < 0) /* no directory (or a file in its place): no file in it */
		return dfd == -ENOENT || dfd == -ENOTDIR ? 0 : dfd;
	if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
		r = -errno;
	close(dfd);
	return r;
}

struct bytes {
	const char *data;
	size_t len;
};

static void fill_bytes(FILE *f, void *data)
{
	const struct bytes *b = data;

	fwrite(b->data, 1, b->len, f);
}

int root_write_file(const char *dir, const char *name, const char *data, size_t len)
{
	struct bytes b = { data, len };

	return root_write_file_with(dir, name, fill_bytes, &b);
}
