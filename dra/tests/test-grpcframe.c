// SPDX-License-Identifier: MIT
/* gRPC's message framing (dra/grpcframe.c): the decoder never trusts a length. */
#include <errno.h>
#include <stdint.h>

#include "grpcframe.h"
#include "unit.h"

static void parse_cases(void)
{
	static const struct {
		const char *name;
		size_t n, max, len;
		int want;
		uint8_t buf[12];
	} t[] = {
		{ "empty body", 0, 64, 0, -ENODATA, { 0 } },
		{ "a header cut short", 3, 64, 0, -ENODATA, { 0, 0, 0 } },
		{ "an empty message", 5, 64, 0, 0, { 0, 0, 0, 0, 0 } },
		{ "three bytes", 8, 64, 3, 0, { 0, 0, 0, 0, 3, 1, 2, 3 } },
		{ "compressed", 6, 64, 0, -EPROTO, { 1, 0, 0, 0, 1, 9 } },
		{ "a flag that is no flag", 6, 64, 0, -EPROTO, { 0x80, 0, 0, 0, 1, 9 } },
		{ "length past the bound", 5, 64, 0, -EMSGSIZE, { 0, 0, 0, 0, 65 } },
		{ "4 GiB - 1 said", 6, 64, 0, -EMSGSIZE, { 0, 0xff, 0xff, 0xff, 0xff, 1 } },
		{ "length at the bound, body short", 6, 64, 0, -EBADMSG, { 0, 0, 0, 0, 64, 1 } },
		{ "a message cut short", 8, 64, 0, -EBADMSG, { 0, 0, 0, 0, 4, 1, 2, 3 } },
		{ "bytes after the message", 8, 64, 0, -EBADMSG, { 0, 0, 0, 0, 2, 1, 2, 3 } },
		{ "two messages", 12, 64, 0, -EBADMSG, { 0, 0, 0, 0, 1, 7, 0, 0, 0, 0, 1, 7 } },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const uint8_t *msg = NULL;
		size_t len = 99;
		int r = grpc_frame_parse(t[i].buf, t[i].n, t[i].max, &msg, &len);

		CHECK_INT(r, t[i].want, "parse: %s", t[i].name);
		if (!r && !t[i].want) {
			CHECK_INT(len, t[i].len, "parse: %s: its length", t[i].name);
			CHECK(msg == t[i].buf + GRPC_FRAME_HDR,
			      "parse: %s: the message after the header", t[i].name);
		}
	}
}

static void header_round_trip(void)
{
	static const uint32_t lens[] = { 0, 1, 255, 256, 65536, 4u << 20, 0xffffffffu };
	uint8_t buf[GRPC_FRAME_HDR];
	size_t i;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		grpc_frame_header(buf, lens[i]);
		CHECK(buf[0] == 0 &&
			      ((uint32_t)buf[1] << 24 | (uint32_t)buf[2] << 16 |
			       (uint32_t)buf[3] << 8 | buf[4]) == lens[i],
		      "header of %u bytes: uncompressed, big-endian", lens[i]);
	}
}

static void message_encoding(void)
{
	char out[64];

	grpc_message_encode("device gpu-0: on nouveau", out, sizeof(out));
	CHECK_STR(out, "device gpu-0: on nouveau", "grpc-message: printable ASCII as it is");
	grpc_message_encode("100% \xc3\xa9\n", out, sizeof(out));
	CHECK_STR(out, "100%25 %C3%A9%0A", "grpc-message: '%%', UTF-8 and controls percent-encoded");
	grpc_message_encode("abc\xff", out, 6);
	CHECK_STR(out, "abc", "grpc-message: cut before an escape that does not fit");
	CHECK_INT(grpc_message_encode("abc", out, 0), 0, "grpc-message: no room, nothing written");
}

int main(void)
{
	parse_cases();
	header_round_trip();
	message_encoding();
	return unit_done();
}
