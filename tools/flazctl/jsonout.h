/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flazctl's JSON: built with json-c, so that every output is valid JSON by
 * construction. Strings pass through jstr(), which makes them valid UTF-8 first
 * (json-c escapes quotes and control characters but copies other bytes as they are).
 */
#ifndef FLAZCTL_JSONOUT_H
#define FLAZCTL_JSONOUT_H

#include <json-c/json.h>

/*
 * The version of flazctl's JSON: every object it prints at top level (or per
 * line, or per element of list's array) opens with "schema":JSON_SCHEMA. It
 * goes up when a key changes meaning or goes away; new keys do not change it.
 */
#define JSON_SCHEMA 2

/* A new object holding "schema":JSON_SCHEMA, its first key. */
struct json_object *jobj(void);

/*
 * @s as a JSON string (NULL, or memory short: JSON null), each maximal run of
 * bytes that is not well-formed UTF-8 replaced by one U+FFFD, as Python's
 * errors="replace" does.
 */
struct json_object *jstr(const char *s);

/* @text as a JSON number when it is one ("12", "2.03", as written), else jstr(@text). */
struct json_object *jnum(const char *text);

/* @v with @decimals digits after the point, as printf's %.*f writes it. */
struct json_object *jfixed(double v, int decimals);

/* Add @v (NULL: null) to object @o under @key (made valid UTF-8 as jstr() does). */
void jadd(struct json_object *o, const char *key, struct json_object *v);

/* Add the number @v to object @o under @key. */
void jadd_u64(struct json_object *o, const char *key, unsigned long long v);

/* A key and its number, for jadd_u64s(). */
struct jkv {
	const char *key;
	unsigned long long v;
};

/* Add each number of @kv, up to the pair with a NULL key, to object @o, in order. */
void jadd_u64s(struct json_object *o, const struct jkv *kv);

/* Print @o on one line of stdout and release it. */
void jput(struct json_object *o);

/*
 * For an array too long to hold in memory (dump --entries): jput_head() prints
 * object @o without its closing brace and opens member @key as an array,
 * jput_item() prints each element, jput_tail() closes the array and prints the
 * members of @rest after it, then the closing brace. Each releases what it prints.
 */
void jput_head(struct json_object *o, const char *key);
void jput_item(struct json_object *v);
void jput_tail(struct json_object *rest);

#endif
