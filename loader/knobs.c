// SPDX-License-Identifier: GPL-2.0
/*
 * Knobs: a policy's settings changed at load, without rebuilding it.
 * A knob is a `const volatile` global of the object (its .rodata, which
 * the verifier sees as constants once loaded) or the ops' "flags"; its
 * new value is written into the object between open and load, through
 * the object's BTF, which gives each variable's offset, size and type.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "collapsectl.h"
#include "ops_data.h"

#define NO_YIELD	1	/* COLLAPSE_EXT_OPS_NO_YIELD */

int knobs_add(struct knobs *k, const char *arg, char *why, size_t wlen)
{
	const char *eq = strchr(arg, '=');
	size_t n = eq ? (size_t)(eq - arg) : 0;
	int i;

	if (!eq || !n || n >= sizeof(k->k[0].var) || !eq[1] ||
	    strlen(eq + 1) >= sizeof(k->k[0].val))
		return snprintf(why, wlen, "a knob is VAR=VALUE (VAR up to %zu "
				"characters, VALUE up to %zu), not '%s'",
				sizeof(k->k[0].var) - 1, sizeof(k->k[0].val) - 1,
				arg), -EINVAL;
	for (i = 0; i < (int)n; i++)
		if (!(arg[i] == '_' || (arg[i] >= 'a' && arg[i] <= 'z') ||
		      (arg[i] >= 'A' && arg[i] <= 'Z') ||
		      (i && arg[i] >= '0' && arg[i] <= '9')))
			return snprintf(why, wlen, "'%.*s' is not a variable name "
					"(in '%s')", (int)n, arg, arg), -EINVAL;
	for (i = 0; i < k->n; i++)
		if (!strncmp(k->k[i].var, arg, n) && !k->k[i].var[n])
			return snprintf(why, wlen, "knob '%.*s' is set twice",
					(int)n, arg), -EINVAL;
	if (k->n == MAX_KNOBS)
		return snprintf(why, wlen, "at most %d knobs", MAX_KNOBS), -E2BIG;
	snprintf(k->k[k->n].var, sizeof(k->k[0].var), "%.*s", (int)n, arg);
	snprintf(k->k[k->n].val, sizeof(k->k[0].val), "%s", eq + 1);
	k->n++;
	return 0;
}

int knobs_option(struct knobs *k, const char *arg)
{
	char why[256];

	if (!knobs_add(k, arg, why, sizeof(why)))
		return 0;
	fail("--set: %s", why);
	return 2;
}

/* FNV-1a of every VAR=VALUE in order, folded into @h */
uint64_t knobs_hash(const struct knobs *k, uint64_t h)
{
	for (int i = 0; k && i < k->n; i++) {
		const char *s[] = { k->k[i].var, "=", k->k[i].val, ";" };

		for (size_t j = 0; j < 4; j++)
			for (const char *c = s[j]; *c; c++)
				h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
	}
	return h;
}

/* Parse @s as an integer of @size bytes, signed or not, into *@v. */
static int parse_int(const char *s, size_t size, bool is_signed, uint64_t *v)
{
	int bits = size * 8;
	char *end;

	errno = 0;
	if (is_signed) {
		long long x = strtoll(s, &end, 0);
		long long max = bits == 64 ? LLONG_MAX : (1LL << (bits - 1)) - 1;

		if (errno || end == s || *end || x > max || x < -max - 1)
			return -ERANGE;
		*v = (uint64_t)x;
	} else {
		unsigned long long x = strtoull(s, &end, 0);

		if (errno || end == s || *end || s[strspn(s, " \t")] == '-' ||
		    (bits < 64 && x >> bits))
			return -ERANGE;
		*v = x;
	}
	return 0;
}

static const struct btf_type *skip_mods(const struct btf *btf, __u32 *id)
{
	const struct btf_type *t = btf__type_by_id(btf, *id);

	while (t && (btf_is_mod(t) || btf_is_typedef(t))) {
		*id = t->type;
		t = btf__type_by_id(btf, *id);
	}
	return t;
}

