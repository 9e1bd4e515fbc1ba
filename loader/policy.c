// SPDX-License-Identifier: GPL-2.0
/* collapsectl: opening, loading, attaching, pinning and swapping policies. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <syslog.h>
#include <linux/magic.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "collapsectl.h"
#include "ops_data.h"

#ifndef EM_BPF
#define EM_BPF 247
#endif

void pin_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, PIN_DIR "/%s", name);
}

/*
 * libbpf's own message for a file that is not a BPF object is a parse
 * error deep in its ELF code; say what it is before libbpf looks.
 */
static int check_bpf_elf(const char *file)
{
	Elf64_Ehdr eh;
	ssize_t n;
	int fd = open(file, O_RDONLY);

	if (fd < 0)
		return fail("%s: %s", file, strerror(errno));
	n = read(fd, &eh, sizeof(eh));
	close(fd);
	if (n < 0)
		return fail("%s: %s", file, strerror(errno));
	if (n < (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return fail("%s: not a BPF object file (not ELF; build policies "
			    "with clang -target bpf)", file);
	/* e_machine is in the object's byte order: bpfel or bpfeb */
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    (eh.e_machine != EM_BPF && eh.e_machine != __builtin_bswap16(EM_BPF)))
		return fail("%s: not a BPF object file (an ELF file for machine "
			    "%u; build policies with clang -target bpf)", file,
			    eh.e_machine);
	return 0;
}

/* libbpf output, kept to show the tail of a verifier log on failure. */
static char bpf_log[1 << 20];
static size_t bpf_log_len;

static int log_print(enum libbpf_print_level level, const char *fmt,
		     va_list ap)
{
	if (verbose) {
		va_list copy;

		va_copy(copy, ap);
		vfprintf(stderr, fmt, copy);
		va_end(copy);
	}
	if (level == LIBBPF_DEBUG)
		return 0;
	if (bpf_log_len < sizeof(bpf_log) - 1) {
		int n = vsnprintf(bpf_log + bpf_log_len,
				  sizeof(bpf_log) - bpf_log_len, fmt, ap);

		if (n > 0)
			bpf_log_len += n;
		if (bpf_log_len > sizeof(bpf_log) - 1)
			bpf_log_len = sizeof(bpf_log) - 1;
	}
	return 0;
}

/* The last @lines lines of what libbpf printed, indented. */
static void print_log_tail(int lines)
{
	char *p = bpf_log + bpf_log_len;
	int seen = 0;

	if (verbose)	/* -d printed all of it as it came */
		return;
	while (p > bpf_log && seen <= lines)
		if (*--p == '\n')
			seen++;
	if (*p == '\n')
		p++;
	if (*p)
		fprintf(stderr, "  ... last lines of the libbpf/verifier log:\n");
	while (*p) {
		char *nl = strchr(p, '\n');
		int len = nl ? nl - p : (int)strlen(p);

		fprintf(stderr, "  | %.*s\n", len, p);
		p += len + (nl ? 1 : 0);
	}
}

/* Where a bare policy name ("priority") is looked for, in order. */
static const char * const policy_dirs[] = {
	"/usr/lib/collapse_ext/bpf",
	"/usr/share/collapse_ext/bpf",
};

int policy_find(const char *spec, const char *dir, char *out)
{
	char buf[PATH_MAX];
	size_t i, n = strlen(spec);
	bool is_file = n > 2 && !strcmp(spec + n - 2, ".o");

	/* A path, or a file in @dir */
	if (spec[0] == '/')
		snprintf(buf, sizeof(buf), "%s", spec);
	else
		snprintf(buf, sizeof(buf), "%s/%s", dir, spec);
	if (strchr(spec, '/') || (is_file && !access(buf, F_OK)))
		return realpath(buf, out) ? 0 : -errno;
	/* An installed policy */
	for (i = 0; i < sizeof(policy_dirs) / sizeof(policy_dirs[0]); i++) {
		snprintf(buf, sizeof(buf), "%s/%s%s", policy_dirs[i], spec,
			 is_file ? "" : ".bpf.o");
		if (!access(buf, R_OK))
			return realpath(buf, out) ? 0 : -errno;
	}
	return -ENOENT;
}

int policy_object_arg(const char *spec, char *out)
{
	int err = policy_find(spec, ".", out);

	if (!err)
		return 0;
	if (strchr(spec, '/') || strstr(spec, ".o"))
		return fail("%s: %s", spec, strerror(-err));
	return fail("%s: no such file, nor an installed policy of that name "
		    "(in /usr/lib/collapse_ext/bpf or /usr/share/collapse_ext/bpf)",
		    spec);
}

/*
 * Objects read once and kept (apply --follow): a policy is loaded from
 * the content read when the configuration was (re)loaded, not from
 * whatever is at its path by the time it is attached or swapped.
 */
#define MAX_SNAPSHOTS	MAX_POLICIES
static struct {
	char path[PATH_MAX];
	char *buf;
	size_t len;
	uint64_t hash;
} snapshots[MAX_SNAPSHOTS];
static int nr_snapshots;

static int find_snapshot(const char *path)
{
	for (int i = 0; i < nr_snapshots; i++)
		if (!strcmp(snapshots[i].path, path))
			return i;
	return -1;
}

int policy_object_snapshot(const char *path, uint64_t *hash)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	int i = find_snapshot(path), fd;
	struct stat st;
	char *buf;
	ssize_t got;
	size_t n;

	if (i >= 0) {
		*hash = snapshots[i].hash;
		return 0;
	}
	if (nr_snapshots == MAX_SNAPSHOTS)
		return -ENOSPC;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_size <= 0 || st.st_size > (64 << 20)) {
		close(fd);
		return -EFBIG;
	}
	buf = malloc(st.st_size);
	for (n = 0; buf && n < (size_t)st.st_size; n += got) {
		got = read(fd, buf + n, st.st_size - n);
		if (got <= 0)
			break;
	}
	close(fd);
	if (!buf || n != (size_t)st.st_size) {
		free(buf);
		return buf ? -EIO : -ENOMEM;
	}
	for (size_t j = 0; j < n; j++)
		h = (h ^ (unsigned char)buf[j]) * 0x100000001b3ULL;
	i = nr_snapshots++;
	snprintf(snapshots[i].path, sizeof(snapshots[i].path), "%s", path);
	snapshots[i].buf = buf;
	snapshots[i].len = n;
	snapshots[i].hash = *hash = h;
	return 0;
}

