// SPDX-License-Identifier: MIT
/* gRPC's message framing: the decoder of a unary request's body, and what a reply needs. */
#include <errno.h>
#include <stdio.h>

#include "grpcframe.h"

int grpc_frame_parse(const uint8_t *buf, size_t n, size_t max, const uint8_t **msg, size_t *len)
{
	uint32_t l;

	if (n < GRPC_FRAME_HDR)
		return -ENODATA;
	if (buf[0] != 0)
		return -EPROTO;
	l = (uint32_t)buf[1] << 24 | (uint32_t)buf[2] << 16 | (uint32_t)buf[3] << 8 | buf[4];
	if (l > max)
		return -EMSGSIZE;
	if (l != n - GRPC_FRAME_HDR)
		return -EBADMSG;
	*msg = buf + GRPC_FRAME_HDR;
	*len = l;
	return 0;
}

void grpc_frame_header(uint8_t hdr[GRPC_FRAME_HDR], uint32_t len)
{
	hdr[0] = 0;
	hdr[1] = (uint8_t)(len >> 24);
	hdr[2] = (uint8_t)(len >> 16);
	hdr[3] = (uint8_t)(len >> 8);
	hdr[4] = (uint8_t)len;
}

size_t grpc_message_encode(const char *text, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;
	const unsigned char *p;

	if (!size)
		return 0;
	for (p = (const unsigned char *)text; *p; p++) {
		if (*p >= 0x20 && *p <= 0x7e && *p != '%') {
			if (o + 1 >= size)
				break;
			out[o++] = (char)*p;
		} else {
			if (o + 3 >= size)
				break;
			out[o++] = '%';
			out[o++] = hex[*p >> 4];
			out[o++] = hex[*p & 15];
		}
	}
	out[o] = '\0';
	return o;
}
