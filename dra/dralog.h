/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_DRA_DRALOG_H
#define GPUVM_DRA_DRALOG_H

/*
 * gpuvm-dra's log: one line on stderr a message, "gpuvm-dra: ", no cap (a daemon's log is
 * the container's, which the kubelet rotates; gpuvm's own log caps a boot's messages).
 */
void dra_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