int policy_open(struct policy_obj *po, const char *file, const char *name,
		const struct knobs *knobs)
{
	char msg[128];
	int err, nr_maps, i;

	memset(po, 0, sizeof(*po));
	i = find_snapshot(file);
	/* a snapshot is opened as kept: libbpf judges it */
	if (i < 0 && check_bpf_elf(file))
		return 1;
	bpf_log_len = 0;
	bpf_log[0] = 0;
	libbpf_set_print(log_print);
	if (i >= 0) {
		LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = file);

		po->obj = bpf_object__open_mem(snapshots[i].buf, snapshots[i].len,
					       &opts);
	} else {
		po->obj = bpf_object__open_file(file, NULL);
	}
	if (!po->obj) {
		libbpf_strerror(errno, msg, sizeof(msg));
		print_log_tail(5);
		return fail("%s: not a BPF object file libbpf can open (%s)",
			    file, msg);
	}
	po->map = ops_data_find_map(po->obj, &nr_maps);
	if (!po->map) {
		policy_close(po);
		if (nr_maps)
			return fail("%s: %d struct collapse_ext_ops maps in this "
				    "object: a policy is one (put each in an "
				    "object of its own)", file, nr_maps);
		return fail("%s: no struct collapse_ext_ops map in this object "
			    "(declare one with COLLAPSE_EXT_OPS() from "
			    "collapse_ext.bpf.h)", file);
	}
	err = 0;
	if (name)
		err = ops_data_set_name(po->obj, po->map, name);
	if (!err)
		err = ops_data_get_name(po->obj, po->map, po->name,
					sizeof(po->name));
	if (err) {
		policy_close(po);
		return fail("%s: cannot set the policy's name: %s", file,
			    strerror(-err));
	}
	if (!po->name[0]) {
		policy_close(po);
		return fail("%s: the policy has an empty name (use --name)", file);
	}
	if (knobs_apply(po->obj, po->map, file, knobs)) {
		policy_close(po);
		return 1;
	}
	return 0;
}

int policy_root_only(struct policy_obj *po, const char *file)
{
	if (!ops_data_has_hook(po->obj, po->map, "pass_size"))
		return 0;
	return fail("%s: policy %s has a pass_size hook, which only a policy "
		    "on the root cgroup may have (a khugepaged pass crosses "
		    "cgroups): load it on /, or use a policy without the hook "
		    "(pace.bpf.o sizes the passes at the root)", file, po->name);
}

