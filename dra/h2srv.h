/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_DRA_H2SRV_H
#define GPUVM_DRA_H2SRV_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A gRPC server of unary calls over unix sockets: HTTP/2 without TLS, the client speaking
 * first (prior knowledge, as grpc-go and grpcio do on a unix socket), one thread, poll(2).
 */

/* The most a request's body (one framed message) may hold; more is RESOURCE_EXHAUSTED. */
#define H2SRV_MSG_MAX (4u << 20)
#define H2SRV_CONNS_MAX 32

/*
 * A method: its path ("/package.Service/Method") and its handler, which gets the request's
 * message and answers with a gRPC status: GRPC_OK and *resp (malloc'd, *resp_len bytes, the
 * server frees it), or another status with its message in err.
 */
struct h2_method {
	const char *path;
	int (*fn)(const uint8_t *req, size_t len, uint8_t **resp, size_t *resp_len, char *err,
		  size_t errsize, void *data);
};

struct h2_listener {
	int fd;
	const char *name; /* for the log */
	const struct h2_method *methods;
	size_t n_methods;
	void *data;
};

/* A unix stream socket listening at path (a stale socket there replaced), mode 0600. -errno. */
int h2srv_listen(const char *path);

/*
 * Serve the listeners until *stop is set (a signal's handler). tick(tick_data) runs every
 * tick_ms (0: never), between requests. Returns 0, or -errno when poll(2) itself fails.
 */
int h2srv_run(struct h2_listener *l, size_t n, volatile sig_atomic_t *stop, void (*tick)(void *),
	      void *tick_data, int tick_ms);

#endif
