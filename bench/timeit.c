// SPDX-License-Identifier: MIT
/*
 * timeit: run a command many times and report its wall time (min, median, max), its CPU
 * time and its peak RSS, as a boot hook sees them: the clock runs from fork() to the
 * reaped exit; the command's output goes to /dev/null. A PREPARE shell command runs
 * before every run (warm-up runs included), outside the timed region.
 *
 *   timeit [-n RUNS] [-w WARMUP] [-p PREPARE] -- COMMAND [ARG]...
 *   timeit -x -- COMMAND [ARG]...    (run it once, untimed, as below: for strace, callgrind)
 *   timeit [-n RUNS] [-w WARMUP] -m SPEC -o DIR   (several commands, interleaved: below)
 *
 * The command starts as a boot hook does, with descriptors 0-2 only: whatever else the
 * caller's shell holds (a job runner's pipe, say) is closed first, so that it cannot change
 * what is measured (gpuvm closes its reads in runs of consecutive descriptors).
 * One line on stdout, key=value: runs min_us median_us max_us mean_us cpu_median_us
 * maxrss_kib hwm_kib minflt status. minflt: the median count of minor page faults of a run. Exit 1
 * if the command's exit status changes between runs.
 *
 * hwm_kib is the command's own peak RSS: VmHWM, read at its exit in one more run, traced
 * (hwm_run). maxrss_kib, the largest ru_maxrss of the timed runs, is not that: the kernel
 * keeps in it the memory the child had before its execve (the pages of this launcher: about
 * 170 KiB more with glibc, which is why bench/run.sh builds it static with musl), and its
 * RSS counters lag by up to 64 pages a CPU (a small program can show 0).
 *
 * -m SPEC: the entries of the file SPEC are measured in one interleaved run (A B C A B C …,
 * warm-up rounds first), so that whatever else the machine does hits them alike. SPEC has
 * one line a directive:
 *   entry NAME        a new entry (its results go to DIR/NAME.time, one line as above)
 *   prep COMMAND      a shell command run before each run of the entry, untimed
 *   exec ARG<TAB>ARG… a command of the entry (tab-separated arguments, the first a path);
 *                     an entry of several runs them one after another, each forked from
 *                     here, as a shell script would; its time is from the first fork to the
 *                     last reap, its CPU time and page faults the sum, its status the first
 *                     non-zero one (the rest of its commands are not run then); hwm_kib the
 *                     largest VmHWM of its commands (each command's own process)
 * DIR/NAME.samples gets the wall time of each timed run, in µs, in the order run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Every descriptor above stderr: close_range(2), else one by one up to the limit. */
static void close_above_stderr(void)
{
	long fd, max;

	if (syscall(SYS_close_range, 3U, ~0U, 0) == 0)
		return;
	max = sysconf(_SC_OPEN_MAX);
	for (fd = 3; fd < (max > 0 ? max : 1024); fd++)
		close((int)fd);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

static long long median(long long *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_ll);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void prepare(const char *cmd)
{
	int r;

	if (!cmd)
		return;
	r = system(cmd);
	if (r != 0) {
		fprintf(stderr, "timeit: prepare command failed (%d): %s\n", r, cmd);
		exit(1);
	}
}

/* One run: wall ns, CPU ns, maxrss (KiB) and minor faults of the child; its wait status. */
static int run_once(char **argv, long long *wall, long long *cpu, long *rss, long long *flt)
{
	struct rusage ru;
	long long t0, t1;
	int status;
	pid_t pid;

	t0 = now_ns();
	pid = fork();
	if (pid < 0) {
		perror("timeit: fork");
		exit(1);
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);

		if (nul >= 0) {
			dup2(nul, STDOUT_FILENO);
			dup2(nul, STDERR_FILENO);
		}
		close_above_stderr();
		execv(argv[0], argv);
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR) {
			perror("timeit: wait4");
			exit(1);
		}
	t1 = now_ns();
	*wall = t1 - t0;
	*cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
		(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
	*rss = ru.ru_maxrss;
	*flt = ru.ru_minflt;
	return status;
}

/* VmHWM (KiB) of /proc/PID/status, or -1. */
static long read_hwm(pid_t pid)
{
	char path[64], line[128];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/*
 * One more run, traced: stopped at its exit (PTRACE_EVENT_EXIT), the command's own peak
 * RSS is read from /proc/PID/status (VmHWM of the memory it has since its execve: neither
 * this launcher's pages nor the kernel's lagging RSS counters count). Not timed. -1 when
 * tracing is not allowed.
 */
static long hwm_run(char **argv)
{
	long hwm = -1;
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);

		if (nul >= 0) {
			dup2(nul, STDOUT_FILENO);
			dup2(nul, STDERR_FILENO);
		}
		close_above_stderr();
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	/* The first stop is the execve's SIGTRAP. */
	if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status)) {
		waitpid(pid, &status, 0);
		return -1;
	}
	ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)PTRACE_O_TRACEEXIT);
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	while (waitpid(pid, &status, 0) == pid) {
		if (WIFEXITED(status) || WIFSIGNALED(status))
			break;
		if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
			hwm = read_hwm(pid);
			ptrace(PTRACE_CONT, pid, NULL, NULL);
		} else {
			/* a signal for it (SIGCHLD of apply's writer): delivered as it came */
			ptrace(PTRACE_CONT, pid, NULL, (void *)(long)WSTOPSIG(status));
		}
	}
	return hwm;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: timeit [-n RUNS] [-w WARMUP] [-p PREPARE] -- CMD [ARG]...\n"
		"       timeit -x -- CMD [ARG]...\n"
		"       timeit [-n RUNS] [-w WARMUP] -m SPEC -o DIR\n");
	return 2;
}

