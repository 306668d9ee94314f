// SPDX-License-Identifier: MIT
/* The fake kernel: see fake-kernel.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include "fake-kernel.h"
#include "kmod.h"
#include "rootio.h"

#define MAXDEV 64
#define MAXDRV 16

struct fdev {
	char name[16];
	unsigned vendor, device, class;
	int group;
	char driver[64], override[64], native[64];
	int sriov;
	int vfio; /* the index of its vfio device (vfio-dev/vfioN) while on a vfio driver, else -1 */
	char drm[16];
	unsigned drm_minor;
	int fb;		 /* graphics/fbN: -1 none */
	int nv_minor;	 /* -1: no nvidia information file */
	int unbind_lock; /* -1 none, 0 free, 1 taken */
	int nv_clients;
	int numvfs;
	bool removed;
};

struct fproc {
	int pid;
	char comm[16], path[48];
	unsigned major, minor;
	bool gone;
};

struct fault {
	char what[64];
	int nth, err, seen;
};

static struct {
	bool iommu;
	bool smmu; /* groups at first probe */
	int next_group;
	int vfio_dev;	   /* 0: no vfio-dev (5.10), 1: vfio-dev/vfioN (6.1), 2: and its cdev */
	bool no_group_dev; /* no class vfio device for a group (CONFIG_VFIO_GROUP unset) */
	bool no_proc_pci;  /* no /proc/bus/pci/devices (CONFIG_PROC_FS unset) */
	int next_vfio;
	struct fdev dev[MAXDEV];
	int n;
	char drivers[MAXDRV][64];
	int n_drivers;
	char mod_name[MAXDRV][64], mod_drv[MAXDRV][64];
	int n_mods;
	char var_prefix[4][96], var_mod[4][64];
	int n_var;
	struct fault faults[8];
	char dyn_drv[4][64];
	unsigned dyn_vendor[4], dyn_device[4];
	int n_dyn;
	int n_faults;
	char *state;
	char *metrics;			      /* the metrics file (gpuvm.prom) */
	char *record[2];		      /* /run/gpuvm/pending and root-pending */
	char pinned_name[8][24], *pinned[8];  /* /run/gpuvm/pinned/ADDR records */
	char fault_path[160];		      /* the path of the last fault that fired */
	char file_path[8][64], *file_text[8]; /* whole files (fk_file) */
	int n_files;
	int writes, loads;
	int fired; /* faults that fired */
	char probe_error[160];
	struct fproc procs[8];
	int n_procs, scans;
	void (*on_scan)(int scans);
} k;

void fk_reset(bool iommu)
{
	free(k.state);
	free(k.metrics);
	free(k.record[0]);
	free(k.record[1]);
	for (int i = 0; i < 8; i++)
		free(k.pinned[i]);
	while (k.n_files)
		free(k.file_text[--k.n_files]);
	memset(&k, 0, sizeof(k));
	k.iommu = iommu;
	k.vfio_dev = 1;
}

void fk_file(const char *path, const char *text)
{
	snprintf(k.file_path[k.n_files], sizeof(k.file_path[0]), "%s", path);
	k.file_text[k.n_files++] = strdup(text);
}

void fk_vfio(int vfio_dev, bool group_dev)
{
	k.vfio_dev = vfio_dev;
	k.no_group_dev = !group_dev;
}

void fk_no_proc_pci(void)
{
	k.no_proc_pci = true;
}

void fk_smmu(void)
{
	k.smmu = true;
	k.next_group = 100;
}

static void set_driver(struct fdev *d, const char *drv);
static const char *whole_file(const char *top, const char *path);

static struct fdev *find(const char *name)
{
	int i;

	for (i = 0; i < k.n; i++)
		if (!k.dev[i].removed && strcmp(k.dev[i].name, name) == 0)
			return &k.dev[i];
	return NULL;
}

void fk_drm(const char *addr, const char *name, unsigned minor)
{
	struct fdev *d = find(addr);

	snprintf(d->drm, sizeof(d->drm), "%s", name);
	d->drm_minor = minor;
}

void fk_fb(const char *addr, int minor)
{
	find(addr)->fb = minor;
}

void fk_nvidia(const char *addr, int minor, bool unbind_lock)
{
	struct fdev *d = find(addr);

	d->nv_minor = minor;
	d->unbind_lock = unbind_lock ? 0 : -1;
}

void fk_nvidia_clients(const char *addr, int clients)
{
	find(addr)->nv_clients = clients;
}

bool fk_unbind_locked(const char *addr)
{
	return find(addr)->unbind_lock == 1;
}

void fk_numvfs(const char *addr, int numvfs)
{
	find(addr)->numvfs = numvfs;
}

