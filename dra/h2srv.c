// SPDX-License-Identifier: MIT
/*
 * The gRPC server of gpuvm-dra: HTTP/2 (libnghttp2) over unix sockets, unary calls only.
 * A request is read whole (bounded by H2SRV_MSG_MAX), checked by grpc_frame_parse(), handed
 * to its method, and answered with HEADERS, one DATA frame of the framed reply and the
 * trailers (grpc-status, grpc-message); an error is a trailers-only answer. A connection
 * that breaks HTTP/2 is closed; the others, and the listeners, go on.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>

#include "grpcframe.h"
#include "h2srv.h"
#include "util.h"
#include "dralog.h"

struct stream {
	int32_t id;
	char path[160];
	bool grpc;    /* content-type application/grpc[+proto] */
	bool too_big; /* the body passed the bound: answered RESOURCE_EXHAUSTED */
	uint8_t *body;
	size_t len, cap;
	uint8_t *out; /* the framed reply */
	size_t out_len, out_off;
	int status;
	char msg[512];
};

struct conn {
	int fd;
	nghttp2_session *s;
	struct h2_listener *l;
};

#define NV(n, v)                                                                                   \
	{                                                                                          \
		(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE     \
	}

int h2srv_listen(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	memcpy(a.sun_path, path, strlen(path) + 1);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return -EEXIST;
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || chmod(path, 0600) < 0 ||
	    listen(fd, 16) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

static void stream_free(struct stream *st)
{
	if (!st)
		return;
	free(st->body);
	free(st->out);
	free(st);
}

static ssize_t send_cb(nghttp2_session *s, const uint8_t *data, size_t len, int flags, void *ud)
{
	(void)s, (void)flags, (void)data, (void)len, (void)ud;
	return NGHTTP2_ERR_CALLBACK_FAILURE; /* mem_send is used, never this */
}

static int begin_headers_cb(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
	struct stream *st;

	(void)ud;
	if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	st = calloc(1, sizeof(*st));
	if (!st)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	st->id = f->hd.stream_id;
	nghttp2_session_set_stream_user_data(s, f->hd.stream_id, st);
	return 0;
}

static int header_cb(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
		     const uint8_t *value, size_t vlen, uint8_t flags, void *ud)
{
	struct stream *st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);

	(void)flags, (void)ud;
	if (!st || f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	if (nlen == 5 && !memcmp(name, ":path", 5)) {
		if (vlen >= sizeof(st->path))
			vlen = sizeof(st->path) - 1; /* no method is that long: unknown */
		memcpy(st->path, value, vlen);
		st->path[vlen] = '\0';
	} else if (nlen == 12 && !memcmp(name, "content-type", 12)) {
		st->grpc = vlen >= 16 && memcmp(value, "application/grpc", 16) == 0 &&
			(vlen == 16 || value[16] == '+' || value[16] == ';');
	}
	return 0;
}

static int data_cb(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data, size_t len,
		   void *ud)
{
	struct stream *st = nghttp2_session_get_stream_user_data(s, id);
	uint8_t *b;
	size_t cap;

	(void)flags, (void)ud;
	if (!st || st->too_big)
		return 0;
	if (len > H2SRV_MSG_MAX + GRPC_FRAME_HDR - st->len) {
		st->too_big = true;
		return 0;
	}
	if (st->len + len > st->cap) {
		cap = st->cap ? st->cap : 4096;
		while (cap < st->len + len)
			cap *= 2;
		b = realloc(st->body, cap);
		if (!b)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		st->body = b;
		st->cap = cap;
	}
	memcpy(st->body + st->len, data, len);
	st->len += len;
	return 0;
}

static ssize_t read_reply(nghttp2_session *s, int32_t id, uint8_t *buf, size_t length,
			  uint32_t *flags, nghttp2_data_source *src, void *ud)
{
	struct stream *st = src->ptr;
	size_t n = st->out_len - st->out_off;
	char code[12];

	(void)ud;
	if (n > length)
		n = length;
	memcpy(buf, st->out + st->out_off, n);
	st->out_off += n;
	if (st->out_off == st->out_len) {
		nghttp2_nv tr[1];

		snprintf(code, sizeof(code), "%d", st->status);
		tr[0] = (nghttp2_nv)NV("grpc-status", code);
		*flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
		if (nghttp2_submit_trailer(s, id, tr, 1) != 0)
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	}
	return (ssize_t)n;
}

/* A trailers-only answer: the status in the one HEADERS frame that ends the stream. */
static int answer_status(nghttp2_session *s, struct stream *st, int status, const char *msg)
{
	char code[12], enc[512];

	snprintf(code, sizeof(code), "%d", status);
	grpc_message_encode(msg, enc, sizeof(enc));
	nghttp2_nv nv[] = { NV(":status", "200"), NV("content-type", "application/grpc"),
			    NV("grpc-status", code), NV("grpc-message", enc) };

	return nghttp2_submit_response(s, st->id, nv, msg[0] ? 4 : 3, NULL);
}

static int answer_http(nghttp2_session *s, struct stream *st, const char *code)
{
	nghttp2_nv nv[] = { NV(":status", code) };

	return nghttp2_submit_response(s, st->id, nv, 1, NULL);
}

static const char *frame_why(int r)
{
	switch (r) {
	case -ENODATA:
		return "a request without its message";
	case -EPROTO:
		return "a compressed message, and no grpc-encoding is offered";
	case -EMSGSIZE:
		return "the message is larger than the server takes";
	default:
		return "the message's length is not the body's";
	}
}

static int handle(nghttp2_session *s, struct conn *c, struct stream *st)
{
	const struct h2_method *m = NULL;
	const uint8_t *msg;
	uint8_t *resp = NULL;
	size_t i, len, resp_len = 0;
	int r;

	if (!st->grpc)
		return answer_http(s, st, "415");
	for (i = 0; i < c->l->n_methods && !m; i++)
		if (streq(c->l->methods[i].path, st->path))
			m = &c->l->methods[i];
	if (!m) {
		dra_log("%s: %s: unknown method", c->l->name, st->path);
		snprintf(st->msg, sizeof(st->msg), "unknown method %s", st->path);
		return answer_status(s, st, GRPC_UNIMPLEMENTED, st->msg);
	}
	if (st->too_big)
		return answer_status(s, st, GRPC_RESOURCE_EXHAUSTED,
				     "the message is larger than the server takes");
	r = grpc_frame_parse(st->body, st->len, H2SRV_MSG_MAX, &msg, &len);
	if (r < 0) {
		dra_log("%s: %s: %s", c->l->name, st->path, frame_why(r));
		return answer_status(s, st, r == -EMSGSIZE ? GRPC_RESOURCE_EXHAUSTED : GRPC_INTERNAL,
				     frame_why(r));
	}
	st->msg[0] = '\0';
	st->status = m->fn(msg, len, &resp, &resp_len, st->msg, sizeof(st->msg), c->l->data);
	if (st->status != GRPC_OK) {
		free(resp);
		return answer_status(s, st, st->status, st->msg);
	}
	st->out = malloc(resp_len + GRPC_FRAME_HDR);
	if (!st->out) {
		free(resp);
		return answer_status(s, st, GRPC_RESOURCE_EXHAUSTED, "out of memory");
	}
	grpc_frame_header(st->out, (uint32_t)resp_len);
	if (resp_len)
		memcpy(st->out + GRPC_FRAME_HDR, resp, resp_len);
	free(resp);
	st->out_len = resp_len + GRPC_FRAME_HDR;
	{
		nghttp2_nv nv[] = { NV(":status", "200"), NV("content-type", "application/grpc") };
		nghttp2_data_provider dp = { .source.ptr = st, .read_callback = read_reply };

		return nghttp2_submit_response(s, st->id, nv, 2, &dp);
	}
}

static int frame_recv_cb(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
	struct stream *st;

	if ((f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA) ||
	    !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
	if (!st)
		return 0;
	if (handle(s, ud, st) != 0)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	return 0;
}

static int stream_close_cb(nghttp2_session *s, int32_t id, uint32_t code, void *ud)
{
	(void)code, (void)ud;
	stream_free(nghttp2_session_get_stream_user_data(s, id));
	nghttp2_session_set_stream_user_data(s, id, NULL);
	return 0;
}

static void conn_close(struct conn *c)
{
	nghttp2_session_del(c->s);
	close(c->fd);
	c->fd = -1;
	c->s = NULL;
}

static int conn_open(struct conn *c, int fd, struct h2_listener *l)
{
	nghttp2_session_callbacks *cb;
	nghttp2_settings_entry set[] = { { NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 64 } };
	struct timeval tv = { .tv_sec = 5 };
	int r;

	if (nghttp2_session_callbacks_new(&cb) != 0)
		return -ENOMEM;
	nghttp2_session_callbacks_set_send_callback(cb, send_cb);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, begin_headers_cb);
	nghttp2_session_callbacks_set_on_header_callback(cb, header_cb);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, data_cb);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, frame_recv_cb);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, stream_close_cb);
	c->fd = fd;
	c->l = l;
	r = nghttp2_session_server_new(&c->s, cb, c);
	nghttp2_session_callbacks_del(cb);
	if (r != 0)
		return -ENOMEM;
	/* A reply is written whole within 5 s, or the connection is given up. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (nghttp2_submit_settings(c->s, NGHTTP2_FLAG_NONE, set, 1) != 0)
		return -ENOMEM;
	return 0;
}

/* Write what the session has to send. -errno: the connection is to be closed. */
static int conn_flush(struct conn *c)
{
	const uint8_t *p;
	ssize_t n, w;

	while ((n = nghttp2_session_mem_send(c->s, &p)) > 0) {
		while (n > 0) {
			w = send(c->fd, p, (size_t)n, MSG_NOSIGNAL);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return -EIO;
			p += w;
			n -= w;
		}
	}
	if (n < 0)
		return -EPROTO;
	if (!nghttp2_session_want_read(c->s) && !nghttp2_session_want_write(c->s))
		return -ECONNRESET;
	return 0;
}