int policy_open_load(struct policy_obj *po, const char *file, uint64_t cgid,
		     const char *name, const struct knobs *knobs)
{
	char msg[128], dropped[256], *hook, *save;
	int err;

	if (policy_open(po, file, name, knobs))
		return 1;
	/*
	 * pass_size sizes khugepaged's pass, which crosses cgroups: the kernel
	 * refuses it below the root (EOPNOTSUPP). Say so before loading.
	 */
	if (cgid && cgid != cgroup_path_id(CGROUP_ROOT) &&
	    policy_root_only(po, file)) {
		policy_close(po);
		return 1;
	}
	err = ops_data_drop_missing_hooks(po->obj, po->map, dropped,
					  sizeof(dropped));
	if (err) {
		policy_close(po);
		return fail("%s: cannot read the kernel's BTF to check the "
			    "policy's hooks: %s", file, strerror(-err));
	}
	for (hook = strtok_r(dropped, ",", &save); hook;
	     hook = strtok_r(NULL, ",", &save))
		fprintf(stderr, "%scollapsectl: note: %s: this kernel has no "
			"collapse_ext_ops hook '%s': policy %s runs without it\n",
			journal_prio(LOG_NOTICE), file, hook, po->name);
	err = bpf_object__load(po->obj);
	if (err) {
		print_log_tail(20);
		policy_close(po);
		if (err == -ENOENT || err == -ESRCH)
			return fail("%s: the kernel does not know struct "
				    "collapse_ext_ops: boot a collapse_ext kernel",
				    file);
		libbpf_strerror(err, msg, sizeof(msg));
		return fail("%s: load failed: %s (the verifier log tail is "
			    "above)", file, msg);
	}
	libbpf_set_print(NULL);
	return 0;
}

uint32_t policy_link_flags = BPF_F_ALLOW_OVERRIDE;

struct bpf_link *policy_attach(struct policy_obj *po, const char *cgroup,
			       uint64_t cgid)
{
	struct bpf_link *link;
	char holder[32];
	int fd, err;

	fd = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		fail("cannot open cgroup %s: %s", cgroup, strerror(err));
		errno = err;
		return NULL;
	}
	link = ops_attach_cgroup_fd(po->map, fd, policy_link_flags);
	err = errno;
	close(fd);
	if (link)
		return link;
	switch (err) {
	case EBUSY:
		if (!policy_on_cgroup(cgid, holder, sizeof(holder)))
			strcpy(holder, "?");
		fail("cgroup id %llu already has a policy, '%s': unload it or "
		     "swap it (collapsectl swap %s FILE)",
		     (unsigned long long)cgid, holder, holder);
		break;
	case EEXIST:
		fail("a policy named '%s' is already attached: pick another "
		     "with --name", po->name);
		break;
	case ENOENT:
		fail("cgroup id %llu does not exist (any more)",
		     (unsigned long long)cgid);
		break;
	case EPERM:
		fail("attaching '%s' was refused: it needs CAP_SYS_ADMIN, and "
		     "no policy attached with --no-override above cgroup id "
		     "%llu%s (see collapsectl list)", po->name,
		     (unsigned long long)cgid,
		     policy_link_flags & BPF_F_ALLOW_OVERRIDE ? "" :
		     ", nor any below it while this one is --no-override");
		break;
	case ENODEV:
		fail("cgroup %s has no memory controller of its own, so no "
		     "memory is charged to it and '%s' would never be asked: "
		     "enable it in its parent (echo +memory > PARENT/"
		     "cgroup.subtree_control) or load the policy on the "
		     "parent", cgroup, po->name);
		break;
	case EOPNOTSUPP:
		fail("'%s' has a pass_size hook, which only a policy on the "
		     "root cgroup may have (a khugepaged pass crosses "
		     "cgroups): load it on /, or use a policy without the hook",
		     po->name);
		break;
	case EINVAL:
		fail("the kernel refused '%s': only defined flags "
		     "(COLLAPSE_EXT_OPS_NO_YIELD), a non-empty name, no "
		     "sleepable hook, and a kernel with struct_ops links to "
		     "cgroups (BPF_F_CGROUP_FD)", po->name);
		break;
	default:
		fail("attaching '%s' failed: %s (its init() may have refused)",
		     po->name, strerror(err));
	}
	errno = err;
	return NULL;
}

