// SPDX-License-Identifier: MIT
/*
 * A JSON writer small enough to read in one sitting, a validator for what others wrote, and
 * a reader of one string in a text the validator accepted.
 */
#include <errno.h>
#include <string.h>

#include "json.h"

void json_init(struct json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->first[0] = true;
}

static void indent(struct json *j)
{
	static const char spaces[] = "                                ";
	size_t n = 2 * (size_t)j->depth;

	while (n) {
		size_t k = n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1;

		fwrite(spaces, 1, k, j->f);
		n -= k;
	}
}

static void prefix(struct json *j, const char *key)
{
	if (j->depth > 0) {
		fputs(j->first[j->depth] ? "\n" : ",\n", j->f);
		indent(j);
	}
	j->first[j->depth] = false;
	if (key) {
		fputc('"', j->f);
		json_escape(j->f, key);
		fputs("\": ", j->f);
	}
}

static void open_(struct json *j, const char *key, char c)
{
	prefix(j, key);
	fputc(c, j->f);
	if (j->depth + 1 < JSON_DEPTH_MAX)
		j->depth++;
	j->first[j->depth] = true;
}

static void close_(struct json *j, char c)
{
	bool empty = j->first[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (!empty) {
		fputc('\n', j->f);
		indent(j);
	}
	fputc(c, j->f);
}

void json_object_begin(struct json *j, const char *key)
{
	open_(j, key, '{');
}

void json_object_end(struct json *j)
{
	close_(j, '}');
}

void json_array_begin(struct json *j, const char *key)
{
	open_(j, key, '[');
}

void json_array_end(struct json *j)
{
	close_(j, ']');
}

/* Length of the valid UTF-8 sequence at s, or 0. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

void json_escape(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	while (*s) {
		const unsigned char *run = s;
		size_t n;

		/* Printable ASCII but '"' and '\\', the bulk of it: a run at a time. */
		while (*s >= 0x20 && *s < 0x7f && *s != '"' && *s != '\\')
			s++;
		if (s > run)
			fwrite(run, 1, (size_t)(s - run), f);
		if (!*s)
			break;
		switch (*s) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*s < 0x20 || *s == 0x7f) {
				fprintf(f, "\\u%04x", *s);
				break;
			}
			n = utf8_len(s);
			if (n == 0) {
				fputs("\\ufffd", f);
				break;
			}
			fwrite(s, 1, n, f);
			s += n;
			continue;
		}
		s++;
	}
}

void json_string(struct json *j, const char *key, const char *value)
{
	prefix(j, key);
	if (!value) {
		fputs("null", j->f);
		return;
	}
	fputc('"', j->f);
	json_escape(j->f, value);
	fputc('"', j->f);
}

void json_int(struct json *j, const char *key, long long value)
{
	prefix(j, key);
	fprintf(j->f, "%lld", value);
}

void json_bool(struct json *j, const char *key, bool value)
{
	prefix(j, key);
	fputs(value ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
	prefix(j, key);
	fputs("null", j->f);
}

void json_raw(struct json *j, const char *key, const char *text)
{
	prefix(j, key);
	fputs(text, j->f);
}

void json_finish(struct json *j)
{
	fputc('\n', j->f);
}

/* The validator: a recursive descent over RFC 8259 with a depth bound. */
struct jp {
	const char *s, *end;
	int depth;
};

static void ws(struct jp *p)
{
	while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
		p->s++;
}

static bool lit(struct jp *p, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(p->end - p->s) < n || memcmp(p->s, w, n) != 0)
		return false;
	p->s += n;
	return true;
}

static bool hex4(struct jp *p)
{
	int i;

	for (i = 0; i < 4; i++, p->s++) {
		char c = p->s < p->end ? *p->s : 0;

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
			return false;
	}
	return true;
}