void fk_proc(int pid, const char *comm, const char *path, unsigned major, unsigned minor)
{
	struct fproc *p = &k.procs[k.n_procs++];

	p->pid = pid;
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	snprintf(p->path, sizeof(p->path), "%s", path);
	p->major = major;
	p->minor = minor;
}

static struct fproc *find_proc(int pid)
{
	int i;

	for (i = 0; i < k.n_procs; i++)
		if (k.procs[i].pid == pid && !k.procs[i].gone)
			return &k.procs[i];
	return NULL;
}

void fk_proc_exit(int pid)
{
	struct fproc *p = find_proc(pid);

	if (p)
		p->gone = true;
}

void fk_on_proc_scan(void (*fn)(int scans))
{
	k.on_scan = fn;
}

int fk_proc_scans(void)
{
	return k.scans;
}

void fk_remove(const char *addr)
{
	find(addr)->removed = true;
}

void fk_add(const char *addr, unsigned vendor, unsigned device, unsigned class, int group,
	    const char *driver, const char *native)
{
	struct fdev *d = &k.dev[k.n++];

	snprintf(d->name, sizeof(d->name), "%s", addr);
	d->vendor = vendor;
	d->device = device;
	d->class = class;
	d->group = k.iommu ? group : -1;
	set_driver(d, driver ? driver : "");
	snprintf(d->native, sizeof(d->native), "%s", native ? native : (driver ? driver : ""));
	d->sriov = -1;
	d->nv_minor = -1;
	d->fb = -1;
	d->unbind_lock = -1;
}

void fk_set_override(const char *addr, const char *drv)
{
	snprintf(find(addr)->override, sizeof(find(addr)->override), "%s", drv);
}

void fk_set_sriov(const char *addr, int totalvfs)
{
	find(addr)->sriov = totalvfs;
}

static bool registered(const char *drv)
{
	int i;

	for (i = 0; i < k.n_drivers; i++)
		if (strcmp(k.drivers[i], drv) == 0)
			return true;
	return false;
}

void fk_driver_loaded(const char *drv)
{
	if (!registered(drv))
		snprintf(k.drivers[k.n_drivers++], 64, "%s", drv);
}

void fk_module(const char *name, const char *drv)
{
	snprintf(k.mod_name[k.n_mods], 64, "%s", name);
	snprintf(k.mod_drv[k.n_mods++], 64, "%s", drv);
}

void fk_variant(const char *prefix, const char *module)
{
	snprintf(k.var_prefix[k.n_var], 96, "%s", prefix);
	snprintf(k.var_mod[k.n_var++], 64, "%s", module);
}

void fk_dynid(const char *drv, unsigned vendor, unsigned device)
{
	snprintf(k.dyn_drv[k.n_dyn], 64, "%s", drv);
	k.dyn_vendor[k.n_dyn] = vendor;
	k.dyn_device[k.n_dyn++] = device;
}

static bool dyn_match(const struct fdev *d, const char *drv)
{
	int i;

	for (i = 0; i < k.n_dyn; i++)
		if (strcmp(k.dyn_drv[i], drv) == 0 && k.dyn_vendor[i] == d->vendor &&
		    k.dyn_device[i] == d->device)
			return true;
	return false;
}

static bool is_vfio(const char *drv)
{
	return strstr(drv, "vfio") != NULL;
}

/* The vfio core registers a vfio device (an index) for each device a vfio driver binds. */
static void set_driver(struct fdev *d, const char *drv)
{
	snprintf(d->driver, sizeof(d->driver), "%s", drv);
	d->vfio = is_vfio(drv) ? k.next_vfio++ : -1;
}

/* The PCI core's match and the driver's probe for one device. */
static bool try_attach(struct fdev *d, const char *drv)
{
	if (d->driver[0] || !registered(drv))
		return false;
	if (d->override[0] ? strcmp(d->override, drv) != 0 :
			     strcmp(d->native, drv) != 0 && !dyn_match(d, drv))
		return false;
	/* A firmware-described SMMU: the probe's dma_configure gives the group first. */
	if (k.iommu && k.smmu && d->group < 0)
		d->group = k.next_group++;
	if (is_vfio(drv) && d->group < 0) {
		snprintf(k.probe_error, sizeof(k.probe_error),
			 "vfio-pci: probe of %s failed with error -22", d->name);
		return false;
	}
	set_driver(d, drv);
	return true;
}

void fk_load_driver(const char *drv)
{
	int i;

	fk_driver_loaded(drv);
	for (i = 0; i < k.n; i++)
		try_attach(&k.dev[i], drv);
}

void fk_fault(const char *what, int nth, int err)
{
	struct fault *f = &k.faults[k.n_faults++];

	snprintf(f->what, sizeof(f->what), "%s", what);
	f->nth = nth;
	f->err = err;
}