void policy_close(struct policy_obj *po)
{
	bpf_object__close(po->obj);
	po->obj = NULL;
	po->map = NULL;
	libbpf_set_print(NULL);
}

/*
 * Let go of @link without detaching it (its pin holds it). A disconnected
 * link's destroy does not close its fd: closed here, or a long-running
 * apply --follow would keep every policy it loaded or swapped attached
 * after its pin is removed.
 */
static void link_release(struct bpf_link *link)
{
	int fd = bpf_link__fd(link);

	bpf_link__disconnect(link);
	bpf_link__destroy(link);
	if (fd >= 0)
		close(fd);
}

/* PIN_DIR exists on bpffs: 0, or 1 after saying what to do */
static int pin_dir_ready(void)
{
	struct statfs fs;

	if (mkdir(PIN_DIR, 0700) && errno != EEXIST)
		return fail("cannot create %s: %s (is bpffs mounted at "
			    "/sys/fs/bpf?)", PIN_DIR, strerror(errno));
	if (statfs(PIN_DIR, &fs))
		return fail("cannot read %s: %s", PIN_DIR, strerror(errno));
	if (fs.f_type != BPF_FS_MAGIC)
		return fail("%s is not on bpffs, where a policy must be pinned to "
			    "outlive collapsectl: mount it (mount -t bpf bpf "
			    "/sys/fs/bpf), or use load --foreground", PIN_DIR);
	return 0;
}

int policy_load_pinned(const char *file, const char *cgroup, uint64_t cgid,
		       const char *name, const struct knobs *knobs,
		       char *loaded)
{
	struct policy_obj po;
	struct bpf_link *link;
	char pin[256];
	int err;

	if (policy_open_load(&po, file, cgid, name, knobs))
		return 1;
	pin_path(pin, sizeof(pin), po.name);
	if (!access(pin, F_OK)) {
		err = fail("%s already exists: unload '%s' first", pin, po.name);
		goto out;
	}
	/* Where the pin goes is checked first: a policy never attaches only
	 * to be detached (its init and exit run) for want of bpffs. */
	err = pin_dir_ready();
	if (err)
		goto out;
	link = policy_attach(&po, cgroup, cgid);
	if (!link) {
		err = 1;
		goto out;
	}
	err = bpf_link__pin(link, pin);
	if (err) {
		bpf_link__destroy(link);
		err = fail("cannot pin the link at %s: %s (is bpffs mounted at "
			   "/sys/fs/bpf?)", pin, strerror(-err));
		goto out;
	}
	if (loaded)
		snprintf(loaded, 32, "%s", po.name);
	/* The pin holds the link now. */
	link_release(link);
out:
	policy_close(&po);
	return err;
}

int policy_unpin(const char *name)
{
	char pin[256];
	int i;

	pin_path(pin, sizeof(pin), name);
	if (unlink(pin)) {
		if (errno != ENOENT)
			return fail("cannot remove %s: %s", pin, strerror(errno));
		if (policy_attached(name))
			return fail("'%s' is attached but was not loaded by "
				    "collapsectl (no %s): detach it where it was "
				    "attached", name, pin);
		return fail("no policy named '%s' (see collapsectl list)", name);
	}
	/* The link goes when its last reference does (after an RCU grace
	 * period and a work item: slow on an emulated, debug kernel). */
	for (i = 0; i < 100; i++) {
		if (!policy_attached(name))
			return 0;
		usleep(50000);
	}
	return fail("removed %s, but '%s' is still attached: another process "
		    "holds its link", pin, name);
}

int policy_swap(const char *name, const char *file, const struct knobs *knobs)
{
	struct policy_obj po;
	struct bpf_link *link;
	char pin[256], buf[32];
	uint64_t cgid;
	int err;

	if (read_attr(name, "cgroup_id", buf, sizeof(buf)))
		return fail("no policy named '%s' (see collapsectl list)", name);
	cgid = strtoull(buf, NULL, 10);
	pin_path(pin, sizeof(pin), name);
	link = bpf_link__open(pin);
	if (!link)
		return fail("'%s' was not loaded by collapsectl (no %s): cannot "
			    "swap it", name, pin);
	if (policy_open_load(&po, file, cgid, name, knobs)) {
		bpf_link__destroy(link);
		return 1;
	}
	err = bpf_link__update_map(link, po.map);
	if (err)
		err = fail("swapping '%s' failed: %s", name, strerror(-err));
	link_release(link);
	policy_close(&po);
	return err;
}
