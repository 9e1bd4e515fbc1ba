// SPDX-License-Identifier: GPL-2.0
/* Run a shell command and capture its output; see run_cmd.h. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_cmd.h"

static int vrun(uid_t uid, char *out, size_t len, const char *fmt, va_list ap)
{
	char cmd[4096];
	int pfd[2], status;
	size_t n = 0;
	ssize_t got;
	pid_t pid;

	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		close(pfd[1]);
		if (uid && (setresgid(uid, uid, uid) || setresuid(uid, uid, uid)))
			_exit(126);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	while ((got = read(pfd[0], out + n, n + 1 < len ? len - n - 1 : 0)) > 0)
		n += got;
	/* drain what did not fit */
	while (n + 1 >= len && read(pfd[0], cmd, sizeof(cmd)) > 0)
		;
	out[n] = 0;
	close(pfd[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int run_cmd(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vrun(0, out, len, fmt, ap);
	va_end(ap);
	return ret;
}

int run_cmd_as(uid_t uid, char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vrun(uid, out, len, fmt, ap);
	va_end(ap);
	return ret;
}

int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

int count_matches(const char *s, const char *needle)
{
	int n = 0;

	for (; (s = strstr(s, needle)); s += strlen(needle))
		n++;
	return n;
}

void unload_pinned_policies(void)
{
	char o[256];

	run_cmd(o, sizeof(o), "for p in /sys/fs/bpf/collapse_ext/*; do "
		"[ -e \"$p\" ] && collapsectl unload $(basename $p); done; "
		"rm -rf /run/collapse_ext; true");
}

void emit_artifact(const char *kind, const char *label, const char *text)
{
	const char *p = text;

	printf("ARTIFACT-BEGIN %s %s\n", kind, label);
	while (*p) {
		int len = strcspn(p, "\n");

		printf("ARTIFACT| %.*s\n", len, p);
		p += len + (p[len] == '\n');
	}
	printf("ARTIFACT-END %s %s\n", kind, label);
	fflush(stdout);
}

/*
 * A raw BTF with one type, int: the vmlinux BTF of a kernel without
 * collapse_ext, as far as collapsectl looks (no struct collapse_ext_ops).
 */
static const unsigned char btf_without_ce[] = {
	0x9f, 0xeb, 1, 0, 24, 0, 0, 0,		/* magic, version, flags, hdr_len */
	0, 0, 0, 0, 16, 0, 0, 0,		/* type_off, type_len */
	16, 0, 0, 0, 5, 0, 0, 0,		/* str_off, str_len */
	1, 0, 0, 0, 0, 0, 0, 1, 4, 0, 0, 0,	/* "int": BTF_KIND_INT, 4 bytes */
	32, 0, 0, 0,				/* 32 bits */
	0, 'i', 'n', 't', 0,
};

#define BTF_WITHOUT_CE	"/tmp/btf_without_ce"

int run_cmd_without_ce(char *out, size_t len, const char *fmt, ...)
{
	char cmd[3072];
	FILE *f = fopen(BTF_WITHOUT_CE, "w");
	va_list ap;
	int ret;

	if (!f)
		return -1;
	ret = fwrite(btf_without_ce, sizeof(btf_without_ce), 1, f) == 1;
	if (fclose(f) || !ret)
		return -1;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return run_cmd(out, len, "unshare -m sh -c 'mount --bind " BTF_WITHOUT_CE
		       " /sys/kernel/btf/vmlinux && exec %s'", cmd);
}
