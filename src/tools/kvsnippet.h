/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_KVSNIPPET_H
#define GPUVM_KVSNIPPET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What the cluster is told: KubeVirt's permittedHostDevices, Node Feature Discovery. */

struct kv_device {
	size_t count; /* functions of this ID */
	uint16_t vendor, device;
	/*
	 * A vGPU profile of SR-IOV VFs, NVIDIA's vendor-specific VFIO (vGPU 17 and later on
	 * Ada, Hopper and newer on kernel 6.8 and later): a PCI device on the nvidia driver.
	 * KubeVirt's own PCI plugin advertises such VFs from 1.9 on (vf_external false); before,
	 * only an external plugin could (vf_external true).
	 */
	bool vgpu, vf_external;
	char resource[160]; /* nvidia.com/GA100_A100_SXM4_40GB */
};

/*
 * KubeVirt's resourceName, byte for byte as NVIDIA's sandbox device plugin advertises it:
 * "nvidia.com/" and the pci.ids name trimmed, upper-cased, '/' and '.' made '_', each run
 * of blanks one '_', then all but [A-Za-z0-9_] deleted; without a name, or when nothing is
 * left of it, the device ID in lower case ("nvidia.com/2335"). Other vendors have no such
 * plugin: "devices.kubevirt.io/VVVV_DDDD".
 */
void kv_resource_name(const char *name, uint16_t vendor, uint16_t device, char *out, size_t size);

/* A mediated device type the vGPU Manager shows (mdev_supported_types/TYPE/name). */
struct kv_mdev {
	char name[96];	    /* the name file's text, blanks around it trimmed: the selector */
	char resource[128]; /* nvidia.com/GRID_T4-1Q */
};

/*
 * The sandbox device plugin's resourceName for a vGPU type (readVgpuIDFromFile): the name
 * file's text with newlines trimmed at both ends, each run of blanks one '_', after
 * "nvidia.com/". Pure.
 */
void kv_mdev_resource(const char *raw, char *out, size_t size);

/*
 * One line of a VF's nvidia/creatable_vgpu_types, "1428 : NVIDIA H200X-141C": the profile's
 * name, blanks around it trimmed, into name (the plugin's ^\s*([0-9]+)\s*:\s*(.+?)\s*$).
 * -EINVAL for a line of another form (the header), -ENAMETOOLONG past size. Pure.
 */
int kv_vgpu_type_line(const char *line, size_t len, char *name, size_t size);

/*
 * A KubeVirt version, "1.9", "v1.9" or "1.9.0", into major and minor; -EINVAL otherwise.
 * Pure.
 */
int kv_version_parse(const char *s, int *major, int *minor);

/* The permittedHostDevices snippet, YAML to merge into the KubeVirt CR's spec.configuration. */
void kv_yaml(FILE *f, const struct kv_device *d, size_t n, bool external);
void kv_json(FILE *f, const struct kv_device *d, size_t n, bool external);
/*
 * vm-vgpu: the mediatedDevices entries, YAML after kv_yaml()'s, or JSON with the
 * pciHostDevices; none: an empty list, and with none_visible a comment (YAML) that says no
 * vGPU type is visible yet.
 */
void kv_yaml_mdev(FILE *f, const struct kv_mdev *m, size_t n, bool external, bool none_visible);
void kv_json_vgpu(FILE *f, const struct kv_device *d, size_t n, const struct kv_mdev *m, size_t n_m,
		  bool external);

#endif
