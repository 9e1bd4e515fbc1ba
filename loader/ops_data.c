// SPDX-License-Identifier: GPL-2.0
/* Edit a collapse_ext_ops map's data before load; see ops_data.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* open_by_handle_at() */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "ops_data.h"

/* bpf-next's cgroup struct_ops attach, where the uapi headers predate it */
#ifndef BPF_F_CGROUP_FD
#define BPF_F_CGROUP_FD		(1U << 7)
#endif
/* cgroup v2 directories are opened by id as kernfs file handles */
#define CGROUP_MOUNT		"/sys/fs/cgroup"
#define FILEID_KERNFS		0xfe

#define OPS_TYPE "collapse_ext_ops"

/*
 * Is @name struct collapse_ext_ops, or a CO-RE flavor of it
 * (collapse_ext_ops___all_hooks of collapse_ext.bpf.h)?
 */
static bool ops_type_name(const char *name)
{
	size_t len = strlen(OPS_TYPE);

	return !strncmp(name, OPS_TYPE, len) &&
	       (!name[len] || !strncmp(name + len, "___", 3));
}

struct bpf_map *ops_data_find_map(struct bpf_object *obj, int *nr)
{
	const struct btf *btf = bpf_object__btf(obj);
	struct bpf_map *map, *found = NULL;

	*nr = 0;
	if (!btf)
		return NULL;
	bpf_object__for_each_map(map, obj) {
		const struct btf_type *t;

		if (bpf_map__type(map) != BPF_MAP_TYPE_STRUCT_OPS)
			continue;
		t = btf__type_by_id(btf, bpf_map__btf_value_type_id(map));
		if (t && ops_type_name(btf__name_by_offset(btf, t->name_off))) {
			found = found ?: map;
			(*nr)++;
		}
	}
	return *nr == 1 ? found : NULL;
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

/* Is there a member @name in struct @t of @btf? */
static bool has_member(const struct btf *btf, const struct btf_type *t,
		       const char *name)
{
	const struct btf_member *m = btf_members(t);
	unsigned int i;

	for (i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), name))
			return true;
	return false;
}

int ops_data_drop_missing_hooks(struct bpf_object *obj, struct bpf_map *map,
				char *dropped, size_t len)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_type *t, *kt;
	const struct btf_member *m;
	struct btf *vmlinux;
	unsigned int i;
	size_t used = 0;
	int kid;

	dropped[0] = 0;
	if (!btf)
		return -ENOENT;
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux)
		return -errno;
	kid = btf__find_by_name_kind(vmlinux, OPS_TYPE, BTF_KIND_STRUCT);
	/* a kernel without collapse_ext: the load says so */
	kt = kid > 0 ? btf__type_by_id(vmlinux, kid) : NULL;
	t = btf__type_by_id(btf, bpf_map__btf_value_type_id(map));
	for (i = 0, m = t ? btf_members(t) : NULL; kt && i < btf_vlen(t); i++, m++) {
		const char *name = btf__name_by_offset(btf, m->name_off);
		const struct btf_type *mt = btf__type_by_id(btf, m->type);
		size_t size;
		void **slot;

		/* hooks only: function pointers */
		if (!btf_is_ptr(mt) || has_member(vmlinux, kt, name))
			continue;
		mt = btf__type_by_id(btf, mt->type);
		if (!mt || !btf_is_func_proto(mt))
			continue;
		slot = member_ptr(obj, map, name, &size);
		if (!slot || size != sizeof(*slot) || !*slot)
			continue;
		*slot = NULL;
		used += snprintf(dropped + used, used < len ? len - used : 0,
				 "%s%s", used ? "," : "", name);
	}
	btf__free(vmlinux);
	return 0;
}

bool ops_data_kernel_has_hook(const char *hook)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	const struct btf_type *kt;
	bool found;
	int kid;

	if (!vmlinux)
		return false;
	kid = btf__find_by_name_kind(vmlinux, OPS_TYPE, BTF_KIND_STRUCT);
	kt = kid > 0 ? btf__type_by_id(vmlinux, kid) : NULL;
	found = kt && has_member(vmlinux, kt, hook);
	btf__free(vmlinux);
	return found;
}