static bool str(struct jp *p)
{
	if (p->s >= p->end || *p->s != '"')
		return false;
	p->s++;
	while (p->s < p->end) {
		unsigned char c = (unsigned char)*p->s;
		unsigned char buf[5] = { 0 };
		size_t n, avail;

		if (c == '"') {
			p->s++;
			return true;
		}
		if (c < 0x20)
			return false;
		if (c == '\\') {
			p->s++;
			if (p->s >= p->end)
				return false;
			c = (unsigned char)*p->s++;
			if (c == 'u') {
				if (!hex4(p))
					return false;
			} else if (!strchr("\"\\/bfnrt", c) || c == 0) {
				return false;
			}
			continue;
		}
		avail = (size_t)(p->end - p->s);
		memcpy(buf, p->s, avail < 4 ? avail : 4);
		n = utf8_len(buf);
		if (n == 0 || n > avail)
			return false;
		p->s += n;
	}
	return false;
}

static bool digits(struct jp *p)
{
	const char *start = p->s;

	while (p->s < p->end && *p->s >= '0' && *p->s <= '9')
		p->s++;
	return p->s > start;
}

static bool num(struct jp *p)
{
	if (p->s < p->end && *p->s == '-')
		p->s++;
	if (p->s < p->end && *p->s == '0')
		p->s++;
	else if (!digits(p))
		return false;
	if (p->s < p->end && *p->s == '.') {
		p->s++;
		if (!digits(p))
			return false;
	}
	if (p->s < p->end && (*p->s == 'e' || *p->s == 'E')) {
		p->s++;
		if (p->s < p->end && (*p->s == '+' || *p->s == '-'))
			p->s++;
		if (!digits(p))
			return false;
	}
	return true;
}

static bool value(struct jp *p);

static bool container(struct jp *p, char close, bool object)
{
	p->s++;
	if (++p->depth > 64)
		return false;
	ws(p);
	if (p->s < p->end && *p->s == close) {
		p->s++;
		p->depth--;
		return true;
	}
	for (;;) {
		ws(p);
		if (object) {
			if (!str(p))
				return false;
			ws(p);
			if (p->s >= p->end || *p->s++ != ':')
				return false;
		}
		if (!value(p))
			return false;
		ws(p);
		if (p->s >= p->end)
			return false;
		if (*p->s == ',') {
			p->s++;
			continue;
		}
		if (*p->s++ != close)
			return false;
		p->depth--;
		return true;
	}
}

static bool value(struct jp *p)
{
	ws(p);
	if (p->s >= p->end)
		return false;
	switch (*p->s) {
	case '{':
		return container(p, '}', true);
	case '[':
		return container(p, ']', false);
	case '"':
		return str(p);
	case 't':
		return lit(p, "true");
	case 'f':
		return lit(p, "false");
	case 'n':
		return lit(p, "null");
	default:
		return num(p);
	}
}

bool json_valid(const char *text, size_t len)
{
	struct jp p = { text, text + len, 0 };

	if (!value(&p))
		return false;
	ws(&p);
	return p.s == p.end;
}

/*
 * The reader, over a text json_valid accepted: so it only skips and decodes, never
 * checks. A key is compared once decoded ("m\u006fde" is "mode").
 */
static const char *skip_ws(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
		s++;
	return s;
}

static const char *skip_string(const char *s, const char *end)
{
	for (s++; s < end && *s != '"'; s++)
		if (*s == '\\')
			s++;
	return s + 1;
}

static const char *skip_value(const char *s, const char *end)
{
	int depth = 0;

	s = skip_ws(s, end);
	do {
		if (*s == '"') {
			s = skip_string(s, end);
			continue;
		}
		if (*s == '{' || *s == '[')
			depth++;
		else if (*s == '}' || *s == ']')
			depth--;
		else if (depth == 0) /* a number or a literal */
			while (s + 1 < end && !strchr(",]} \t\r\n", s[1]))
				s++;
		s++;
	} while (depth > 0 && s < end);
	return s;
}

static unsigned hex4_value(const char *s)
{
	unsigned v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		char c = s[i];

		v = v * 16 + (unsigned)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	return v;
}

