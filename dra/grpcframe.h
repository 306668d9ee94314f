/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_DRA_GRPCFRAME_H
#define GPUVM_DRA_GRPCFRAME_H

#include <stddef.h>
#include <stdint.h>

/* gRPC's length-prefixed message: a compressed flag byte, then the length, 4 bytes big-endian. */
#define GRPC_FRAME_HDR 5

/* The status codes gpuvm-dra answers with (grpc's codes.proto). */
enum grpc_status {
	GRPC_OK = 0,
	GRPC_INVALID_ARGUMENT = 3,
	GRPC_RESOURCE_EXHAUSTED = 8,
	GRPC_UNIMPLEMENTED = 12,
	GRPC_INTERNAL = 13,
};

/*
 * Pure: the one message of a unary call's request body buf (n bytes), never trusting its
 * length: *msg and *len the message in buf. -ENODATA: shorter than a header; -EPROTO: the
 * compressed flag set (no grpc-encoding is offered) or neither 0 nor 1; -EMSGSIZE: the
 * length says more than max; -EBADMSG: the length is not what follows it (a message cut
 * short, or bytes after it: a unary call carries one).
 */
int grpc_frame_parse(const uint8_t *buf, size_t n, size_t max, const uint8_t **msg, size_t *len);

/* Pure: the header of an uncompressed message of len bytes. */
void grpc_frame_header(uint8_t hdr[GRPC_FRAME_HDR], uint32_t len);

/*
 * Pure: text as a grpc-message value: printable ASCII but '%' as it is, every other byte
 * percent-encoded (the gRPC over HTTP/2 spec). Cut at a whole escape to fit size; returns
 * the length written.
 */
size_t grpc_message_encode(const char *text, char *out, size_t size);

#endif
