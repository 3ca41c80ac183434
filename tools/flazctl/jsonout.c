// SPDX-License-Identifier: GPL-2.0
/*
 * flazctl's JSON through json-c: strings made valid UTF-8, numbers kept as they
 * are written, one line per printed object.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flazctl.h"
#include "jsonout.h"

#define FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

static bool items;	/* jput_item() has printed an element of the open array */

/*
 * The length of the well-formed UTF-8 sequence at @s (Unicode 15, table 3-7), or 0
 * with *@bad the length of its maximal ill-formed subpart (at least 1).
 */
static size_t utf8_len(const unsigned char *s, size_t *bad)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		lo = s[0] == 0xe0 ? 0xa0 : 0x80;	/* no overlong form */
		hi = s[0] == 0xed ? 0x9f : 0xbf;	/* no surrogate */
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		lo = s[0] == 0xf0 ? 0x90 : 0x80;
		hi = s[0] == 0xf4 ? 0x8f : 0xbf;	/* nothing past U+10FFFF */
	} else {
		*bad = 1;
		return 0;
	}
	/* the NUL at the end is out of every range: no read past it */
	for (i = 1; i < n; i++, lo = 0x80, hi = 0xbf) {
		if (s[i] < lo || s[i] > hi) {
			*bad = i;
			return 0;
		}
	}
	return n;
}

/*
 * @s made valid UTF-8: @s itself when it is, else a malloc'ed copy with U+FFFD for
 * each bad run, or NULL when memory is short (never the bytes as they are).
 */
static const char *utf8_fixed(const char *s)
{
	const unsigned char *c = (const unsigned char *)s;
	size_t len = strlen(s), i = 0, n, bad;
	char *out, *o;

	while (i < len && (n = utf8_len(c + i, &bad)))
		i += n;
	if (i == len)
		return s;
	out = malloc(3 * len + 1);	/* a bad byte becomes at most 3 bytes */
	if (!out)
		return NULL;
	memcpy(out, s, i);
	o = out + i;
	while (i < len) {
		n = utf8_len(c + i, &bad);
		if (n) {
			memcpy(o, c + i, n);
			o += n;
			i += n;
			continue;
		}
		memcpy(o, "\xef\xbf\xbd", 3);	/* U+FFFD */
		o += 3;
		i += bad;
	}
	*o = '\0';
	return out;
}

struct json_object *jobj(void)
{
	struct json_object *o = json_object_new_object();

	jadd(o, "schema", json_object_new_int(JSON_SCHEMA));
	return o;
}

struct json_object *jstr(const char *s)
{
	struct json_object *v;
	const char *fixed;

	if (!s)
		return NULL;
	fixed = utf8_fixed(s);
	if (!fixed)
		return NULL;	/* memory is short: null, not invalid JSON */
	v = json_object_new_string(fixed);
	if (fixed != s)
		free((char *)fixed);
	return v;
}

/* Whether @s is a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool is_number(const char *s)
{
	size_t n;

	s += *s == '-';
	n = strspn(s, "0123456789");
	if (!n || (s[0] == '0' && n > 1))
		return false;
	s += n;
	if (*s == '.') {
		n = strspn(++s, "0123456789");
		if (!n)
			return false;
		s += n;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		s += *s == '+' || *s == '-';
		n = strspn(s, "0123456789");
		if (!n)
			return false;
		s += n;
	}
	return !*s;
}

struct json_object *jnum(const char *text)
{
	unsigned long long u;
	char *end;

	if (!is_number(text))
		return jstr(text);
	if (text[0] != '-' && strspn(text, "0123456789") == strlen(text)) {
		errno = 0;
		u = strtoull(text, &end, 10);
		if (!errno)
			return json_object_new_uint64(u);
	}
	/* a fraction, or an integer past 64 bits: the value as written */
	return json_object_new_double_s(strtod(text, NULL), text);
}

struct json_object *jfixed(double v, int decimals)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	return jnum(buf);
}

void jadd(struct json_object *o, const char *key, struct json_object *v)
{
	const char *fixed = utf8_fixed(key);

	json_object_object_add(o, fixed ? fixed : "\xef\xbf\xbd", v);
	if (fixed != key)
		free((char *)fixed);
}

void jadd_u64(struct json_object *o, const char *key, unsigned long long v)
{
	jadd(o, key, json_object_new_uint64(v));
}

void jadd_u64s(struct json_object *o, const struct jkv *kv)
{
	for (; kv->key; kv++)
		jadd_u64(o, kv->key, kv->v);
}

/* @o's text, or a message and NULL when memory is short. */
static const char *text(struct json_object *o)
{
	const char *t = json_object_to_json_string_ext(o, FLAGS);

	if (!t)
		fail(EXIT_FAIL, "out of memory");
	return t;
}

void jput(struct json_object *o)
{
	const char *t = text(o);

	if (t)
		puts(t);
	json_object_put(o);
}

void jput_head(struct json_object *o, const char *key)
{
	struct json_object *k = json_object_new_string(key);
	const char *t = text(o), *kt = text(k);

	/* the object's text ends with its closing brace */
	if (t && kt)
		printf("%.*s,%s:[", (int)strlen(t) - 1, t, kt);
	json_object_put(o);
	json_object_put(k);
	items = false;
}

void jput_item(struct json_object *v)
{
	const char *t = text(v);

	if (t)
		printf("%s%s", items ? "," : "", t);
	items = true;
	json_object_put(v);
}

void jput_tail(struct json_object *rest)
{
	const char *t = text(rest);

	/* the members after the array: @rest's text without its opening brace */
	if (t)
		printf("]%s%s\n", json_object_object_length(rest) ? "," : "", t + 1);
	json_object_put(rest);
}