/* Append the UTF-8 of cp at out[*n] while it fits in size (with the NUL). */
static void put_utf8(unsigned cp, char *out, size_t size, size_t *n)
{
	unsigned char u[4];
	size_t k, i;

	if (cp < 0x80) {
		u[0] = (unsigned char)cp;
		k = 1;
	} else if (cp < 0x800) {
		u[0] = (unsigned char)(0xc0 | cp >> 6);
		u[1] = (unsigned char)(0x80 | (cp & 0x3f));
		k = 2;
	} else if (cp < 0x10000) {
		u[0] = (unsigned char)(0xe0 | cp >> 12);
		u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (unsigned char)(0x80 | (cp & 0x3f));
		k = 3;
	} else {
		u[0] = (unsigned char)(0xf0 | cp >> 18);
		u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (unsigned char)(0x80 | (cp & 0x3f));
		k = 4;
	}
	for (i = 0; i < k; i++, (*n)++)
		if (*n + 1 < size)
			out[*n] = (char)u[i];
}

/*
 * Decode the string at *s (its opening quote) into out; *s moves past it. 0, -E2BIG when it
 * does not fit (*s moves all the same), -EINVAL for \u0000 or a lone surrogate.
 */
static int decode_string(const char **s, const char *end, char *out, size_t size)
{
	const char *p = *s + 1;
	size_t n = 0;
	int r = 0;

	while (p < end && *p != '"') {
		unsigned cp;

		if (*p != '\\') {
			if (n + 1 < size)
				out[n] = *p;
			n++;
			p++;
			continue;
		}
		p++;
		switch (*p++) {
		case 'b':
			cp = '\b';
			break;
		case 'f':
			cp = '\f';
			break;
		case 'n':
			cp = '\n';
			break;
		case 'r':
			cp = '\r';
			break;
		case 't':
			cp = '\t';
			break;
		case 'u':
			cp = hex4_value(p);
			p += 4;
			if (cp >= 0xd800 && cp <= 0xdbff && end - p >= 6 && p[0] == '\\' &&
			    p[1] == 'u' && hex4_value(p + 2) >= 0xdc00 && hex4_value(p + 2) <= 0xdfff) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (hex4_value(p + 2) - 0xdc00);
				p += 6;
			} else if ((cp >= 0xd800 && cp <= 0xdfff) || cp == 0) {
				/* a lone surrogate is no character; U+0000 would end the C string */
				r = -EINVAL;
			}
			break;
		default: /* '"', '\\', '/' */
			cp = (unsigned char)p[-1];
			break;
		}
		put_utf8(cp, out, size, &n);
	}
	*s = p + 1;
	if (size)
		out[n < size ? n : size - 1] = '\0';
	if (r == 0 && n >= size)
		r = -E2BIG;
	return r;
}

/* The value of key in the object at s: its start, NULL when absent, or -EINVAL (twice). */
static int member(const char *s, const char *end, const char *key, const char **value)
{
	char name[256];

	*value = NULL;
	s = skip_ws(s, end);
	if (*s != '{')
		return -ENOENT;
	s = skip_ws(s + 1, end);
	while (s < end && *s == '"') {
		int r = decode_string(&s, end, name, sizeof(name));

		s = skip_ws(s, end) + 1; /* ':' */
		if (r == 0 && strcmp(name, key) == 0) {
			if (*value)
				return -EINVAL; /* which one would the writer have meant? */
			*value = skip_ws(s, end);
		}
		s = skip_ws(skip_value(s, end), end);
		if (s < end && *s == ',')
			s = skip_ws(s + 1, end);
	}
	return *value ? 0 : -ENOENT;
}

int json_get_string(const char *text, size_t len, const char *const *path, size_t depth, char *buf,
		    size_t size)
{
	const char *s = text, *end = text + len;
	size_t i;
	int r;

	if (!json_valid(text, len))
		return -EINVAL;
	for (i = 0; i < depth; i++) {
		r = member(s, end, path[i], &s);
		if (r < 0)
			return r;
	}
	if (*s != '"')
		return -EINVAL;
	return decode_string(&s, end, buf, size);
}
