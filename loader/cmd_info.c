// SPDX-License-Identifier: GPL-2.0
/*
 * collapsectl info: what a policy is, from its object alone: the text of
 * COLLAPSE_EXT_INFO() and COLLAPSE_EXT_KNOB() (collapse_ext.bpf.h, in the
 * section .collapse_ext.info), the hooks it sets, and its knobs as BTF
 * describes them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collapsectl.h"
#include "ops_data.h"

static const char info_usage[] =
"Usage: collapsectl info [--json] [FILE.bpf.o | POLICY]...\n"
"\n"
"What a policy is, read from its object alone (neither root nor a\n"
"collapse_ext kernel needed): its name, what it does, the hooks it sets\n"
"(and which of them one base only has), and its knobs, the const volatile\n"
"globals that load --set and policies.conf set: type, default, range and\n"
"what each sets. POLICY is an installed policy's name (frugal); without\n"
"one, every installed policy. The texts are the policy's own\n"
"(COLLAPSE_EXT_INFO and COLLAPSE_EXT_KNOB in collapse_ext.bpf.h).\n"
"  --json   one JSON array, an object per policy: name, file, info, hooks\n"
"           [{name, only}], knobs [{name, type, default, range, doc}]\n";

#define INFO_SEC	".collapse_ext.info"
#define MAX_INFO_KNOBS	32

struct info {
	char text[512];
	struct knob_desc knobs[MAX_INFO_KNOBS];
	int nr_knobs;
};

/* The "info=" and "knob:VAR=" strings of the object's INFO_SEC into @in */
static void read_info_sec(const char *file, struct info *in)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd;

	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE)
		goto out_fd;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		goto out_elf;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name, *p, *end;
		Elf_Data *data;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, INFO_SEC))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			break;
		p = data->d_buf;
		end = p + data->d_size;
		/* NUL-terminated strings, with padding between them */
		for (; p < end; p += strnlen(p, end - p) + 1) {
			const char *eq;
			int i;

			if (!strncmp(p, "info=", 5)) {
				snprintf(in->text, sizeof(in->text), "%.*s",
					 (int)strnlen(p + 5, end - p - 5), p + 5);
				continue;
			}
			if (strncmp(p, "knob:", 5) || !(eq = memchr(p, '=', end - p)))
				continue;
			for (i = 0; i < in->nr_knobs; i++) {
				struct knob_desc *d = &in->knobs[i];

				if (strlen(d->name) == (size_t)(eq - p - 5) &&
				    !strncmp(d->name, p + 5, eq - p - 5))
					snprintf(d->doc, sizeof(d->doc), "%.*s",
						 (int)strnlen(eq + 1, end - eq - 1),
						 eq + 1);
			}
		}
		break;
	}
out_elf:
	if (elf)
		elf_end(elf);
out_fd:
	if (fd >= 0)
		close(fd);
}

static void print_text(const char *file, const struct policy_obj *po,
		       char hooks[][OPS_HOOK_LEN], int nr_hooks,
		       const struct info *in)
{
	const char *only;
	int i;

	printf("%s (%s)\n", po->name, file);
	printf("  %s\n", in->text[0] ? in->text :
	       "(no description: the object has no COLLAPSE_EXT_INFO)");
	printf("  hooks:");
	for (i = 0; i < nr_hooks; i++) {
		ops_hook_known(hooks[i], &only);
		printf("%s %s%s%s%s", i ? "," : "", hooks[i], only ? " (" : "",
		       only ?: "", only ? " only)" : "");
	}
	printf("\n  knobs:%s\n", in->nr_knobs ? "" : " none (flags=NO_YIELD only)");
	for (i = 0; i < in->nr_knobs; i++) {
		const struct knob_desc *d = &in->knobs[i];

		printf("    %s=%s  (%s, %s)\n", d->name, d->dflt, d->type, d->range);
		if (d->doc[0])
			printf("        %s\n", d->doc);
	}
}

