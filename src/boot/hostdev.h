/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_HOSTDEV_H
#define GPUVM_HOSTDEV_H

#include "inventory.h"

/*
 * Mark the functions the running host needs (pci_dev.host_use): the PCI device behind the
 * root file system's disk (through device-mapper and md slaves) and behind each console=
 * serial port of cmdline. Best effort: what cannot be read marks nothing, and the class
 * rule (pci_class_host_needs) still holds.
 */
void hostdev_mark(struct inventory *inv, const char *cmdline);

#endif
