// SPDX-License-Identifier: MIT
/* The API client of gpuvm-dra: libcurl, the pod's service account, the mirror's overrides. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "kapi.h"
#include "util.h"

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

static int set(char *buf, size_t size, const char *v)
{
	if (strlen(v) >= size)
		return -ENAMETOOLONG;
	memcpy(buf, v, strlen(v) + 1);
	return 0;
}

int kapi_from_env(struct kapi *k, char *why, size_t whysize)
{
	const char *s = getenv("GPUVM_API_SERVER"), *h = getenv("KUBERNETES_SERVICE_HOST"),
		   *p = getenv("KUBERNETES_SERVICE_PORT"), *t = getenv("GPUVM_API_TIMEOUT");
	const char *tf = getenv("GPUVM_API_TOKEN_FILE"), *ca = getenv("GPUVM_API_CA_FILE");
	char def[256], *end;

	if (!s || !*s) {
		if (!h || !*h) {
			snprintf(why, whysize,
				 "no API server: neither GPUVM_API_SERVER nor KUBERNETES_SERVICE_HOST is set");
			return -EINVAL;
		}
		/* An IPv6 service address goes in brackets. */
		snprintf(def, sizeof(def), strchr(h, ':') ? "https://[%s]:%s" : "https://%s:%s", h,
			 p && *p ? p : "443");
		s = def;
	}
	k->timeout_s = 30;
	if (t && *t) {
		errno = 0;
		k->timeout_s = strtol(t, &end, 10);
		if (errno || *end || k->timeout_s < 1 || k->timeout_s > 3600) {
			snprintf(why, whysize, "GPUVM_API_TIMEOUT=%s: not seconds from 1 to 3600", t);
			return -EINVAL;
		}
	}
	if (set(k->server, sizeof(k->server), s) ||
	    set(k->token_file, sizeof(k->token_file), tf && *tf ? tf : SA_DIR "/token") ||
	    set(k->ca_file, sizeof(k->ca_file), ca && *ca ? ca : SA_DIR "/ca.crt")) {
		snprintf(why, whysize, "an API setting is longer than %zu bytes",
			 sizeof(k->server) - 1);
		return -EINVAL;
	}
	return 0;
}

struct sink {
	char *buf;
	size_t len;
	bool over;
};

static size_t take(char *data, size_t size, size_t nmemb, void *ud)
{
	struct sink *s = ud;
	size_t n = size * nmemb;
	char *b;

	if (n > KAPI_BODY_MAX - s->len) {
		s->over = true;
		return 0;
	}
	b = realloc(s->buf, s->len + n + 1);
	if (!b)
		return 0;
	s->buf = b;
	memcpy(s->buf + s->len, data, n);
	s->len += n;
	s->buf[s->len] = '\0';
	return n;
}

/* The bearer header of the token file: "" with "none"; -errno when it cannot be read. */
static int bearer(const struct kapi *k, char *hdr, size_t size, char *why, size_t whysize)
{
	char tok[4096];
	size_t n;
	FILE *f;

	hdr[0] = '\0';
	if (streq(k->token_file, "none"))
		return 0;
	f = fopen(k->token_file, "re");
	if (!f) {
		snprintf(why, whysize, "cannot read the token file %s: %s", k->token_file,
			 strerror(errno));
		return -EACCES;
	}
	n = fread(tok, 1, sizeof(tok) - 1, f);
	fclose(f);
	tok[n] = '\0';
	tok[strcspn(tok, "\r\n")] = '\0';
	if (!tok[0] || strpbrk(tok, " \t") ||
	    snprintf(hdr, size, "Authorization: Bearer %s", tok) >= (int)size) {
		snprintf(why, whysize, "the token in %s is empty or not a bearer token", k->token_file);
		return -EINVAL;
	}
	return 0;
}

int kapi_call(const struct kapi *k, const char *method, const char *path, const char *ctype,
	      const char *body, char **out, size_t *out_len, long *code, char *why, size_t whysize)
{
	char url[1024], auth[4200], ct[128];
	struct curl_slist *h = NULL, *h2;
	struct sink s = { 0 };
	CURLcode c;
	CURL *e;
	int r;

	*out = NULL;
	*code = 0;
	if ((r = bearer(k, auth, sizeof(auth), why, whysize)) < 0)
		return r;
	if (snprintf(url, sizeof(url), "%s%s", k->server, path) >= (int)sizeof(url)) {
		snprintf(why, whysize, "%s: the URL is too long", path);
		return -ENAMETOOLONG;
	}
	e = curl_easy_init();
	if (!e)
		return -ENOMEM;
	h = curl_slist_append(h, "Accept: application/json");
	if (h && auth[0] && (h2 = curl_slist_append(h, auth)))
		h = h2;
	if (h && body) {
		snprintf(ct, sizeof(ct), "Content-Type: %s", ctype);
		if ((h2 = curl_slist_append(h, ct)))
			h = h2;
	}
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(e, CURLOPT_CAINFO, k->ca_file);
	curl_easy_setopt(e, CURLOPT_TIMEOUT, k->timeout_s);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "gpuvm-dra/" GPUVM_VERSION);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https,http");
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, take);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, &s);
	if (body)
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
	c = curl_easy_perform(e);
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, code);
	curl_easy_cleanup(e);
	curl_slist_free_all(h);
	if (c != CURLE_OK) {
		snprintf(why, whysize, "%s %s: %s", method, path,
			 s.over ? "the answer is larger than 8 MiB" : curl_easy_strerror(c));
		free(s.buf);
		return s.over ? -EFBIG : -EIO;
	}
	if (!s.buf && !(s.buf = calloc(1, 1)))
		return -ENOMEM;
	*out = s.buf;
	if (out_len)
		*out_len = s.len;
	return 0;
}