static void print_json(json_writer_t *jw, const char *file,
		       const struct policy_obj *po, char hooks[][OPS_HOOK_LEN],
		       int nr_hooks, const struct info *in)
{
	const char *only;
	int i;

	jsonw_start_object(jw);
	json_string_field(jw, "name", po->name);
	json_string_field(jw, "file", file);
	json_string_field(jw, "info", in->text);
	jsonw_name(jw, "hooks");
	jsonw_start_array(jw);
	for (i = 0; i < nr_hooks; i++) {
		ops_hook_known(hooks[i], &only);
		jsonw_start_object(jw);
		json_string_field(jw, "name", hooks[i]);
		if (only)
			json_string_field(jw, "only", only);
		else
			jsonw_null_field(jw, "only");
		jsonw_end_object(jw);
	}
	jsonw_end_array(jw);
	jsonw_name(jw, "knobs");
	jsonw_start_array(jw);
	for (i = 0; i < in->nr_knobs; i++) {
		const struct knob_desc *d = &in->knobs[i];

		jsonw_start_object(jw);
		json_string_field(jw, "name", d->name);
		json_string_field(jw, "type", d->type);
		json_string_field(jw, "default", d->dflt);
		json_string_field(jw, "range", d->range);
		json_string_field(jw, "doc", d->doc);
		jsonw_end_object(jw);
	}
	jsonw_end_array(jw);
	jsonw_end_object(jw);
}

/* One policy: 0, or 1 with the reason said */
static int info_one(const char *spec, json_writer_t *jw)
{
	char file[PATH_MAX], hooks[32][OPS_HOOK_LEN];
	struct policy_obj po;
	struct info in = {};
	int nr_hooks;

	if (policy_object_arg(spec, file) || policy_open(&po, file, NULL, NULL))
		return 1;
	nr_hooks = ops_data_hooks(po.obj, po.map, hooks, 32);
	in.nr_knobs = knobs_describe(po.obj, in.knobs, MAX_INFO_KNOBS);
	read_info_sec(file, &in);
	if (jw)
		print_json(jw, file, &po, hooks, nr_hooks < 0 ? 0 : nr_hooks, &in);
	else
		print_text(file, &po, hooks, nr_hooks < 0 ? 0 : nr_hooks, &in);
	policy_close(&po);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char * const *)a, *(char * const *)b);
}

/* Every installed policy, by name: how many failed, or -1 if none found */
static int info_installed(json_writer_t *jw)
{
	char *names[256];
	int i, n = 0, failed = 0;
	const char *dir = NULL;
	struct dirent *de;
	DIR *d;

	for (i = 0; i < 2 && !dir; i++) {
		static const char * const dirs[] = {
			"/usr/lib/collapse_ext/bpf", "/usr/share/collapse_ext/bpf",
		};

		if (!access(dirs[i], R_OK))
			dir = dirs[i];
	}
	d = dir ? opendir(dir) : NULL;
	while (d && (de = readdir(d)) && n < 256) {
		size_t len = strlen(de->d_name);

		if (len > 6 && !strcmp(de->d_name + len - 6, ".bpf.o"))
			names[n++] = strndup(de->d_name, len - 6);
	}
	if (d)
		closedir(d);
	if (!n)
		return -1;
	qsort(names, n, sizeof(names[0]), by_name);
	for (i = 0; i < n; i++) {
		if (!jw && i)
			putchar('\n');
		failed += info_one(names[i], jw);
		free(names[i]);
	}
	return failed;
}

int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	json_writer_t *jw = NULL;
	bool json = false;
	int c, i, failed = 0;

	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'h': fputs(info_usage, stdout); return 0;
		default: fputs(info_usage, stderr); return 2;
		}
	}
	if (json) {
		jw = json_out_new();
		if (!jw)
			return fail("out of memory");
		jsonw_start_array(jw);
	}
	if (optind == argc) {
		failed = info_installed(jw);
		if (failed < 0)
			fail("no installed policy (in /usr/lib/collapse_ext/bpf or "
			     "/usr/share/collapse_ext/bpf): name a FILE.bpf.o");
	}
	for (i = optind; i < argc; i++) {
		if (!jw && i > optind)
			putchar('\n');
		failed += info_one(argv[i], jw);
	}
	if (jw) {
		jsonw_end_array(jw);
		jsonw_destroy(&jw);
	}
	return failed ? 1 : 0;
}
