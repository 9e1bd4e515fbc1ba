#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Port one file's reshape spec from one base to another (issue 38).

    reshape-port.py FROM_BASE TO_BASE PATH > spec

Reads the tagged copy of PATH of FROM_BASE (build/FROM/reshape/tagged)
and the final and pristine text of PATH in both kernel trees, matches the
lines (difflib), and writes a spec for TO_BASE: each final line of TO
takes the patch of the FROM line it matches, each deleted base line of
TO the patch that deletes the FROM base line it matches, and each
alternative text moves to the TO line that matches its place. A line
with no match is `?`: tag it by hand (reshape.py check refuses `?`),
and read every ported `alt`, whose text is FROM's.
"""
import difflib
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def show(base, rev, path):
    r = subprocess.run(["git", "-C", f"{ROOT}/build/{base}/linux", "show",
                        f"{rev}:{path}"], capture_output=True, text=True)
    return r.stdout.splitlines(keepends=True) if r.returncode == 0 else []


def match(a, b):
    """index in b of each line of a that difflib matches, else None"""
    m = [None] * len(a)
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for blk in sm.get_matching_blocks():
        for k in range(blk.size):
            m[blk.a + k] = blk.b + k
    return m


def main():
    src, dst, path = sys.argv[1:4]
    tagged = f"{ROOT}/build/{src}/reshape/tagged/{path}"
    fin_tag, base_tag, alts = {}, {}, []
    f = b = 0
    pending = []
    for line in open(tagged):
        tag, _, text = line.partition("|")
        a, _, u = tag.partition("..")
        if a and u:
            pending.append((tag, text))
            continue
        if u == "":
            f += 1
            fin_tag[f] = a
            for t, x in pending:
                alts.append((("f", f), t, x))
        if a == "":
            b += 1
            if u:
                base_tag[b] = u
            if u == "" and pending:
                pass
            elif pending:
                for t, x in pending:
                    alts.append((("b", b), t, x))
        pending = [] if (u == "" or a == "") else pending
    for t, x in pending:
        alts.append((("f", 0), t, x))

    sf, df = show(src, "HEAD", path), show(dst, "HEAD", path)
    sb, db = show(src, "pristine", path), show(dst, "pristine", path)
    fm = match(df, sf)          # dst final line -> src final line
    bm = match(db, sb)          # dst base line -> src base line
    inv_f = {v: i for i, v in enumerate(fm) if v is not None}
    inv_b = {v: i for i, v in enumerate(bm) if v is not None}

    out = []

    def emit_ranges(prefix, tags):
        run = None
        for n, t in tags:
            t = t or "?"
            if run and run[1] == n - 1 and run[2] == t:
                run[1] = n
                continue
            if run:
                out.append(f"{prefix}{run[0]}-{run[1]} {run[2]}")
            run = [n, n, t]
        if run:
            out.append(f"{prefix}{run[0]}-{run[1]} {run[2]}")

    # dst's own diff: which of its final lines are added, which base
    # lines kept (a new file: every line added)
    kept, added = set(), set()
    dd = subprocess.run(["git", "-C", f"{ROOT}/build/{dst}/linux", "diff",
                         "-U1000000", "pristine", "HEAD", "--", path],
                        capture_output=True, text=True).stdout
    body = dd.split("\n@@", 1)
    bl = fl = 0
    if len(body) == 2:
        for x in body[1].split("\n", 1)[1].splitlines():
            if x.startswith("\\"):
                continue
            if x[:1] in (" ", "-"):
                bl += 1
                if x[:1] == " ":
                    kept.add(bl)
            if x[:1] in (" ", "+"):
                fl += 1
                if x[:1] == "+":
                    added.add(fl)
    emit_ranges("", [(i + 1, fin_tag.get(s + 1) or "?" if s is not None
                      else "?") for i, s in enumerate(fm)
                     if i + 1 in added])
    dele = [(i + 1, base_tag.get(s + 1, "?") if s is not None else "?")
            for i, s in enumerate(bm) if i + 1 not in kept]
    emit_ranges("b", dele)
    for (kind, n), t, x in alts:
        if kind == "f":
            pos = inv_f.get(n - 1) if n else None
            where = f"{pos + 1}" if pos is not None else "?"
        else:
            pos = inv_b.get(n - 1)
            where = f"b{pos + 1}" if pos is not None else "?"
        out.append(f"alt {where} {t}")
        out.append(x.rstrip("\n"))
        out.append(".")
    print("\n".join(out))


if __name__ == "__main__":
    main()