/* Faults on reads are named "r:PATH"; on writes, module loads and the state file, not. */
static int fault_at(const char *path, bool read)
{
	int i;

	for (i = 0; i < k.n_faults; i++) {
		struct fault *f = &k.faults[i];
		bool is_read = strncmp(f->what, "r:", 2) == 0;

		if (is_read != read || !strstr(path, f->what + (is_read ? 2 : 0)))
			continue;
		if (++f->seen == f->nth || f->nth == 0) {
			k.fired++;
			snprintf(k.fault_path, sizeof(k.fault_path), "%s", path);
			return f->err;
		}
	}
	return 0;
}

int fk_faults_fired(void)
{
	return k.fired;
}

static int faulted(const char *path)
{
	return fault_at(path, false);
}

static int read_faulted(const char *path)
{
	return fault_at(path, true);
}

const char *fk_driver(const char *addr)
{
	return find(addr)->driver;
}

const char *fk_override(const char *addr)
{
	return find(addr)->override;
}

const char *fk_state(void)
{
	return k.state;
}

const char *fk_metrics(void)
{
	return k.metrics;
}

int fk_writes(void)
{
	return k.writes;
}

int fk_modules_loaded(void)
{
	return k.loads;
}

const char *fk_kmsg_probe_error(void)
{
	return k.probe_error;
}

/* "proc/driver/nvidia/gpus/ADDR/NAME": ADDR in addr (32 bytes). */
static bool nv_file(const char *path, const char *name, char *addr)
{
	int end = 0;

	if (sscanf(path, "proc/driver/nvidia/gpus/%31[^/]/%n", addr, &end) != 1 || !end)
		return false;
	return strcmp(path + end, name) == 0;
}

/* rootio.h */

int root_init(const char *root)
{
	(void)root;
	return 0;
}

void root_fini(void)
{
}