static int conn_read(struct conn *c)
{
	uint8_t buf[16384];
	ssize_t n = recv(c->fd, buf, sizeof(buf), 0);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0)
		return -ECONNRESET;
	if (nghttp2_session_mem_recv(c->s, buf, (size_t)n) < 0) {
		/* Tell the peer, where it still listens, then close. */
		nghttp2_session_terminate_session(c->s, NGHTTP2_PROTOCOL_ERROR);
		conn_flush(c);
		return -EPROTO;
	}
	return conn_flush(c);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int h2srv_run(struct h2_listener *l, size_t n, volatile sig_atomic_t *stop, void (*tick)(void *),
	      void *tick_data, int tick_ms)
{
	struct conn c[H2SRV_CONNS_MAX];
	struct pollfd p[H2SRV_CONNS_MAX + 8];
	size_t i, np, ci[H2SRV_CONNS_MAX + 8];
	long next = now_ms() + tick_ms;
	int r = 0;

	if (n > 8)
		return -EINVAL;
	for (i = 0; i < H2SRV_CONNS_MAX; i++)
		c[i].fd = -1;
	while (!*stop) {
		long wait = -1;

		np = 0;
		for (i = 0; i < n; i++)
			p[np++] = (struct pollfd){ .fd = l[i].fd, .events = POLLIN };
		for (i = 0; i < H2SRV_CONNS_MAX; i++)
			if (c[i].fd >= 0) {
				ci[np] = i;
				p[np++] = (struct pollfd){ .fd = c[i].fd, .events = POLLIN };
			}
		if (tick && tick_ms > 0) {
			wait = next - now_ms();
			if (wait < 0)
				wait = 0;
		}
		if (poll(p, np, (int)wait) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		for (i = 0; i < n; i++) {
			int fd;
			size_t k;

			if (!(p[i].revents & POLLIN))
				continue;
			fd = accept4(l[i].fd, NULL, NULL, SOCK_CLOEXEC);
			if (fd < 0)
				continue;
			for (k = 0; k < H2SRV_CONNS_MAX && c[k].fd >= 0; k++)
				;
			if (k == H2SRV_CONNS_MAX) {
				dra_log("%s: %d connections already: one refused", l[i].name,
					H2SRV_CONNS_MAX);
				close(fd);
				continue;
			}
			if (conn_open(&c[k], fd, &l[i]) < 0 || conn_flush(&c[k]) < 0) {
				if (c[k].s)
					conn_close(&c[k]);
				else
					close(fd);
				c[k].fd = -1;
			}
		}
		for (i = n; i < np; i++) {
			struct conn *cc = &c[ci[i]];
			int e;

			if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)) || cc->fd != p[i].fd)
				continue;
			e = conn_read(cc);
			if (e < 0) {
				if (e == -EPROTO)
					dra_log("%s: a client broke HTTP/2: its connection closed",
						cc->l->name);
				conn_close(cc);
			}
		}
		if (tick && tick_ms > 0 && now_ms() >= next) {
			tick(tick_data);
			next = now_ms() + tick_ms;
		}
	}
	for (i = 0; i < H2SRV_CONNS_MAX; i++)
		if (c[i].fd >= 0)
			conn_close(&c[i]);
	return r;
}
