/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_KVSNIPPET_H
#define GPUVM_KVSNIPPET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What the cluster is told: KubeVirt's permittedHostDevices, Node Feature Discovery. */

struct kv_device {
	uint16_t vendor, device;
	char resource[96];	/* nvidia.com/GA100_A100_SXM4_40GB */
	size_t count;		/* functions of this ID */
};

/*
 * The device's name in pci.ids text ("GA100 [A100 SXM4 40GB]"), or -ENOENT. Pure.
 */
int pciids_name(const char *pciids, uint16_t vendor, uint16_t device, char *out, size_t size);

/*
 * KubeVirt's resourceName, as NVIDIA's sandbox device plugin names it: the pci.ids name
 * upper-cased, every run of other characters turned into one '_', after "nvidia.com/"
 * (for NVIDIA; "VVVV.com/" is not guessed for others: "devices.kubevirt.io/VVVV_DDDD").
 */
void kv_resource_name(const char *name, uint16_t vendor, uint16_t device, char *out, size_t size);

/* The permittedHostDevices snippet, YAML to merge into the KubeVirt CR's spec.configuration. */
void kv_yaml(FILE *f, const struct kv_device *d, size_t n, bool external);
void kv_json(FILE *f, const struct kv_device *d, size_t n, bool external);

#endif
