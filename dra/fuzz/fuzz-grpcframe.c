// SPDX-License-Identifier: MIT
/*
 * grpc_frame_parse on arbitrary bytes, in an exact buffer (ASan sees a read past size), with
 * a bound taken from the input's first byte.
 *
 * Invariants: 0 only for a 0 flag, a length within the bound and exactly the rest of the
 * body, the message right after the header; otherwise one of the four errors, and which one
 * follows from the header; a header made by grpc_frame_header for the message parses back
 * to it. grpc_message_encode: NUL-terminated within its buffer, printable ASCII only, '%'
 * only as the start of an escape.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpcframe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                     \
	do {                                                                                         \
		if (!(c)) {                                                                          \
			fprintf(stderr, "invariant violated: %s (%s:%d)\n", #c, __FILE__, __LINE__); \
			abort();                                                                     \
		}                                                                                    \
	} while (0)

static void parse(const uint8_t *data, size_t size, size_t max)
{
	uint8_t *buf = malloc(size ? size : 1);
	const uint8_t *msg = NULL;
	size_t len = 0;
	uint32_t l;
	int r;

	if (!buf)
		abort();
	if (size)
		memcpy(buf, data, size);
	r = grpc_frame_parse(buf, size, max, &msg, &len);
	if (size < GRPC_FRAME_HDR) {
		CHECK(r == -ENODATA);
	} else {
		l = (uint32_t)buf[1] << 24 | (uint32_t)buf[2] << 16 | (uint32_t)buf[3] << 8 | buf[4];
		if (buf[0] != 0)
			CHECK(r == -EPROTO);
		else if (l > max)
			CHECK(r == -EMSGSIZE);
		else if (l != size - GRPC_FRAME_HDR)
			CHECK(r == -EBADMSG);
		else
			CHECK(r == 0 && msg == buf + GRPC_FRAME_HDR && len == l);
	}
	free(buf);
}

static void round_trip(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size + GRPC_FRAME_HDR);
	const uint8_t *msg;
	size_t len;

	if (!buf)
		abort();
	grpc_frame_header(buf, (uint32_t)size);
	if (size)
		memcpy(buf + GRPC_FRAME_HDR, data, size);
	CHECK(grpc_frame_parse(buf, size + GRPC_FRAME_HDR, size, &msg, &len) == 0);
	CHECK(len == size && (!size || !memcmp(msg, data, size)));
	free(buf);
}

static void encode(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), out[97];
	size_t n, i, cap = size % sizeof(out) + 1;

	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	n = grpc_message_encode(text, out, cap);
	CHECK(n < cap && out[n] == '\0' && strlen(out) == n);
	for (i = 0; i < n; i++) {
		CHECK(out[i] >= 0x20 && out[i] <= 0x7e);
		if (out[i] == '%')
			CHECK(i + 2 < n && isxdigit((unsigned char)out[i + 1]) &&
			      isxdigit((unsigned char)out[i + 2]));
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	parse(data, size, size ? data[0] : 0);
	parse(data, size, 1u << 22);
	round_trip(data, size);
	encode(data, size);
	return 0;
}