/* One entry of an interleaved run (-m). */
struct entry {
	char *name;
	char *prep;
	char ***argv; /* nexec commands, each a NULL-terminated argv */
	int nexec;
	long long *wall, *cpu, *flt, sum;
	long maxrss;
	int status;
};

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		perror("timeit");
		exit(1);
	}
	return p;
}

/* A tab-separated line (no newline) as a NULL-terminated argv; the line is kept. */
static char **split_tabs(char *line)
{
	char **argv = NULL;
	int n = 0;

	for (char *tok = strtok(line, "\t"); tok; tok = strtok(NULL, "\t")) {
		argv = xrealloc(argv, sizeof(*argv) * (size_t)(n + 2));
		argv[n++] = tok;
	}
	if (!argv)
		return NULL;
	argv[n] = NULL;
	return argv;
}

static int read_spec(const char *path, struct entry **out)
{
	struct entry *e = NULL, *cur = NULL;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int n = 0, lineno = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "timeit: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		char *copy;

		lineno++;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (len == 0 || line[0] == '#')
			continue;
		copy = strdup(line);
		if (!copy) {
			perror("timeit");
			exit(1);
		}
		if (strncmp(copy, "entry ", 6) == 0) {
			e = xrealloc(e, sizeof(*e) * (size_t)(n + 1));
			cur = &e[n++];
			memset(cur, 0, sizeof(*cur));
			cur->name = copy + 6;
		} else if (cur && strncmp(copy, "prep ", 5) == 0) {
			cur->prep = copy + 5;
		} else if (cur && strncmp(copy, "exec ", 5) == 0) {
			char **argv = split_tabs(copy + 5);

			if (!argv) {
				fprintf(stderr, "timeit: %s:%d: exec without a command\n", path,
					lineno);
				exit(1);
			}
			cur->argv = xrealloc(cur->argv, sizeof(*cur->argv) * (size_t)(cur->nexec + 1));
			cur->argv[cur->nexec++] = argv;
		} else {
			fprintf(stderr, "timeit: %s:%d: expected entry, prep or exec\n", path, lineno);
			exit(1);
		}
	}
	free(line);
	fclose(f);
	for (int i = 0; i < n; i++)
		if (e[i].nexec == 0) {
			fprintf(stderr, "timeit: %s: entry %s has no exec line\n", path, e[i].name);
			exit(1);
		}
	*out = e;
	return n;
}

/* One run of an entry: its commands one after another; the first non-zero status stops it. */
static int run_entry(struct entry *e, long long *wall, long long *cpu, long long *flt)
{
	long long w, u, f;
	long rss;
	int st = 0;

	*wall = *cpu = *flt = 0;
	for (int k = 0; k < e->nexec; k++) {
		st = run_once(e->argv[k], &w, &u, &rss, &f);
		*wall += w;
		*cpu += u;
		*flt += f;
		if (rss > e->maxrss)
			e->maxrss = rss;
		if (st != 0)
			break;
	}
	return st;
}

