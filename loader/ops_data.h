/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Edit the data of a collapse_ext_ops struct_ops map before it is loaded
 * (its name, flags), and attach it to a cgroup once loaded. Works on any
 * object, with or without a skeleton: the member offsets come from the
 * object's BTF.
 */
#ifndef OPS_DATA_H
#define OPS_DATA_H

#include <stdbool.h>
#include <stdint.h>
#include <bpf/libbpf.h>

#define OPS_HOOK_LEN	32

/*
 * The collapse_ext_ops struct_ops map of @obj; NULL when it has none or
 * several (how many in *@nr).
 */
struct bpf_map *ops_data_find_map(struct bpf_object *obj, int *nr);

/* Set the name of the (opened, not loaded) struct_ops @map of @obj. */
int ops_data_set_name(struct bpf_object *obj, struct bpf_map *map,
		      const char *name);
/* Set any u64 member, e.g. "flags". */
int ops_data_set_u64(struct bpf_object *obj, struct bpf_map *map,
		     const char *name, uint64_t val);
/* Copy the name into @buf (size @len); 0 or -errno. */
int ops_data_get_name(struct bpf_object *obj, struct bpf_map *map, char *buf,
		      size_t len);
/*
 * Leave out the hooks of @map that the running kernel's struct
 * collapse_ext_ops lacks (orders before 7.3): their slots are cleared, so
 * libbpf skips them and does not load their programs (the libbpf of 6.12
 * refuses a member the kernel lacks when it is set). Their names,
 * comma-separated, in @dropped (size @len). 0, or -errno when the
 * kernel's BTF cannot be read.
 */
int ops_data_drop_missing_hooks(struct bpf_object *obj, struct bpf_map *map,
				char *dropped, size_t len);
/* Has the running kernel's struct collapse_ext_ops a member @hook? */
bool ops_data_kernel_has_hook(const char *hook);

/* Does the (opened) policy of @map set its hook @hook? */
bool ops_data_has_hook(struct bpf_object *obj, struct bpf_map *map,
		       const char *hook);
/*
 * The hooks the (opened) policy of @map sets, as its object's BTF names
 * them, in @names: how many (at most @max), or -ENOENT without BTF.
 */
int ops_data_hooks(struct bpf_object *obj, struct bpf_map *map,
		   char names[][OPS_HOOK_LEN], int max);
/*
 * Is @hook a member of struct collapse_ext_ops on a collapse_ext kernel?
 * *@only names the one base that has it when the other lacks it (NULL:
 * every base).
 */
bool ops_hook_known(const char *hook, const char **only);
/* Leave the hook @hook of the (opened) policy of @map out; 0 or -ENOENT. */
int ops_data_drop_hook(struct bpf_object *obj, struct bpf_map *map,
		       const char *hook);

/*
 * An O_RDONLY fd of the cgroup v2 of id @cgroup_id (0: the root), or
 * -errno: opened by file handle, which takes CAP_DAC_READ_SEARCH (the
 * tests; collapsectl opens cgroups by path).
 */
int ops_cgroup_fd(uint64_t cgroup_id);
/*
 * Attach the loaded struct_ops @map to the cgroup v2 of id @cgroup_id (0:
 * the root) through a struct_ops link created with BPF_F_CGROUP_FD and
 * @flags (BPF_F_ALLOW_OVERRIDE: policies below it may override it). NULL
 * with errno set on failure.
 */
struct bpf_link *ops_attach_cgroup(const struct bpf_map *map,
				   uint64_t cgroup_id, uint32_t flags);
/* ops_attach_cgroup() to the cgroup v2 directory open at @cgroup_fd */
struct bpf_link *ops_attach_cgroup_fd(const struct bpf_map *map,
				      int cgroup_fd, uint32_t flags);

/*
 * The hooks of the running kernel's collapse_ext_ops (its function
 * pointer members, in order) in @names: how many, or -ENOENT when the
 * kernel has no collapse_ext, -errno without its BTF.
 */
int ops_data_kernel_hooks(char names[][OPS_HOOK_LEN], int max);

#endif
