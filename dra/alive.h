/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_DRA_ALIVE_H
#define GPUVM_DRA_ALIVE_H

/*
 * alive_probe: connects to the unix socket PATH as an HTTP/2 client would (the connection
 * preface and an empty SETTINGS frame) and waits up to TIMEOUT_MS for the server's SETTINGS
 * frame. 0: the server's loop answered; -errno otherwise (-ETIMEDOUT: it did not answer,
 * -EPROTO: what came back was not a SETTINGS frame). The liveness probe's check.
 */
int alive_probe(const char *path, int timeout_ms);

#endif
