// SPDX-License-Identifier: MIT
/*
 * The JSON writer, round trip. Two parts per input:
 *  1. json_escape on the input as a C string: the result, in quotes, is accepted by
 *     json_valid, and un-escaped by the small decoder below it gives back the input
 *     where the input is valid UTF-8, and the input with each byte that does not start
 *     a well-formed sequence replaced by U+FFFD where it is not.
 *  2. A document written from the input as a program (begin/end objects and arrays,
 *     keys, strings, NULL strings, integers, booleans, nulls, raw values that json_valid
 *     accepts): json_valid accepts it, and decoding it gives back the very events, in
 *     order, with the values written.
 * UTF-8 validity is judged here from the table of well-formed byte sequences (Unicode
 * 15, table 3-7), not from json.c's code.
 */
#include "fuzz.h"
#include "json.h"

#define DEPTH_MAX 24 /* past JSON_DEPTH_MAX on purpose: the writer must stay valid */
#define OPS_MAX 200

/* Length of the well-formed UTF-8 sequence at s (n bytes available), or 0. */
static size_t wellformed(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (s[0] <= 0x7f)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if (s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xbf))
			return 0;
	}
	return len;
}

/* The input as json_escape must render it: bad bytes become U+FFFD, one each. */
static char *sanitize(const char *in, size_t *outlen, bool *was_valid)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t n = strlen(in), i = 0, o = 0;
	char *out = malloc(3 * n + 1);

	if (!out)
		abort();
	*was_valid = true;
	while (i < n) {
		size_t k = wellformed(s + i, n - i);

		if (k) {
			memcpy(out + o, s + i, k);
			o += k;
			i += k;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			*was_valid = false;
		}
	}
	out[o] = '\0';
	*outlen = o;
	return out;
}

/* ---- the decoder: JSON text -> events ---- */

enum ev_type {
	EV_OBJ,
	EV_ARR,
	EV_END,
	EV_KEY,
	EV_STR,
	EV_NUM,
	EV_TRUE,
	EV_FALSE,
	EV_NULL
};

struct ev {
	enum ev_type type;
	char *s; /* EV_KEY, EV_STR: decoded bytes; EV_NUM: the literal */
	size_t n;
};

struct evs {
	struct ev *v;
	size_t n, cap;
};

static void ev_add(struct evs *e, enum ev_type t, const char *s, size_t n)
{
	struct ev *x;

	if (e->n == e->cap) {
		e->cap = e->cap ? 2 * e->cap : 32;
		e->v = realloc(e->v, e->cap * sizeof(*e->v));
		if (!e->v)
			abort();
	}
	x = &e->v[e->n++];
	x->type = t;
	x->n = n;
	x->s = NULL;
	if (s) {
		x->s = malloc(n + 1);
		if (!x->s)
			abort();
		memcpy(x->s, s, n);
		x->s[n] = '\0';
	}
}

static void evs_free(struct evs *e)
{
	size_t i;

	for (i = 0; i < e->n; i++)
		free(e->v[i].s);
	free(e->v);
	memset(e, 0, sizeof(*e));
}

struct dec {
	const char *p, *end;
	struct evs *out;
};

static void dec_ws(struct dec *d)
{
	while (d->p < d->end && strchr(" \t\r\n", *d->p) && *d->p)
		d->p++;
}

