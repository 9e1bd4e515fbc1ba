// SPDX-License-Identifier: GPL-2.0
/* collapsectl: JSON strings that stay JSON whatever bytes they hold. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collapsectl.h"

bool json_pretty;

json_writer_t *json_out_new(void)
{
	json_writer_t *jw = jsonw_new(stdout);

	if (jw)
		jsonw_pretty(jw, json_pretty);
	return jw;
}

/*
 * json_writer escapes quotes, backslashes and \t\n\r\f\b only; a cgroup
 * name may hold any other control character, which JSON forbids raw.
 */
void json_string_field(json_writer_t *jw, const char *prop, const char *s)
{
	char *buf = malloc(strlen(s) * 6 + 3), *p = buf;

	if (!buf) {
		jsonw_null_field(jw, prop);
		return;
	}
	*p++ = '"';
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = c;
		} else if (c < 0x20) {
			p += sprintf(p, "\\u%04x", c);
		} else {
			*p++ = c;
		}
	}
	*p++ = '"';
	*p = 0;
	jsonw_name(jw, prop);
	jsonw_printf(jw, "%s", buf);
	free(buf);
}
