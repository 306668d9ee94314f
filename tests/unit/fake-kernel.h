/* SPDX-License-Identifier: MIT */
/*
 * An in-memory kernel for the unit tests, linked in place of src/boot/rootio.c and src/boot/kmod.c.
 * It behaves as the PCI core does where gpuvm depends on it: driver_override keeps every
 * other driver off; unbind removes the driver link; a write to drivers_probe succeeds
 * even when nothing binds; vfio-pci's probe fails for a device without an IOMMU group;
 * loading a module registers its driver, which then binds the devices that match it.
 */
#ifndef GPUVM_FAKE_KERNEL_H
#define GPUVM_FAKE_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

void fk_reset(bool iommu);
/*
 * The vfio nodes of a device on a vfio driver, as a kernel version shows them. vfio_dev:
 * 0 no vfio-dev directory (5.10), 1 vfio-dev/vfioN without a char device (6.1 on, the
 * default), 2 with one: a dev attribute, /dev/vfio/devices/vfioN (CONFIG_VFIO_DEVICE_CDEV).
 * group_dev: the group's char device, sys/class/vfio/GROUP (CONFIG_VFIO_GROUP; the default).
 */
void fk_vfio(int vfio_dev, bool group_dev);
/* No /proc/bus/pci/devices: the scan reads every function's uevent. */
void fk_no_proc_pci(void);
/*
 * The IOMMU is an ARM SMMUv3 (unit smmu3.0x…) described by firmware: a device added with
 * group -1 gets its IOMMU group when a driver first probes it, as the kernel does there.
 */
void fk_smmu(void);
/* native: the driver that claims the device by its ID table when no override says otherwise. */
void fk_add(const char *addr, unsigned vendor, unsigned device, unsigned class, int group,
	    const char *driver, const char *native);
void fk_set_override(const char *addr, const char *drv);
void fk_set_sriov(const char *addr, int totalvfs);
/* A driver that is there (loaded or built in). */
void fk_driver_loaded(const char *drv);
/* A module that can be loaded: it registers driver drv. */
void fk_module(const char *name, const char *drv);
/* A dynamic ID (vfio-pci.ids=, new_id): drv claims vendor:device without an override. */
void fk_dynid(const char *drv, unsigned vendor, unsigned device);
void fk_variant(const char *modalias_prefix, const char *module);
/* Loading a module now registers its driver and binds what it matches. */
void fk_load_driver(const char *drv);

/*
 * Fault injection: the nth (1-based; 0 = every) write whose path contains what fails
 * with err (-ETIMEDOUT stands for a write that hangs past its bound). what may also
 * be "mod:NAME" for a module load, "state" for the state file (and every other file gpuvm
 * writes whole), "metrics" for the metrics file, or "r:PATH" for a read.
 */
void fk_fault(const char *what, int nth, int err);
/* How many injected faults fired since fk_reset (what "" matches every write, "r:" every read). */
int fk_faults_fired(void);

const char *fk_driver(const char *addr); /* "" when none */
const char *fk_override(const char *addr);
const char *fk_state(void);   /* the last state file, or NULL */
const char *fk_metrics(void); /* the last metrics file (gpuvm.prom), or NULL */
int fk_writes(void);	      /* sysfs writes so far */
int fk_modules_loaded(void);
const char *fk_kmsg_probe_error(void); /* what the kernel would have logged */
/*
 * A whole file beneath the root (the host config, pci.ids, a boot loader's file), served
 * by root_read_file and root_open_file; at most eight a test. "/TOP/PATH": beneath another
 * top (root_read_file_at(TOP, PATH), --sysroot's).
 */
void fk_file(const char *path, const char *text);
/* The path of the last fault that fired. */
const char *fk_fault_path(void);
/* A pending record ("pending", "root-pending"): the last written, or NULL (removed). */
const char *fk_record(const char *name);
/* A pinned record (/run/gpuvm/pinned/NAME, pinned.c): the last written, or NULL (none). */
const char *fk_pinned(const char *name);

/*
 * apply --live: device nodes and the processes that hold them. A DRM node (drm/NAME, major
 * 226), the nvidia driver's minor (/proc/driver/nvidia/gpus/ADDR/information, major 195)
 * and, with unbind_lock, its unbindLock with clients that refuse it; a process with one
 * descriptor on the node at path (major:minor; 0:0: a link that cannot be followed, matched
 * by its text).
 */
void fk_drm(const char *addr, const char *name, unsigned minor);
/* Its framebuffer graphics/fbMINOR (major 29, /dev/fbMINOR). */
void fk_fb(const char *addr, int minor);
void fk_nvidia(const char *addr, int minor, bool unbind_lock);
void fk_nvidia_clients(const char *addr, int clients);
bool fk_unbind_locked(const char *addr);
void fk_numvfs(const char *addr, int numvfs);
void fk_proc(int pid, const char *comm, const char *path, unsigned major, unsigned minor);
void fk_proc_exit(int pid);
/* Called after each listing of /proc with how many there were (the wait's hook). */
void fk_on_proc_scan(void (*fn)(int scans));
/* The device is hot-unplugged: gone from sysfs. */
void fk_remove(const char *addr);
int fk_proc_scans(void);

#endif