static unsigned dec_hex4(struct dec *d)
{
	unsigned v = 0;
	int i;

	fuzz_assert(d->end - d->p >= 4, "short \\u escape");
	for (i = 0; i < 4; i++) {
		char c = *d->p++;

		v = v * 16 + (unsigned)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	return v;
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) { /* lone surrogates too: they cannot match any input */
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* After "\\u": a code point, joining a surrogate pair. */
static unsigned dec_codepoint(struct dec *d)
{
	unsigned cp = dec_hex4(d), lo;
	const char *save = d->p;

	if (cp < 0xd800 || cp > 0xdbff || d->end - d->p < 6 || d->p[0] != '\\' || d->p[1] != 'u')
		return cp;
	d->p += 2;
	lo = dec_hex4(d);
	if (lo >= 0xdc00 && lo <= 0xdfff)
		return 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	d->p = save; /* a lone surrogate: the next escape stands alone */
	return cp;
}

/* A string at d->p (on its opening quote), decoded into a new buffer. */
static char *dec_string(struct dec *d, size_t *len)
{
	static const char escapes[] = "\"\\/bfnrt", unescaped[] = "\"\\/\b\f\n\r\t";
	char *o = malloc((size_t)(d->end - d->p) * 2 + 1);
	const char *p;
	size_t n = 0;

	if (!o)
		abort();
	fuzz_assert(d->p < d->end && *d->p == '"', "a string expected");
	d->p++;
	for (;;) {
		char c;

		fuzz_assert(d->p < d->end, "unterminated string");
		c = *d->p++;
		if (c == '"')
			break;
		if (c != '\\') {
			o[n++] = c;
			continue;
		}
		fuzz_assert(d->p < d->end, "escape at the end");
		c = *d->p++;
		if (c == 'u') {
			n += put_utf8(o + n, dec_codepoint(d));
			continue;
		}
		p = strchr(escapes, c);
		fuzz_assert(p && c, "bad escape '\\%c'", c);
		o[n++] = unescaped[p - escapes];
	}
	o[n] = '\0';
	*len = n;
	return o;
}

static void dec_value(struct dec *d)
{
	const char *start;
	char *s;
	size_t n;

	dec_ws(d);
	fuzz_assert(d->p < d->end, "a value expected");
	switch (*d->p) {
	case '{':
	case '[': {
		bool obj = *d->p == '{';
		char close = obj ? '}' : ']';

		d->p++;
		ev_add(d->out, obj ? EV_OBJ : EV_ARR, NULL, 0);
		dec_ws(d);
		if (d->p < d->end && *d->p == close) {
			d->p++;
			ev_add(d->out, EV_END, NULL, 0);
			return;
		}
		for (;;) {
			dec_ws(d);
			if (obj) {
				s = dec_string(d, &n);
				ev_add(d->out, EV_KEY, s, n);
				free(s);
				dec_ws(d);
				fuzz_assert(d->p < d->end && *d->p == ':', "':' expected");
				d->p++;
			}
			dec_value(d);
			dec_ws(d);
			fuzz_assert(d->p < d->end, "unterminated container");
			if (*d->p++ == ',')
				continue;
			fuzz_assert(d->p[-1] == close, "'%c' expected", close);
			ev_add(d->out, EV_END, NULL, 0);
			return;
		}
	}
	case '"':
		s = dec_string(d, &n);
		ev_add(d->out, EV_STR, s, n);
		free(s);
		return;
	case 't':
		d->p += 4;
		ev_add(d->out, EV_TRUE, NULL, 0);
		return;
	case 'f':
		d->p += 5;
		ev_add(d->out, EV_FALSE, NULL, 0);
		return;
	case 'n':
		d->p += 4;
		ev_add(d->out, EV_NULL, NULL, 0);
		return;
	default:
		start = d->p;
		while (d->p < d->end && *d->p && strchr("+-.0123456789eE", *d->p))
			d->p++;
		fuzz_assert(d->p > start, "a number expected at '%c'", *start);
		ev_add(d->out, EV_NUM, start, (size_t)(d->p - start));
	}
}

static void decode(const char *text, size_t len, struct evs *out)
{
	struct dec d = { text, text + len, out };

	dec_value(&d);
	dec_ws(&d);
	fuzz_assert(d.p == d.end, "bytes after the value");
}

/* ---- part 1: json_escape ---- */

static char *render_escape(const char *s, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		abort();
	fputc('"', f);
	json_escape(f, s);
	fputc('"', f);
	fclose(f);
	return buf;
}

static void check_escape(const char *s)
{
	struct evs e = { 0 };
	size_t len, want_len;
	bool was_valid;
	char *out = render_escape(s, &len), *want = sanitize(s, &want_len, &was_valid);
	size_t i;

	fuzz_assert(json_valid(out, len), "json_escape wrote invalid JSON: %s", out);
	for (i = 0; i < len; i++)
		fuzz_assert((unsigned char)out[i] >= 0x20 && out[i] != 0x7f,
			    "control byte 0x%02x written", (unsigned char)out[i]);
	decode(out, len, &e);
	fuzz_assert(e.n == 1 && e.v[0].type == EV_STR, "not one string");
	if (was_valid)
		fuzz_assert(e.v[0].n == strlen(s) && memcmp(e.v[0].s, s, e.v[0].n) == 0,
			    "valid UTF-8 does not come back: %s", out);
	fuzz_assert(e.v[0].n == want_len && memcmp(e.v[0].s, want, want_len) == 0,
		    "invalid UTF-8 not replaced byte by byte: %s", out);
	evs_free(&e);
	free(out);
	free(want);
}

/* ---- part 2: a document ---- */

struct gen {
	struct fuzz_in in;
	struct json j;
	struct evs want;
	bool obj[DEPTH_MAX + 1]; /* per open level: an object (else an array) */
	int depth;
	char strbuf[64];
};

/* A string from the input: a length, then bytes (a NUL ends it early). */
static const char *gen_string(struct gen *g)
{
	size_t n = fuzz_pick(&g->in, sizeof(g->strbuf)), i;

	for (i = 0; i < n; i++)
		g->strbuf[i] = (char)fuzz_byte(&g->in);
	g->strbuf[n] = '\0';
	return g->strbuf;
}

static void want_string(struct gen *g, enum ev_type t, const char *s)
{
	size_t n;
	bool valid;
	char *clean = sanitize(s, &n, &valid);

	ev_add(&g->want, t, clean, n);
	free(clean);
}

/* The key of the next value: one inside an object, none elsewhere. */
static const char *gen_key(struct gen *g, char *copy)
{
	if (g->depth == 0 || !g->obj[g->depth])
		return NULL;
	strcpy(copy, gen_string(g));
	want_string(g, EV_KEY, copy);
	return copy;
}

static void gen_value(struct gen *g, unsigned op)
{
	char key[64], num[32];
	const char *k, *s;
	long long v;
	size_t i, n;

	switch (op) {
	case 0:
	case 1:
		k = gen_key(g, key);
		if (op == 0)
			json_object_begin(&g->j, k);
		else
			json_array_begin(&g->j, k);
		ev_add(&g->want, op == 0 ? EV_OBJ : EV_ARR, NULL, 0);
		g->obj[++g->depth] = op == 0;
		return;
	case 2:
		k = gen_key(g, key);
		s = gen_string(g);
		json_string(&g->j, k, s);
		want_string(g, EV_STR, s);
		return;
	case 3:
		k = gen_key(g, key);
		json_string(&g->j, k, NULL);
		ev_add(&g->want, EV_NULL, NULL, 0);
		return;
	case 4:
		k = gen_key(g, key);
		for (v = 0, i = 0; i < 8; i++)
			v = (long long)((unsigned long long)v << 8 | fuzz_byte(&g->in));
		json_int(&g->j, k, v);
		n = (size_t)snprintf(num, sizeof(num), "%lld", v);
		ev_add(&g->want, EV_NUM, num, n);
		return;
	case 5:
		k = gen_key(g, key);
		v = fuzz_byte(&g->in) & 1;
		json_bool(&g->j, k, v);
		ev_add(&g->want, v ? EV_TRUE : EV_FALSE, NULL, 0);
		return;
	case 6:
		k = gen_key(g, key);
		json_null(&g->j, k);
		ev_add(&g->want, EV_NULL, NULL, 0);
		return;
	default:
		/* A raw value: the caller checked it with json_valid; it decodes as itself. */
		k = gen_key(g, key);
		s = gen_string(g);
		if (!json_valid(s, strlen(s)))
			s = "[1, \"raw\", {\"x\": null}]";
		json_raw(&g->j, k, s);
		decode(s, strlen(s), &g->want);
		return;
	}
}

static void check_document(const uint8_t *data, size_t size)
{
	struct gen g = { .in = { data, size } };
	struct evs got = { 0 };
	char *buf = NULL;
	size_t len, i, ops;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	json_init(&g.j, f);
	/* The top level: one value. */
	gen_value(&g, fuzz_pick(&g.in, 8));
	for (ops = 0; g.depth > 0 && ops < OPS_MAX && g.in.n; ops++) {
		unsigned op = fuzz_pick(&g.in, 9);

		if (op == 8 || (g.depth >= DEPTH_MAX && op <= 1)) {
			if (g.obj[g.depth])
				json_object_end(&g.j);
			else
				json_array_end(&g.j);
			ev_add(&g.want, EV_END, NULL, 0);
			g.depth--;
			continue;
		}
		gen_value(&g, op);
	}
	for (; g.depth > 0; g.depth--) {
		if (g.obj[g.depth])
			json_object_end(&g.j);
		else
			json_array_end(&g.j);
		ev_add(&g.want, EV_END, NULL, 0);
	}
	json_finish(&g.j);
	fclose(f);

	fuzz_assert(json_valid(buf, len), "the writer wrote invalid JSON:\n%s", buf);
	decode(buf, len, &got);
	fuzz_assert(got.n == g.want.n, "%zu events written, %zu read back:\n%s", g.want.n, got.n, buf);
	for (i = 0; i < got.n; i++) {
		const struct ev *a = &got.v[i], *b = &g.want.v[i];

		fuzz_assert(a->type == b->type && a->n == b->n &&
				    (!a->s || memcmp(a->s, b->s, a->n) == 0),
			    "event %zu differs (type %d vs %d):\n%s", i, a->type, b->type, buf);
	}
	evs_free(&got);
	evs_free(&g.want);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);

	check_escape(s);
	free(s);
	check_document(data, size);
	return 0;
}