int ops_data_kernel_hooks(char names[][OPS_HOOK_LEN], int max)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	const struct btf_member *m;
	const struct btf_type *kt;
	unsigned int i;
	int kid, n = 0;

	if (!vmlinux)
		return -errno;
	kid = btf__find_by_name_kind(vmlinux, OPS_TYPE, BTF_KIND_STRUCT);
	kt = kid > 0 ? btf__type_by_id(vmlinux, kid) : NULL;
	if (!kt) {
		btf__free(vmlinux);
		return -ENOENT;
	}
	for (i = 0, m = btf_members(kt); i < btf_vlen(kt); i++, m++) {
		const struct btf_type *mt = btf__type_by_id(vmlinux, m->type);

		/* hooks only: function pointers */
		if (!mt || !btf_is_ptr(mt))
			continue;
		mt = btf__type_by_id(vmlinux, mt->type);
		if (!mt || !btf_is_func_proto(mt) || n >= max)
			continue;
		snprintf(names[n++], OPS_HOOK_LEN, "%s",
			 btf__name_by_offset(vmlinux, m->name_off));
	}
	btf__free(vmlinux);
	return n;
}

bool ops_data_has_hook(struct bpf_object *obj, struct bpf_map *map,
		       const char *hook)
{
	size_t size;
	void **slot = member_ptr(obj, map, hook, &size);

	return slot && size == sizeof(*slot) && *slot;
}

int ops_data_hooks(struct bpf_object *obj, struct bpf_map *map,
		   char names[][OPS_HOOK_LEN], int max)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_type *t;
	const struct btf_member *m;
	unsigned int i;
	int n = 0;

	t = btf ? btf__type_by_id(btf, bpf_map__btf_value_type_id(map)) : NULL;
	if (!t)
		return -ENOENT;
	for (i = 0, m = btf_members(t); i < btf_vlen(t); i++, m++) {
		const char *name = btf__name_by_offset(btf, m->name_off);
		const struct btf_type *mt = btf__type_by_id(btf, m->type);

		if (!mt || !btf_is_ptr(mt) || !ops_data_has_hook(obj, map, name))
			continue;
		mt = btf__type_by_id(btf, mt->type);
		if (!mt || !btf_is_func_proto(mt) || n == max)
			continue;
		snprintf(names[n++], OPS_HOOK_LEN, "%s", name);
	}
	return n;
}

int ops_data_drop_hook(struct bpf_object *obj, struct bpf_map *map,
		       const char *hook)
{
	size_t size;
	void **slot = member_ptr(obj, map, hook, &size);

	if (!slot || size != sizeof(*slot))
		return -ENOENT;
	*slot = NULL;
	return 0;
}

int ops_cgroup_fd(uint64_t cgroup_id)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = {
		.fh.handle_bytes = sizeof(uint64_t),
		.fh.handle_type = FILEID_KERNFS,
		.id = cgroup_id,
	};
	int mnt, fd, err;

	mnt = open(CGROUP_MOUNT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mnt < 0 || !cgroup_id)
		return mnt < 0 ? -errno : mnt;
	fd = open_by_handle_at(mnt, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = errno;
	close(mnt);
	/* ESTALE: no such cgroup (any more) */
	return fd < 0 ? -(err == ESTALE ? ENOENT : err) : fd;
}

struct bpf_link *ops_attach_cgroup_fd(const struct bpf_map *map,
				      int cgroup_fd, uint32_t flags)
{
	LIBBPF_OPTS(bpf_struct_ops_opts, opts,
		    .flags = BPF_F_CGROUP_FD | flags,
		    .target_fd = cgroup_fd);

	return bpf_map__attach_struct_ops_opts(map, &opts);
}

struct bpf_link *ops_attach_cgroup(const struct bpf_map *map,
				   uint64_t cgroup_id, uint32_t flags)
{
	struct bpf_link *link;
	int fd, err;

	fd = ops_cgroup_fd(cgroup_id);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	link = ops_attach_cgroup_fd(map, fd, flags);
	err = errno;
	close(fd);
	errno = err;
	return link;
}

/*
 * The hooks of struct collapse_ext_ops (bpf-progs/collapse_ext_types.h),
 * with the one base that has a hook the other lacks.
 */
static const struct {
	const char *name;
	const char *only;
} ops_hooks[] = {
	{ "pte_limits", NULL }, { "target_node", NULL }, { "batch_size", NULL },
	{ "scan_budget", NULL }, { "pass_size", NULL }, { "orders", "7.3" },
	{ "collapsed", NULL }, { "split_underused", NULL }, { "init", NULL },
	{ "exit", NULL },
};

bool ops_hook_known(const char *hook, const char **only)
{
	size_t i;

	*only = NULL;
	for (i = 0; i < sizeof(ops_hooks) / sizeof(ops_hooks[0]); i++) {
		if (!strcmp(hook, ops_hooks[i].name)) {
			*only = ops_hooks[i].only;
			return true;
		}
	}
	return false;
}