/* The value of @val for a variable of BTF type @id: an int, bool or enum */
static int knob_value(const struct btf *btf, __u32 id, const char *val,
		      uint64_t *v, size_t *size, char *why, size_t wlen)
{
	const struct btf_type *t = skip_mods(btf, &id);
	unsigned int i;	/* btf_vlen() is __u16 in 6.12's libbpf, __u32 in 7.3's */

	if (!t)
		return -EINVAL;
	if (btf_is_int(t)) {
		__u8 enc = btf_int_encoding(t);

		*size = t->size;
		if (enc & BTF_INT_BOOL) {
			if (!strcmp(val, "true") || !strcmp(val, "1"))
				*v = 1;
			else if (!strcmp(val, "false") || !strcmp(val, "0"))
				*v = 0;
			else
				return snprintf(why, wlen, "true or false"), -ERANGE;
			return 0;
		}
		if (parse_int(val, t->size, enc & BTF_INT_SIGNED, v))
			return snprintf(why, wlen, "a%s %zu-bit integer",
					enc & BTF_INT_SIGNED ? " signed" : "n unsigned",
					*size * 8), -ERANGE;
		return 0;
	}
	if (btf_is_enum(t)) {
		const struct btf_enum *e = btf_enum(t);

		*size = t->size;
		for (i = 0; i < btf_vlen(t); i++, e++) {
			if (!strcmp(btf__name_by_offset(btf, e->name_off), val)) {
				*v = (uint64_t)(int64_t)e->val;
				return 0;
			}
		}
		if (!parse_int(val, t->size, true, v))
			return 0;
		return snprintf(why, wlen, "one of the enum's names or a number"),
		       -ERANGE;
	}
	return snprintf(why, wlen, "an integer, bool or enum variable"), -EINVAL;
}

/* The object's .rodata map and its BTF section, or NULL. */
static struct bpf_map *rodata(struct bpf_object *obj, const struct btf_type **sec)
{
	const struct btf *btf = bpf_object__btf(obj);
	struct bpf_map *map;
	__s32 id;

	*sec = NULL;
	if (!btf)
		return NULL;
	id = btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC);
	if (id < 0)
		return NULL;
	*sec = btf__type_by_id(btf, id);
	bpf_object__for_each_map(map, obj) {
		const char *name = bpf_map__name(map);
		size_t n = strlen(name);

		if (bpf_map__is_internal(map) && n >= 7 &&
		    !strcmp(name + n - 7, ".rodata"))
			return map;
	}
	return NULL;
}

/* ", a, b": the knobs this object has, for an error message */
static void list_knobs(const struct btf *btf, const struct btf_type *sec,
		       char *buf, size_t len)
{
	const struct btf_var_secinfo *vs = sec ? btf_var_secinfos(sec) : NULL;
	size_t off = 0;
	unsigned int i;

	buf[0] = 0;
	for (i = 0; sec && i < btf_vlen(sec) && off < len; i++, vs++) {
		const struct btf_type *var = btf__type_by_id(btf, vs->type);

		if (var && btf_is_var(var))
			off += snprintf(buf + off, len - off, ", %s",
					btf__name_by_offset(btf, var->name_off));
	}
}

static int set_flags(struct bpf_object *obj, struct bpf_map *ops,
		     const char *file, const char *val)
{
	uint64_t v;

	if (!strcmp(val, "NO_YIELD") || !strcmp(val, "COLLAPSE_EXT_OPS_NO_YIELD"))
		v = NO_YIELD;
	else if (parse_int(val, 8, false, &v) || (v & ~(uint64_t)NO_YIELD))
		return fail("%s: flags=%s: the flags are 0 or NO_YIELD (1)", file, val);
	if (ops_data_set_u64(obj, ops, "flags", v))
		return fail("%s: its collapse_ext_ops has no u64 'flags'", file);
	return 0;
}

int knobs_apply(struct bpf_object *obj, struct bpf_map *ops, const char *file,
		const struct knobs *k)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_type *sec;
	struct bpf_map *map = NULL;
	char why[64], names[256];
	size_t data_size = 0;
	char *data = NULL;
	unsigned int j;
	int i;

	for (i = 0; k && i < k->n; i++) {
		const char *var = k->k[i].var, *val = k->k[i].val;
		const struct btf_var_secinfo *vs;
		uint64_t v;
		size_t size;

		if (!strcmp(var, "flags")) {
			if (set_flags(obj, ops, file, val))
				return 1;
			continue;
		}
		if (!map) {
			map = rodata(obj, &sec);
			data = map ? bpf_map__initial_value(map, &data_size) : NULL;
		}
		vs = sec ? btf_var_secinfos(sec) : NULL;
		for (j = 0; sec && j < btf_vlen(sec); j++, vs++) {
			const struct btf_type *t = btf__type_by_id(btf, vs->type);

			if (t && btf_is_var(t) &&
			    !strcmp(btf__name_by_offset(btf, t->name_off), var))
				break;
		}
		if (!data || !sec || j == btf_vlen(sec)) {
			list_knobs(btf, data ? sec : NULL, names, sizeof(names));
			return fail("%s: no knob '%s': the knobs are flags%s (a "
				    "policy's const volatile globals)", file, var,
				    names);
		}
		if (knob_value(btf, btf__type_by_id(btf, vs->type)->type, val, &v,
			       &size, why, sizeof(why)))
			return fail("%s: %s=%s: the value must be %s", file, var,
				    val, why);
		if (size != vs->size || vs->offset + size > data_size)
			return fail("%s: knob '%s' has an unexpected layout", file, var);
		/* little-endian: the low bytes of v (x86-64, the only target) */
		memcpy(data + vs->offset, &v, size);
	}
	return 0;
}

