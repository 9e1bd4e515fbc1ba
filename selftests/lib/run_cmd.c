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

static const char *skip_ws(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

static const char *parse_value(const char *s);

static const char *parse_string(const char *s)
{
	if (*s != '"')
		return NULL;
	for (s++; *s && *s != '"'; s++)
		if (*s == '\\' && s[1])
			s++;
	return *s == '"' ? s + 1 : NULL;
}

static const char *parse_object(const char *s)
{
	s = skip_ws(s);
	if (*s++ != '{')
		return NULL;
	s = skip_ws(s);
	if (*s == '}')
		return s + 1;
	for (;;) {
		s = parse_string(skip_ws(s));
		if (!s)
			return NULL;
		s = skip_ws(s);
		if (*s++ != ':')
			return NULL;
		s = parse_value(skip_ws(s));
		if (!s)
			return NULL;
		s = skip_ws(s);
		if (*s == '}')
			return s + 1;
		if (*s++ != ',')
			return NULL;
	}
}

static const char *parse_value(const char *s)
{
	if (*s == '{')
		return parse_object(s);
	if (*s == '"')
		return parse_string(s);
	if (*s == '-')
		s++;
	if (!isdigit((unsigned char)*s))
		return NULL;
	while (isdigit((unsigned char)*s) || *s == '.')
		s++;
	return s;
}

int json_object_valid(const char *s)
{
	s = parse_object(s);
	return s && !*skip_ws(s);
}