static int interleaved(const char *spec, const char *dir, int runs, int warm)
{
	struct entry *e;
	int n = read_spec(spec, &e);

	for (int i = 0; i < n; i++) {
		e[i].wall = calloc((size_t)runs, sizeof(long long));
		e[i].cpu = calloc((size_t)runs, sizeof(long long));
		e[i].flt = calloc((size_t)runs, sizeof(long long));
		if (!e[i].wall || !e[i].cpu || !e[i].flt)
			return 1;
		e[i].status = -1;
	}
	for (int r = 0; r < warm + runs; r++) {
		for (int i = 0; i < n; i++) {
			long long w, u, f;
			int st;

			prepare(e[i].prep);
			st = run_entry(&e[i], &w, &u, &f);
			if (r > 0 && st != e[i].status) {
				fprintf(stderr,
					"timeit: %s: exit status changed between runs (%#x, %#x)\n",
					e[i].name, e[i].status, st);
				return 1;
			}
			e[i].status = st;
			if (r < warm)
				continue;
			e[i].wall[r - warm] = w;
			e[i].cpu[r - warm] = u;
			e[i].flt[r - warm] = f;
			e[i].sum += w;
		}
	}
	for (int i = 0; i < n; i++) {
		char path[4096];
		long hwm = -1;
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s.samples", dir, e[i].name);
		f = fopen(path, "w");
		if (!f) {
			fprintf(stderr, "timeit: %s: %s\n", path, strerror(errno));
			return 1;
		}
		for (int r = 0; r < runs; r++)
			fprintf(f, "%lld\n", e[i].wall[r] / 1000);
		fclose(f);
		prepare(e[i].prep);
		for (int k = 0; k < e[i].nexec; k++) {
			long h = hwm_run(e[i].argv[k]);

			if (h > hwm)
				hwm = h;
		}
		snprintf(path, sizeof(path), "%s/%s.time", dir, e[i].name);
		f = fopen(path, "w");
		if (!f) {
			fprintf(stderr, "timeit: %s: %s\n", path, strerror(errno));
			return 1;
		}
		{
			long long med = median(e[i].wall, runs), cmed = median(e[i].cpu, runs),
				  fmed = median(e[i].flt, runs);
			int st = e[i].status;

			fprintf(f,
				"runs=%d min_us=%lld median_us=%lld max_us=%lld mean_us=%lld "
				"cpu_median_us=%lld maxrss_kib=%ld hwm_kib=%ld minflt=%lld status=%d\n",
				runs, e[i].wall[0] / 1000, med / 1000, e[i].wall[runs - 1] / 1000,
				e[i].sum / runs / 1000, cmed / 1000, e[i].maxrss, hwm, fmed,
				WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		}
		fclose(f);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *prep = NULL, *spec = NULL, *dir = NULL;
	int runs = 30, warm = 3, once = 0, c, i, status = -1;
	long long *wall, *cpu, *flt, sum = 0;
	long rss, maxrss = 0, hwm;

	while ((c = getopt(argc, argv, "+n:w:p:xm:o:")) != -1) {
		switch (c) {
		case 'm':
			spec = optarg;
			break;
		case 'o':
			dir = optarg;
			break;
		case 'x':
			once = 1;
			break;
		case 'n':
			runs = atoi(optarg);
			break;
		case 'w':
			warm = atoi(optarg);
			break;
		case 'p':
			prep = optarg;
			break;
		default:
			return usage();
		}
	}
	if (spec || dir) {
		if (!spec || !dir || optind != argc || runs < 1 || warm < 0 || once || prep)
			return usage();
		return interleaved(spec, dir, runs, warm);
	}
	if (optind >= argc || runs < 1 || warm < 0) {
		return usage();
	}
	argv += optind;
	if (once) {
		close_above_stderr();
		execvp(argv[0], argv);
		fprintf(stderr, "timeit: %s: %s\n", argv[0], strerror(errno));
		return 127;
	}
	wall = calloc((size_t)runs, sizeof(*wall));
	cpu = calloc((size_t)runs, sizeof(*cpu));
	flt = calloc((size_t)runs, sizeof(*flt));
	if (!wall || !cpu || !flt)
		return 1;
	for (i = 0; i < warm + runs; i++) {
		long long w, u, f;
		int st;

		prepare(prep);
		st = run_once(argv, &w, &u, &rss, &f);
		if (i > 0 && st != status) {
			fprintf(stderr, "timeit: exit status changed between runs (%#x, %#x)\n",
				status, st);
			return 1;
		}
		status = st;
		if (rss > maxrss)
			maxrss = rss;
		if (i < warm)
			continue;
		wall[i - warm] = w;
		cpu[i - warm] = u;
		flt[i - warm] = f;
		sum += w;
	}
	prepare(prep);
	hwm = hwm_run(argv);
	{
		long long med = median(wall, runs), cmed = median(cpu, runs), fmed = median(flt, runs);

		/* median() sorted wall[]: its ends are min and max. */
		printf("runs=%d min_us=%lld median_us=%lld max_us=%lld mean_us=%lld "
		       "cpu_median_us=%lld maxrss_kib=%ld hwm_kib=%ld minflt=%lld status=%d\n",
		       runs, wall[0] / 1000, med / 1000, wall[runs - 1] / 1000, sum / runs / 1000,
		       cmed / 1000, maxrss, hwm, fmed,
		       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	}
	return 0;
}
