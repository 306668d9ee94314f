// SPDX-License-Identifier: MIT
/*
 * gpuvm-dra --alive: the liveness probe's check. A process that holds its socket but whose
 * loop hangs still accepts connections (the kernel queues them), so connecting proves
 * nothing: the probe speaks first, as the kubelet's client does, and waits for the server's
 * SETTINGS frame, which only the loop sends.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "alive.h"

#define PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define FRAME_HDR 9
#define FRAME_SETTINGS 4

static int probe_fd(int fd, const char *path, int timeout_ms)
{
	/* The preface, then SETTINGS: length 0, type 4, no flags, stream 0. */
	static const char hello[] = PREFACE "\0\0\0\4\0\0\0\0\0";
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	unsigned char hdr[FRAME_HDR];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t got = 0;
	ssize_t n;
	int r;

	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	memcpy(a.sun_path, path, strlen(path) + 1);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		return -errno;
	if (send(fd, hello, sizeof(hello) - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof(hello) - 1))
		return -EIO;
	while (got < sizeof(hdr)) {
		r = poll(&p, 1, timeout_ms);
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		n = read(fd, hdr + got, sizeof(hdr) - got);
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET;
		got += (size_t)n;
	}
	return hdr[3] == FRAME_SETTINGS && !(hdr[5] | hdr[6] | hdr[7] | hdr[8]) ? 0 : -EPROTO;
}

int alive_probe(const char *path, int timeout_ms)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int r;

	if (fd < 0)
		return -errno;
	r = probe_fd(fd, path, timeout_ms);
	close(fd);
	return r;
}