int root_open(const char *path)
{
	int fd;

	while (*path == '/')
		path++;
	fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

#define DEVP "sys/bus/pci/devices/"

/* "sys/bus/pci/devices/NAME/ATTR" -> device and attribute. */
static struct fdev *dev_attr(const char *path, const char **attr)
{
	char name[32];
	const char *slash;

	if (strncmp(path, DEVP, strlen(DEVP)) != 0)
		return NULL;
	path += strlen(DEVP);
	slash = strchr(path, '/');
	if (!slash || (size_t)(slash - path) >= sizeof(name))
		return NULL;
	memcpy(name, path, (size_t)(slash - path));
	name[slash - path] = '\0';
	*attr = slash + 1;
	return find(name);
}

static ssize_t out(char *buf, size_t size, const char *text)
{
	snprintf(buf, size, "%s", text);
	return (ssize_t)strlen(buf);
}

ssize_t root_read(const char *path, char *buf, size_t size)
{
	const char *attr;
	struct fdev *d = dev_attr(path, &attr);
	char tmp[512];
	int err = read_faulted(path);

	if (err)
		return err;
	if (strcmp(path, "proc/cpuinfo") == 0)
		return out(buf, size, "processor\t: 0\nvendor_id\t: GenuineIntel\n");
	if (strcmp(path, "proc/sys/kernel/osrelease") == 0)
		return out(buf, size, "6.1.0-fake\n");
	if (strcmp(path, "run/gpuvm/state.json") == 0)
		return k.state ? out(buf, size, k.state) : -ENOENT;
	if (strncmp(path, "run/gpuvm/", 10) == 0 && fk_record(path + 10))
		return out(buf, size, fk_record(path + 10));
	{
		int pid, g, end = 0;
		char addr[32];
		struct fproc *p;
		struct fdev *n;

		if (sscanf(path, "proc/%d/comm%n", &pid, &end) == 1 && path[end] == '\0')
			return (p = find_proc(pid)) ? out(buf, size, p->comm) : -ENOENT;
		if (nv_file(path, "information", addr) && (n = find(addr)) && n->nv_minor >= 0) {
			snprintf(tmp, sizeof(tmp), "Model: \t\t fake\nDevice Minor: \t %d\n",
				 n->nv_minor);
			return out(buf, size, tmp);
		}
		if (nv_file(path, "unbindLock", addr) && (n = find(addr)) && n->unbind_lock >= 0)
			return out(buf, size, n->unbind_lock ? "1\n" : "0\n");
		if (sscanf(path, "sys/class/vfio/%d/dev%n", &g, &end) == 1 && path[end] == '\0') {
			char grp[48];

			snprintf(grp, sizeof(grp), "sys/class/vfio/%d", g);
			snprintf(tmp, sizeof(tmp), "243:%d\n", g);
			return root_exists(grp) ? out(buf, size, tmp) : -ENOENT;
		}
	}
	if (!d)
		return -ENOENT;
	if (d->drm[0] && strncmp(attr, "drm/", 4) == 0 &&
	    strncmp(attr + 4, d->drm, strlen(d->drm)) == 0 &&
	    strcmp(attr + 4 + strlen(d->drm), "/dev") == 0) {
		snprintf(tmp, sizeof(tmp), "226:%u\n", d->drm_minor);
		return out(buf, size, tmp);
	}
	if (d->fb >= 0) {
		int n, end = 0;

		if (sscanf(attr, "graphics/fb%d/dev%n", &n, &end) == 1 && attr[end] == '\0' &&
		    n == d->fb) {
			snprintf(tmp, sizeof(tmp), "29:%d\n", n);
			return out(buf, size, tmp);
		}
	}
	if (strcmp(attr, "sriov_numvfs") == 0 && d->sriov >= 0) {
		snprintf(tmp, sizeof(tmp), "%d\n", d->numvfs);
		return out(buf, size, tmp);
	}
	{
		int n, end = 0;

		if (sscanf(attr, "vfio-dev/vfio%d/dev%n", &n, &end) == 1 && attr[end] == '\0' &&
		    k.vfio_dev == 2 && d->vfio == n) {
			snprintf(tmp, sizeof(tmp), "511:%d\n", n);
			return out(buf, size, tmp);
		}
	}
	if (strcmp(attr, "uevent") == 0) {
		snprintf(tmp, sizeof(tmp),
			 "%s%s%sPCI_CLASS=%X\nPCI_ID=%04X:%04X\nPCI_SUBSYS_ID=0000:0000\n"
			 "PCI_SLOT_NAME=%s\nMODALIAS=pci:v0000%04Xd0000%04Xsv00000000sd00000000bc%02Xsc%02Xi%02X\n",
			 d->driver[0] ? "DRIVER=" : "", d->driver, d->driver[0] ? "\n" : "",
			 d->class, d->vendor, d->device, d->name, d->vendor, d->device,
			 d->class >> 16, (d->class >> 8) & 0xff, d->class & 0xff);
		return out(buf, size, tmp);
	}
	if (strcmp(attr, "driver_override") == 0) {
		snprintf(tmp, sizeof(tmp), "%s\n", d->override[0] ? d->override : "(null)");
		return out(buf, size, tmp);
	}
	if (strcmp(attr, "sriov_totalvfs") == 0 && d->sriov >= 0) {
		snprintf(tmp, sizeof(tmp), "%d\n", d->sriov);
		return out(buf, size, tmp);
	}
	return -ENOENT;
}

ssize_t root_read_batched(struct root_batch *b, const char *path, char *buf, size_t size)
{
	(void)b;
	return root_read(path, buf, size);
}

void root_batch_close(struct root_batch *b)
{
	b->n = 0;
}

/* gpuvm's own files: the fake keeps only the state file, never a link. */
ssize_t root_read_own(const char *path, char *buf, size_t size)
{
	return root_read(path, buf, size);
}

/* /proc/bus/pci/devices as the kernel writes it: one line a function, no domain. */
int root_read_chunks(const char *path, char *buf, size_t size,
		     ssize_t (*cb)(const char *chunk, size_t len, bool eof, void *data), void *data)
{
	int i, f, err = read_faulted(path);
	unsigned dom, bus, dev, fn;
	size_t n = 0;
	ssize_t used;

	if (err)
		return err;
	if (strcmp(path, "proc/bus/pci/devices") != 0 || k.no_proc_pci)
		return -ENOENT;
	for (i = 0; i < k.n; i++) {
		const struct fdev *d = &k.dev[i];
		int w;

		if (d->removed || sscanf(d->name, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
			continue;
		w = snprintf(buf + n, size - n, "%02x%02x\t%04x%04x\t%x", bus, dev << 3 | fn,
			     d->vendor, d->device, 16 + i);
		for (f = 0; f < 14 && w > 0 && n + (size_t)w < size; f++)
			w += snprintf(buf + n + (size_t)w, size - n - (size_t)w, "\t%16x", 0);
		if (w > 0 && n + (size_t)w < size)
			w += snprintf(buf + n + (size_t)w, size - n - (size_t)w, "\t%s\n", d->driver);
		if (w < 0 || n + (size_t)w >= size)
			return -EFBIG;
		n += (size_t)w;
	}
	used = cb(buf, n, true, data);
	return used < 0 ? (int)used : 0;
}

int root_link_name(const char *path, char *buf, size_t size)
{
	const char *attr;
	struct fdev *d = dev_attr(path, &attr);
	int err = read_faulted(path);

	if (err)
		return err;
	if (!d)
		return -ENOENT;
	if (strcmp(attr, "iommu_group") == 0 && d->group >= 0) {
		snprintf(buf, size, "%d", d->group);
		return 0;
	}
	if (strcmp(attr, "driver") == 0 && d->driver[0]) {
		snprintf(buf, size, "%s", d->driver);
		return 0;
	}
	return -ENOENT;
}

/* The fake kernel has no block devices and no ttys: hostdev.c finds nothing. */
int root_link_target(const char *path, char *buf, size_t size)
{
	struct fproc *p;
	int pid, end = 0, err = read_faulted(path);

	if (err)
		return err;
	if (sscanf(path, "proc/%d/fd/3%n", &pid, &end) == 1 && path[end] == '\0' &&
	    (p = find_proc(pid))) {
		snprintf(buf, size, "%s", p->path);
		return 0;
	}
	return -ENOENT;
}

static int count_one(const char *name, void *data)
{
	(void)name;
	(*(unsigned long *)data)++;
	return 0;
}

/* As sysfs counts a directory's links: 2 and one a subdirectory (the groups are). */
int root_dir_links(const char *path, unsigned long *links)
{
	char what[96];
	unsigned long n = 0;
	int r;

	/* "r:PATH#links" faults this call alone, not the listing */
	snprintf(what, sizeof(what), "%s#links", path);
	r = read_faulted(what);
	if (r)
		return r;
	r = strcmp(path, "sys/kernel/iommu_groups") == 0 ? root_list(path, count_one, &n) : -ENOSYS;
	if (r < 0)
		return r;
	*links = n + 2;
	return 0;
}

int root_stat_rdev(const char *path, unsigned *maj, unsigned *min)
{
	struct fproc *p;
	int pid, end = 0, err = read_faulted(path);

	if (err)
		return err;
	if (sscanf(path, "proc/%d/fd/3%n", &pid, &end) != 1 || path[end] != '\0' ||
	    !(p = find_proc(pid)) || (!p->major && !p->minor))
		return -ENOENT;
	*maj = p->major;
	*min = p->minor;
	return 0;
}

int root_list(const char *dir, int (*cb)(const char *name, void *data), void *data)
{
	const char *attr = "";
	struct fdev *d = dev_attr(dir, &attr);
	int i, r, grp, end = 0, err = read_faulted(dir);

	if (err)
		return err;
	if (strcmp(dir, "run/gpuvm/pinned") == 0) {
		for (i = 0; i < 8; i++)
			if (k.pinned[i] && (r = cb(k.pinned_name[i], data)))
				return r;
		return 0;
	}
	if (strcmp(dir, "sys/bus/pci/devices") == 0) {
		for (i = 0; i < k.n; i++)
			if (!k.dev[i].removed && (r = cb(k.dev[i].name, data)))
				return r;
		return 0;
	}
	if (strcmp(dir, "proc/bus/pci") == 0) {
		/* "devices", and each bus's directory as x86 names it: "BB" in domain 0 */
		char bus[16];
		unsigned dom, b, dev, fn;
		int j;

		if (k.no_proc_pci)
			return -ENOENT;
		r = cb("devices", data);
		for (i = 0; i < k.n && !r; i++) {
			if (k.dev[i].removed ||
			    sscanf(k.dev[i].name, "%x:%x:%x.%x", &dom, &b, &dev, &fn) != 4)
				continue;
			for (j = 0; j < i; j++) /* once a bus */
				if (!k.dev[j].removed && strncmp(k.dev[j].name, k.dev[i].name, 8) == 0)
					break;
			if (j < i)
				continue;
			if (dom)
				snprintf(bus, sizeof(bus), "%04x:%02x", dom, b);
			else
				snprintf(bus, sizeof(bus), "%02x", b);
			r = cb(bus, data);
		}
		return r;
	}
	if (strcmp(dir, "proc") == 0) {
		char pid[16];

		r = 0;
		for (i = 0; i < k.n_procs && !r; i++) {
			if (k.procs[i].gone)
				continue;
			snprintf(pid, sizeof(pid), "%d", k.procs[i].pid);
			r = cb(pid, data);
		}
		k.scans++;
		if (k.on_scan)
			k.on_scan(k.scans);
		return r;
	}
	{
		int pid;

		if (sscanf(dir, "proc/%d/fd%n", &pid, &end) == 1 && dir[end] == '\0')
			return find_proc(pid) ? cb("3", data) : -ENOENT;
	}
	if (d && strcmp(attr, "drm") == 0)
		return d->drm[0] ? cb(d->drm, data) : -ENOENT;
	if (d && strcmp(attr, "graphics") == 0) {
		char name[16];

		if (d->fb < 0)
			return -ENOENT;
		snprintf(name, sizeof(name), "fb%d", d->fb);
		return cb(name, data);
	}
	if (d && strcmp(attr, "vfio-dev") == 0 && d->vfio >= 0 && k.vfio_dev > 0) {
		char name[16];

		snprintf(name, sizeof(name), "vfio%d", d->vfio);
		return cb(name, data);
	}
	if (strcmp(dir, "sys/class/iommu") == 0)
		return k.iommu ? cb(k.smmu ? "smmu3.0x0000000009050000" : "dmar0", data) : -ENOENT;
	if (sscanf(dir, "sys/kernel/iommu_groups/%d/devices%n", &grp, &end) == 1 && dir[end] == '\0') {
		bool any = false;

		for (i = 0; i < k.n; i++) {
			if (k.dev[i].group != grp)
				continue;
			any = true;
			if ((r = cb(k.dev[i].name, data)))
				return r;
		}
		return any ? 0 : -ENOENT;
	}
	if (strcmp(dir, "sys/kernel/iommu_groups") == 0) {
		for (i = 0; i < k.n; i++) {
			char g[16];
			int j;

			for (j = 0; j < i && k.dev[j].group != k.dev[i].group; j++)
				;
			if (k.dev[i].group < 0 || j < i)
				continue; /* a directory a group */
			snprintf(g, sizeof(g), "%d", k.dev[i].group);
			if ((r = cb(g, data)))
				return r;
		}
		return 0;
	}
	return -ENOENT;
}

bool root_exists(const char *path)
{
	const char *attr = "";
	struct fdev *d = dev_attr(path, &attr);
	char drv[64];
	int i, n, end = 0;

	if (whole_file(NULL, path))
		return true;
	/* A group's vfio device is there while a member is on a vfio driver. */
	if (sscanf(path, "sys/class/vfio/%d%n", &n, &end) == 1 && path[end] == '\0') {
		for (i = 0; i < k.n && !k.no_group_dev; i++)
			if (k.dev[i].group == n && k.dev[i].vfio >= 0)
				return true;
		return false;
	}
	/* The vfio device's dev attribute: its cdev (CONFIG_VFIO_DEVICE_CDEV). */
	if (d && sscanf(attr, "vfio-dev/vfio%d/dev%n", &n, &end) == 1 && attr[end] == '\0')
		return k.vfio_dev == 2 && d->vfio == n;

	{
		char addr[32];
		struct fdev *nd;

		if (nv_file(path, "unbindLock", addr))
			return (nd = find(addr)) && nd->unbind_lock >= 0;
	}
	/* No VFs in the fake; a registered driver has remove_id, and its directory. */
	if (sscanf(path, "sys/bus/pci/drivers/%63[^/]/remove_id", drv) == 1)
		return registered(drv);
	if (sscanf(path, "sys/bus/pci/drivers/%63[^/]", drv) == 1 &&
	    strlen(path) == strlen("sys/bus/pci/drivers/") + strlen(drv))
		return registered(drv);
	return false;
}

/* The latch of the real rootio.c: no unit test reaches a read-only command. */
void root_deny_writes(void)
{
}

int root_write(const char *path, const char *value, unsigned timeout_ms)
{
	const char *attr;
	struct fdev *d = dev_attr(path, &attr);
	char v[64];
	int err;

	(void)timeout_ms;
	k.writes++;
	err = faulted(path);
	if (err)
		return err;
	snprintf(v, sizeof(v), "%s", value);
	v[strcspn(v, "\n")] = '\0';
	{
		char addr[32];
		struct fdev *n;

		/* As nvidia does at close: 1 taken when no client is left, 0 given back. */
		if (nv_file(path, "unbindLock", addr)) {
			if (!(n = find(addr)) || n->unbind_lock < 0)
				return -ENOENT;
			if (strcmp(v, "1") == 0 && n->nv_clients == 0)
				n->unbind_lock = 1;
			else if (strcmp(v, "0") == 0)
				n->unbind_lock = 0;
			return 0;
		}
	}
	if (d && strcmp(attr, "driver_override") == 0) {
		snprintf(d->override, sizeof(d->override), "%s", v);
		return 0;
	}
	if (strncmp(path, "sys/bus/pci/drivers/", 20) == 0) {
		char drv[64];
		const char *slash = strchr(path + 20, '/');
		struct fdev *t = find(v);

		if (!slash)
			return -ENOENT;
		snprintf(drv, sizeof(drv), "%.*s", (int)(slash - path - 20), path + 20);
		if (!registered(drv))
			return -ENOENT;
		if (strcmp(slash, "/remove_id") == 0) {
			unsigned ven, dev;
			int i;

			if (sscanf(value, "%x %x", &ven, &dev) != 2)
				return -EINVAL;
			for (i = 0; i < k.n_dyn; i++)
				if (strcmp(k.dyn_drv[i], drv) == 0 && k.dyn_vendor[i] == ven &&
				    k.dyn_device[i] == dev) {
					k.dyn_drv[i][0] = '\0';
					return 0;
				}
			return -ENODEV;
		}
		if (strcmp(slash, "/unbind") != 0)
			return -ENOENT;
		if (!t || strcmp(t->driver, drv) != 0)
			return -ENODEV;
		set_driver(t, "");
		return 0;
	}
	if (strcmp(path, "sys/bus/pci/drivers_probe") == 0) {
		struct fdev *t = find(v);
		int i;

		if (!t)
			return -ENODEV;
		for (i = 0; i < k.n_drivers && !t->driver[0]; i++)
			try_attach(t, k.drivers[i]);
		return 0; /* success whether or not anything bound, as the kernel does */
	}
	return -ENOENT;
}

/* As the real one: the writes in order, up to the first that fails. */
int root_write_seq(const struct root_wr *w, size_t n, unsigned timeout_ms, size_t *failed)
{
	size_t i;
	int r;

	for (i = 0; i < n; i++) {
		r = root_write(w[i].path, w[i].value, timeout_ms);
		if (r < 0) {
			*failed = i;
			return r;
		}
	}
	*failed = 0;
	return 0;
}

int root_write_file_with(const char *dir, const char *name, void (*fill)(FILE *f, void *data),
			 void *data)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int r;

	if (!f)
		return -ENOMEM;
	fill(f, data);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	r = root_write_file(dir, name, buf, len);
	free(buf);
	return r;
}

/* Where the fake keeps a pending record (named so for its faults), or NULL. */
static char **record_of(const char *name)
{
	if (strcmp(name, "pending") == 0)
		return &k.record[0];
	return strcmp(name, "root-pending") == 0 ? &k.record[1] : NULL;
}

const char *fk_record(const char *name)
{
	char **r = record_of(name);

	return r ? *r : NULL;
}

static int state_or_record_write(const char *name, const char *data, size_t len);

/* The slot of a pinned record by its name; with add, a free one for a new name; -1: none. */
static int pinned_slot(const char *name, bool add)
{
	int i;

	for (i = 0; i < 8; i++)
		if (k.pinned[i] && strcmp(k.pinned_name[i], name) == 0)
			return i;
	for (i = 0; add && i < 8; i++)
		if (!k.pinned[i])
			return i;
	return -1;
}

const char *fk_pinned(const char *name)
{
	int i = pinned_slot(name, false);

	return i < 0 ? NULL : k.pinned[i];
}

/* A record under /run/gpuvm/pinned (pinned.c), each write one a fault can fail ("pinned"). */
static int pinned_write(const char *name, const char *data, size_t len)
{
	int err = faulted("pinned"), i = pinned_slot(name, true);

	if (err)
		return err;
	if (i < 0)
		return -ENOSPC;
	free(k.pinned[i]);
	snprintf(k.pinned_name[i], sizeof(k.pinned_name[i]), "%s", name);
	k.pinned[i] = strndup(data, len);
	return k.pinned[i] ? 0 : -ENOMEM;
}

int root_write_file(const char *dir, const char *name, const char *data, size_t len)
{
	if (strcmp(dir, "run/gpuvm/pinned") == 0)
		return pinned_write(name, data, len);
	return state_or_record_write(name, data, len);
}

static int state_or_record_write(const char *name, const char *data, size_t len)
{
	bool metrics = strcmp(name, "gpuvm.prom") == 0;
	char **file = record_of(name);
	int err = faulted(file ? name : metrics ? "metrics" : "state");

	if (!file)
		file = metrics ? &k.metrics : &k.state;
	if (err)
		return err;
	free(*file);
	*file = strndup(data, len);
	return *file ? 0 : -ENOMEM;
}

/*
 * Whole files: those fk_file gave, the state file and the pending records; each read of
 * one is a read a fault can fail ("r:PATH"). Beneath another top (--sysroot's), the files
 * fk_file gave as "TOP/PATH".
 */
static const char *whole_file(const char *top, const char *path)
{
	char full[160];
	int i;

	while (*path == '/')
		path++;
	if (top) {
		snprintf(full, sizeof(full), "%s/%s", top, path);
		path = full;
	} else if (strcmp(path, "run/gpuvm/state.json") == 0) {
		return k.state;
	} else if (strncmp(path, "run/gpuvm/", 10) == 0 && fk_record(path + 10)) {
		return fk_record(path + 10);
	}
	for (i = 0; i < k.n_files; i++)
		if (strcmp(path, k.file_path[i]) == 0)
			return k.file_text[i];
	return NULL;
}

/* The name a read beneath top is faulted by: "TOP/PATH", or PATH beneath the root. */
static const char *top_path(const char *top, const char *path, char *buf, size_t size)
{
	if (!top)
		return path;
	snprintf(buf, size, "%s/%s", top, path);
	return buf;
}

const char *fk_fault_path(void)
{
	return k.fault_path;
}

int root_read_file_at(const char *top, const char *path, size_t max, unsigned flags, char **buf,
		      size_t *len)
{
	const char *text = whole_file(top, path);
	char full[160];
	int err = read_faulted(top_path(top, path, full, sizeof(full)));

	(void)flags;
	*buf = NULL;
	*len = 0;
	if (err)
		return err;
	if (!text)
		return -ENOENT;
	if (strlen(text) > max)
		return -EFBIG;
	*buf = strdup(text);
	if (!*buf)
		return -ENOMEM;
	*len = strlen(text);
	return 0;
}

int root_read_file(const char *path, size_t max, unsigned flags, char **buf, size_t *len)
{
	return root_read_file_at(NULL, path, max, flags, buf, len);
}

/* The descriptor of a whole file: its text in a memfd. */
int root_open_file_at(const char *top, const char *path, unsigned flags)
{
	const char *text = whole_file(top, path);
	char full[160];
	int err = read_faulted(top_path(top, path, full, sizeof(full))), fd;

	(void)flags;
	if (err)
		return err;
	if (!text)
		return -ENOENT;
	fd = memfd_create("fake", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text) || lseek(fd, 0, SEEK_SET) < 0) {
		close(fd);
		return -EIO;
	}
	return fd;
}

int root_open_file(const char *path, unsigned flags)
{
	return root_open_file_at(NULL, path, flags);
}

/* A top has the directories of the files fk_file gave beneath it. */
int root_dir_at(const char *top, const char *dir)
{
	char pre[160];
	int i;

	snprintf(pre, sizeof(pre), "%s/%s%s", top ? top : "", dir ? dir : "", dir ? "/" : "");
	for (i = 0; i < k.n_files; i++)
		if (strncmp(k.file_path[i], top ? pre : pre + 1, strlen(top ? pre : pre + 1)) == 0)
			return 0;
	return -ENOENT;
}

bool root_is(const char *dir)
{
	(void)dir;
	return false;
}

/* No directory to write a file of one's own in (config set is the bats suites'). */
int root_open_dir(const char *dir, bool create, const char **why)
{
	(void)dir;
	(void)create;
	*why = NULL;
	return -EROFS;
}

int root_remove_file(const char *dir, const char *name)
{
	char **r = record_of(name);
	int i;

	if (strcmp(dir, "run/gpuvm/pinned") == 0) {
		int err = faulted("pinned");

		if (err)
			return err;
		i = pinned_slot(name, false);
		if (i >= 0) {
			free(k.pinned[i]);
			k.pinned[i] = NULL;
		}
		return 0;
	}
	if (r) {
		free(*r);
		*r = NULL;
	}
	return 0;
}

/* dump's recorder: the fake kernel records nothing (dump runs on the real one). */
void root_record(void (*fn)(enum root_rec kind, const char *path, void *data), void *data)
{
	(void)fn;
	(void)data;
}

/* kmod.h */

int mod_init(const char *dirname)
{
	(void)dirname;
	return 0;
}

void mod_fini(void)
{
}

int mod_load(const char *name, int *loaded, char *msg, size_t size)
{
	char what[80];
	int i, err;

	*loaded = 0;
	snprintf(what, sizeof(what), "mod:%s", name);
	err = faulted(what);
	if (err) {
		snprintf(msg, size, "%s (/lib/modules/6.1.0-fake/%s.ko): %s", name, name,
			 strerror(-err));
		return err;
	}
	for (i = 0; i < k.n_mods; i++) {
		if (strcmp(k.mod_name[i], name) != 0)
			continue;
		if (!registered(k.mod_drv[i])) {
			fk_load_driver(k.mod_drv[i]);
			k.loads++;
			*loaded = 1;
		}
		return 0;
	}
	if (registered(name))
		return 0; /* built in */
	snprintf(msg, size, "%s: not found in the module directory /lib/modules/6.1.0-fake", name);
	return -ENOENT;
}

int mod_vfio_variant(const char *modalias, char *name, size_t size)
{
	int i;

	for (i = 0; i < k.n_var; i++)
		if (strncmp(modalias, k.var_prefix[i], strlen(k.var_prefix[i])) == 0) {
			snprintf(name, size, "%s", k.var_mod[i]);
			return 0;
		}
	return -ENOENT;
}

enum mod_state mod_state(const char *name, bool live)
{
	int i;

	(void)live;
	if (registered(name))
		return MOD_LOADED;
	for (i = 0; i < k.n_mods; i++)
		if (strcmp(k.mod_name[i], name) == 0)
			return MOD_AVAILABLE;
	return MOD_MISSING;
}

const char *mod_dir(void)
{
	return "/lib/modules/6.1.0-fake";
}
