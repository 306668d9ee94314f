/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_DRA_CDI_H
#define GPUVM_DRA_CDI_H

#include <stdbool.h>
#include <stddef.h>

struct json_object;
struct vfio_gpu;

#define DRA_DRIVER "vfio.gpuvm.dev"
/* The CDI kind of the specs, vendor/class: IDs are "vfio.gpuvm.dev/gpu=NAME". */
#define CDI_KIND DRA_DRIVER "/gpu"
/*
 * Debian 12's podman (4.3.1) reads specs up to 0.5.0, the first with hostPath: newer
 * versions are "unresolvable CDI devices" there.
 */
#define CDI_VERSION "0.5.0"
/* Where a container finds the device metadata (KEP-5304). */
#define METADATA_CONTAINER_DIR "/var/run/kubernetes.io/dra-device-attributes"
#define METADATA_FILE DRA_DRIVER "-metadata.json"

/*
 * Pure: whether s is a DNS label (a request's or a device's name: [a-z0-9-], at most 63,
 * alphanumeric at both ends), or a UID as the API makes them ([0-9a-zA-Z-], at most 63):
 * what may become a file name.
 */
bool dns_label(const char *s);
bool uid_ok(const char *s);
/* Pure: a DNS subdomain (a node's name): DNS labels joined by dots, at most 253. */
bool dns_subdomain(const char *s);

/*
 * The device's attributes (resource.k8s.io/v1 DeviceAttribute map): the standard
 * resource.kubernetes.io/pciBusID and pcieRoot, and vfio.gpuvm.dev/'s (at most 11, of the
 * 32 attributes and capacities a device may have), pinnedBy and mode from gpuvm's pinned
 * record among them. NULL: no memory.
 */
struct json_object *gpu_attributes(const struct vfio_gpu *g, bool iommu_dev);

/* o as text: compact (one line) or pretty, '/' never escaped. The caller frees. */
char *json_text(struct json_object *o, bool pretty);

/*
 * dir/name replaced by data atomically (a temporary file beside it, fsync, rename), with
 * its folders (0755); nothing written where the file already holds data. *changed says
 * whether it was written. -errno.
 */
int file_put(const char *dir, const char *name, const char *data, bool *changed);

#endif