void knobs_print(FILE *f, const struct knobs *k)
{
	for (int i = 0; k && i < k->n; i++)
		fprintf(f, " %s=%s", k->k[i].var, k->k[i].val);
}

/* @t's type in words, and its range, for a knob of BTF type @t */
static void describe_type(const struct btf *btf, const struct btf_type *t,
			  struct knob_desc *d)
{
	unsigned int i;

	if (btf_is_int(t)) {
		__u8 enc = btf_int_encoding(t);
		int bits = t->size * 8;

		if (enc & BTF_INT_BOOL) {
			snprintf(d->type, sizeof(d->type), "bool");
			snprintf(d->range, sizeof(d->range), "true, false");
		} else if (enc & BTF_INT_SIGNED) {
			snprintf(d->type, sizeof(d->type), "s%d", bits);
			snprintf(d->range, sizeof(d->range), "%lld..%lld",
				 bits == 64 ? LLONG_MIN : -(1LL << (bits - 1)),
				 bits == 64 ? LLONG_MAX : (1LL << (bits - 1)) - 1);
		} else {
			snprintf(d->type, sizeof(d->type), "u%d", bits);
			snprintf(d->range, sizeof(d->range), "0..%llu",
				 bits == 64 ? ULLONG_MAX : (1ULL << bits) - 1);
		}
		return;
	}
	if (btf_is_enum(t)) {
		const struct btf_enum *e = btf_enum(t);
		size_t off = 0;

		snprintf(d->type, sizeof(d->type), "enum");
		for (i = 0; i < btf_vlen(t) && off < sizeof(d->range); i++, e++)
			off += snprintf(d->range + off, sizeof(d->range) - off,
					"%s%s", i ? ", " : "",
					btf__name_by_offset(btf, e->name_off));
		return;
	}
	snprintf(d->type, sizeof(d->type), "?");
}

/* The knob's value in @data as its type shows it */
static void describe_value(const struct btf *btf, const struct btf_type *t,
			   const char *data, size_t size, struct knob_desc *d)
{
	int64_t sv = 0;
	uint64_t v = 0;
	unsigned int i;

	/* little-endian (x86-64, the only target) */
	memcpy(&v, data, size < sizeof(v) ? size : sizeof(v));
	if (size < sizeof(v) && (btf_is_enum(t) ||
	    (btf_is_int(t) && (btf_int_encoding(t) & BTF_INT_SIGNED))) &&
	    (v >> (size * 8 - 1)) & 1)
		v |= ~0ULL << (size * 8);
	sv = (int64_t)v;
	if (btf_is_int(t) && (btf_int_encoding(t) & BTF_INT_BOOL)) {
		snprintf(d->dflt, sizeof(d->dflt), "%s", v ? "true" : "false");
	} else if (btf_is_enum(t)) {
		const struct btf_enum *e = btf_enum(t);

		snprintf(d->dflt, sizeof(d->dflt), "%lld", (long long)sv);
		for (i = 0; i < btf_vlen(t); i++, e++)
			if (e->val == sv)
				snprintf(d->dflt, sizeof(d->dflt), "%s",
					 btf__name_by_offset(btf, e->name_off));
	} else if (btf_is_int(t) && (btf_int_encoding(t) & BTF_INT_SIGNED)) {
		snprintf(d->dflt, sizeof(d->dflt), "%lld", (long long)sv);
	} else {
		snprintf(d->dflt, sizeof(d->dflt), "%llu", (unsigned long long)v);
	}
}

int knobs_describe(struct bpf_object *obj, struct knob_desc *out, int max)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec;
	struct bpf_map *map = rodata(obj, &sec);
	size_t data_size = 0;
	const char *data;
	unsigned int i;
	int n = 0;

	data = map ? bpf_map__initial_value(map, &data_size) : NULL;
	if (!data || !sec)
		return 0;
	vs = btf_var_secinfos(sec);
	for (i = 0; i < btf_vlen(sec) && n < max; i++, vs++) {
		const struct btf_type *var = btf__type_by_id(btf, vs->type), *t;
		struct knob_desc *d = &out[n];
		__u32 id;

		if (!var || !btf_is_var(var) || vs->offset + vs->size > data_size)
			continue;
		id = var->type;
		t = skip_mods(btf, &id);
		if (!t)
			continue;
		memset(d, 0, sizeof(*d));
		snprintf(d->name, sizeof(d->name), "%s",
			 btf__name_by_offset(btf, var->name_off));
		describe_type(btf, t, d);
		describe_value(btf, t, data + vs->offset, vs->size, d);
		n++;
	}
	return n;
}
