// SPDX-License-Identifier: GPL-2.0
/* Edit a collapse_ext_ops map's data before load; see ops_data.h. */
#include <errno.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "ops_data.h"

#define OPS_TYPE "collapse_ext_ops"

struct bpf_map *ops_data_find_map(struct bpf_object *obj)
{
	const struct btf *btf = bpf_object__btf(obj);
	struct bpf_map *map;

	if (!btf)
		return NULL;
	bpf_object__for_each_map(map, obj) {
		const struct btf_type *t;

		if (bpf_map__type(map) != BPF_MAP_TYPE_STRUCT_OPS)
			continue;
		t = btf__type_by_id(btf, bpf_map__btf_value_type_id(map));
		if (t && !strcmp(btf__name_by_offset(btf, t->name_off), OPS_TYPE))
			return map;
	}
	return NULL;
}

/* Offset and size of member @name of the map's value type. */
static int member(struct bpf_object *obj, struct bpf_map *map,
		  const char *name, size_t *off, size_t *size)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_type *t;
	const struct btf_member *m;
	unsigned int i;	/* btf_vlen() is __u16 in 6.12's libbpf, __u32 in 7.3's */

	if (!btf)
		return -ENOENT;
	t = btf__type_by_id(btf, bpf_map__btf_value_type_id(map));
	if (!t || !btf_is_struct(t))
		return -EINVAL;
	for (i = 0, m = btf_members(t); i < btf_vlen(t); i++, m++) {
		if (strcmp(btf__name_by_offset(btf, m->name_off), name))
			continue;
		if (btf_member_bitfield_size(t, i))
			return -EINVAL;
		*off = btf_member_bit_offset(t, i) / 8;
		*size = btf__resolve_size(btf, m->type);
		return 0;
	}
	return -ENOENT;
}

/* The map's data and the address of member @name in it. */
static void *member_ptr(struct bpf_object *obj, struct bpf_map *map,
			const char *name, size_t *size)
{
	size_t off, data_size;
	char *data;
	int err;

	err = member(obj, map, name, &off, size);
	if (err) {
		errno = -err;
		return NULL;
	}
	data = bpf_map__initial_value(map, &data_size);
	if (!data || off + *size > data_size) {
		errno = EINVAL;
		return NULL;
	}
	return data + off;
}

int ops_data_set_u64(struct bpf_object *obj, struct bpf_map *map,
		     const char *name, uint64_t val)
{
	size_t size;
	void *p = member_ptr(obj, map, name, &size);

	if (!p)
		return -errno;
	if (size != sizeof(val))
		return -EINVAL;
	memcpy(p, &val, sizeof(val));
	return 0;
}

int ops_data_set_cgroup_id(struct bpf_object *obj, struct bpf_map *map,
			   uint64_t cgroup_id)
{
	return ops_data_set_u64(obj, map, "cgroup_id", cgroup_id);
}

int ops_data_set_name(struct bpf_object *obj, struct bpf_map *map,
		      const char *name)
{
	size_t size;
	char *p = member_ptr(obj, map, "name", &size);

	if (!p)
		return -errno;
	if (strlen(name) >= size)
		return -ENAMETOOLONG;
	memset(p, 0, size);
	memcpy(p, name, strlen(name));
	return 0;
}

int ops_data_get_name(struct bpf_object *obj, struct bpf_map *map, char *buf,
		      size_t len)
{
	size_t size;
	char *p = member_ptr(obj, map, "name", &size);

	if (!p)
		return -errno;
	if (!len)
		return -EINVAL;
	size = size < len - 1 ? size : len - 1;
	memcpy(buf, p, size);
	buf[size] = 0;
	return 0;
}
