#!/bin/sh
# Check bpf-progs/collapse_ext_types.h against one kernel base's BTF.
#
# Usage: check-types.sh HEADER VMLINUX_H BASE
#   VMLINUX_H is the base's `bpftool btf dump ... format c`; BASE its name
#   (6.12, 7.3).
#
# For every struct and enum the header defines, the kernel's definition of
# the same name must match it:
#  - a struct member of the kernel must be in the header, with the same
#    type (a function pointer: the same return type and number of
#    arguments), and a header member must be in the kernel, unless its
#    comment names the bases that have it ("/* 7.3 */") and BASE is not
#    one of them (then the kernel must not have it);
#  - an enum has the same names with the same values;
#  - a flavored enum (NAME___flavor, its enumerators likewise: values that
#    differ between bases, which policies read with bpf_core_enum_value())
#    declares a subset of the kernel's names, values not compared.
# The policies are CO-RE, so the order of members does not matter.
# Prints what differs and exits 1; silent and 0 when everything matches.
set -eu
[ $# = 3 ] || { echo "usage: $0 HEADER VMLINUX_H BASE" >&2; exit 2; }
HEADER=$1
VMLINUX_H=$2
BASE=$3
[ -r "$HEADER" ] || { echo "check-types: cannot read $HEADER" >&2; exit 2; }
[ -r "$VMLINUX_H" ] || { echo "check-types: cannot read $VMLINUX_H" >&2; exit 2; }

awk -v base="$BASE" -v hdr="$HEADER" -v kh="$VMLINUX_H" '
function trim(s) { gsub(/[ \t]+/, " ", s); sub(/^ /, "", s); sub(/ $/, "", s); return s }
# one member declaration (joined lines, no comment) -> key and signature
function member(decl, file, ty,    name, ret, args, n) {
	decl = trim(decl)
	sub(/;$/, "", decl)
	if (ty == "enum") {
		sub(/,$/, "", decl)
		name = decl; sub(/ *=.*/, "", name)
		val = decl; sub(/^[^=]*= */, "", val)
		KEY = name; SIG = val
		return
	}
	if (match(decl, /\(\*[A-Za-z_0-9]+\)/)) {
		name = substr(decl, RSTART + 2, RLENGTH - 3)
		ret = trim(substr(decl, 1, RSTART - 1))
		args = substr(decl, RSTART + RLENGTH)
		gsub(/[()]/, "", args)
		args = trim(args)
		n = (args == "" || args == "void") ? 0 : split(args, _a, ",")
		KEY = name; SIG = ret " (*)(" n " arguments)"
		return
	}
	name = decl
	sub(/ *\[[^]]*\]$/, "", name)
	sub(/.*[ *]/, "", name)
	KEY = name; SIG = decl
}
# the bases a comment names ("7.3", "6.12 7.3"), space separated
function bases_of(c,    out) {
	out = ""
	while (match(c, /[0-9]+\.[0-9]+/)) {
		out = out " " substr(c, RSTART, RLENGTH)
		c = substr(c, RSTART + RLENGTH)
	}
	return out
}
FNR == 1 { file = (FILENAME == hdr) ? "h" : "k" }
# the start of a definition
!cur && /^(struct|enum) [A-Za-z_0-9]+ \{/ {
	ty = $1; nm = $2
	if (file == "k" && !((ty " " nm) in want))
		next
	cur = ty " " nm
	if (file == "h") {
		# a flavor stands for the kernel type of its essential name
		if (nm ~ /___/) {
			cur = ty " " substr(nm, 1, index(nm, "___") - 1)
			subset[cur] = 1
		}
		want[cur] = 1
		order[++nwant] = cur
	} else
		found[cur] = 1
	acc = ""; cmt = ""
	next
}
cur && /^\};/ { cur = ""; next }
cur {
	line = $0
	if (match(line, /\/\*.*\*\//)) {
		cmt = cmt substr(line, RSTART, RLENGTH)
		line = substr(line, 1, RSTART - 1) substr(line, RSTART + RLENGTH)
	}
	if (line ~ /^[ \t]*(\/\*|\*)/)
		next
	acc = acc " " line
	# a declaration ends with ";" (struct) or "," or the last enumerator
	if ((cur ~ /^struct/ && acc !~ /;[ \t]*$/) || trim(acc) == "")
		next
	member(acc, file, substr(cur, 1, index(cur, " ") - 1))
	if (subset[cur] && file == "h") {
		sub(/___.*/, "", KEY)
		SIG = "(any value)"
	}
	id = cur SUBSEP KEY
	if (file == "h") {
		hsig[id] = SIG; hb[id] = bases_of(cmt); hkeys[cur] = hkeys[cur] " " KEY
	} else {
		ksig[id] = SIG; kkeys[cur] = kkeys[cur] " " KEY
	}
	acc = ""; cmt = ""
}
END {
	bad = 0
	for (i = 1; i <= nwant; i++) {
		d = order[i]
		if (!(d in found)) {
			printf "check-types: %s: %s is not in the %s kernel'"'"'s BTF (%s)\n", hdr, d, base, kh
			bad++
			continue
		}
		n = split(kkeys[d], ks, " ")
		for (j = 1; j <= n; j++) {
			id = d SUBSEP ks[j]
			if (subset[d]) {
				ksig[id] = "(any value)"
				continue
			}
			if (!(id in hsig)) {
				printf "check-types: %s: %s: the %s kernel has %s \"%s\", the header does not: add it\n", hdr, d, base, (d ~ /^enum/ ? "enumerator" : "member"), ks[j] (d ~ /^enum/ ? " = " ksig[id] : "")
				bad++
			} else if (hsig[id] != ksig[id]) {
				printf "check-types: %s: %s: %s is \"%s\" in the header, \"%s\" in the %s kernel\n", hdr, d, ks[j], hsig[id], ksig[id], base
				bad++
			}
		}
		n = split(hkeys[d], hs, " ")
		for (j = 1; j <= n; j++) {
			id = d SUBSEP hs[j]
			inbase = hb[id] == "" || index(hb[id] " ", " " base " ")
			if (!(id in ksig) && inbase) {
				printf "check-types: %s: %s: %s is not in the %s kernel%s\n", hdr, d, hs[j], base, hb[id] == "" ? ": name the bases that have it in its comment" : ", though its comment says so"
				bad++
			} else if ((id in ksig) && !inbase) {
				printf "check-types: %s: %s: %s is in the %s kernel, its comment names only%s\n", hdr, d, hs[j], base, hb[id]
				bad++
			}
		}
	}
	exit bad != 0
}' "$HEADER" "$VMLINUX_H"
