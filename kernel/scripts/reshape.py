#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Re-split a kernel series forward from its final tree (issue 38).

Every file the series touches is kept as a *tagged* copy: each line of the
merge of its pristine and final text carries the range of series states in
which it exists,

    FROM..UNTIL|text

FROM empty: present from the base on; UNTIL empty: present to the end.
A context line is `..|`, a line the series adds in patch P `P..|`, a base
line patch P deletes `..P|`, and text that is in neither the base nor the
final tree (an intermediate state) `P..Q|`. State P is the tree after patch
P; a line is in it when FROM <= P < UNTIL.

Layout of DIR (kernel/BASE/reshape):
    order            one patch per line: ID<TAB>subject, in series order
    blame            NNNN ID: today's patch NNNN -> the patch it moves to
    spec/PATH        how PATH (its `/` as `--`) splits, see `spec`
    msg/ID           the commit message body of patch ID
The tagged copies are built in build/BASE/reshape/tagged/PATH.

Commands:
    tag DIR              tag every file: by its spec, else by blame alone
    init DIR PATH [ID]   tag PATH from the kernel tree's pristine..HEAD
                         (added lines ID or ?, deleted lines ..ID or ..?)
    spec DIR PATH FILE   tag PATH afresh (init blame), then by FILE: `A-B ID`
                         for final lines A..B (the narrowest range
                         holding a line wins), `bA-B ID` for base
                         lines A..B (deleted at ID), `alt N FROM..UNTIL`
                         and text up to `.` for text in neither (before
                         final line N)
    check DIR            every tag known, the first state is pristine, the
                         last is HEAD, every file of the diff is tagged
    emit DIR ID OUT      write every tagged file as of patch ID under OUT
    sizes DIR            lines added and removed per patch
    commit DIR WORKTREE  commit every patch in order on WORKTREE (a git
                         worktree at pristine); the last must equal HEAD.
                         RESHAPE_DRAFT=1: a patch without msg/ID gets a
                         placeholder message (never to be exported)
"""
import os
import subprocess
import sys

TREE = os.environ.get("RESHAPE_TREE")


def git(*args, cwd=None):
    return subprocess.run(["git", *args], cwd=cwd or TREE, check=True,
                          capture_output=True).stdout


def load_order(d):
    ids, subj = [], {}
    with open(os.path.join(d, "order")) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            pid, _, s = line.partition("\t")
            if pid in subj:
                sys.exit(f"order: {pid} twice")
            ids.append(pid)
            subj[pid] = s
    return ids, subj


def parse_tagged(path):
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            tag, bar, text = line.partition("|")
            if not bar or ".." not in tag:
                sys.exit(f"{path}:{n}: no FROM..UNTIL| tag")
            a, _, b = tag.partition("..")
            out.append((a.strip(), b.strip(), text))
    return out


def tagged_dir(d):
    """Tagged copies are build output: next to the kernel tree."""
    return os.path.join(os.path.dirname(os.path.abspath(TREE)), "reshape",
                        "tagged")


def tagged_files(d):
    root = tagged_dir(d)
    for dp, _, fs in os.walk(root):
        for fn in fs:
            p = os.path.join(dp, fn)
            yield os.path.relpath(p, root), p


def state_text(lines, rank, k):
    """The text at state index k (-1: the base, before every patch)."""
    res = []
    for a, b, text in lines:
        # an unknown tag (`?`, not yet decided) reads as never present
        lo = rank.get(a, len(rank)) if a else -1
        hi = rank.get(b, -1) if b else len(rank)
        if lo <= k < hi:
            res.append(text)
    return "".join(res)


def blame_tags(d, path):
    """Final line number -> the patch its original commit maps to (blame)."""
    commits = git("rev-list", "--reverse", "pristine..HEAD").decode().split()
    to_id = {}
    with open(os.path.join(d, "blame")) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if line:
                to_id[commits[int(line[0]) - 1]] = line[1]
    tags, cur = {}, None
    for x in git("blame", "--porcelain", "pristine..HEAD", "--",
                 path).decode().splitlines():
        w = x.split()
        if len(w) >= 3 and len(w[0]) == 40 and w[1].isdigit():
            cur = (w[0], int(w[2]))
        elif x.startswith("\t") and cur:
            tags[cur[1]] = to_id.get(cur[0], "?")
    return tags


def cmd_init(d, path, pid="?"):
    """Tag PATH from git's alignment of its pristine and final text.

    With ID `blame`, each added line takes the patch its last original
    commit maps to in DIR/blame (`NNNN ID`), and each deleted line the
    patch of the added lines next to it."""
    final = git("show", f"HEAD:{path}").decode()
    tags = blame_tags(d, path) if pid == "blame" else None
    raw = []
    if not git("ls-tree", "pristine", "--", path).strip():
        raw = ["+" + x for x in final.splitlines(keepends=True)]
    else:
        diff = git("diff", "-U1000000", "--no-color", "pristine", "HEAD",
                   "--", path).decode()
        body = diff.split("\n@@", 1)
        if len(body) < 2:
            raw = [" " + x for x in final.splitlines(keepends=True)]
        else:
            raw = [x for x in body[1].split("\n", 1)[1]
                   .splitlines(keepends=True) if x[0] != "\\"]
    fno, add = 0, []
    for x in raw:
        if x[0] != "-":
            fno += 1
        add.append(tags.get(fno, "?") if tags and x[0] == "+" else pid)
    out = []
    for i, x in enumerate(raw):
        c, t = x[0], x[1:]
        if c == " ":
            out.append("..|" + t)
        elif c == "+":
            out.append(f"{add[i]}..|{t}")
        else:
            near = pid
            if tags:
                near = "?"
                for j in list(range(i + 1, len(raw))) + \
                        list(range(i - 1, -1, -1)):
                    if raw[j][0] == " ":
                        if j > i:
                            continue
                        break
                    if raw[j][0] == "+":
                        near = add[j]
                        break
            out.append(f"..{near}|{t}")
    dst = os.path.join(tagged_dir(d), path)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with open(dst, "w") as f:
        f.writelines(out)


def spec_of(d, path):
    return os.path.join(d, "spec", path.replace("/", "--"))


def cmd_tag(d):
    """Tag every file of the series: by its spec, else by blame alone."""
    for path in git("diff-tree", "-r", "--name-only", "pristine",
                    "HEAD").decode().split():
        if os.path.exists(spec_of(d, path)):
            cmd_spec(d, path, spec_of(d, path))
        else:
            cmd_init(d, path, "blame")


def read_spec(spec, rank):
    """Ranges (final and base line numbers) and alternative texts of a spec.

    `A-B ID`: final lines A..B exist from ID on (the narrowest range
    holding a line wins; of equal ones, the last); `bA-B ID`: base lines A..B are deleted by ID;
    `cA-B ID`: so are the context lines among base lines A..B, their final
    copies added by the final range that names them; `alt N FROM..UNTIL`
    then text lines up to a line `.`: text of the states FROM..UNTIL,
    placed before final line N (or after the last with N = 0), or with
    `bN` before base line N."""
    fin, bas, ctx, alts = [], [], [], []
    with open(spec) as f:
        lines = f.readlines()
    i = 0
    while i < len(lines):
        n, line = i + 1, lines[i].split("#", 1)[0].strip()
        i += 1
        if not line:
            continue
        w = line.split()
        if w[0] == "alt":
            a, _, b = w[2].partition("..")
            for t in (a, b):
                if t not in rank:
                    sys.exit(f"{spec}:{n}: unknown patch {t}")
            text = []
            while lines[i].rstrip("\n") != ".":
                text.append(lines[i])
                i += 1
            i += 1
            pos = ("b", int(w[1][1:])) if w[1].startswith("b") else \
                ("f", int(w[1]))
            alts.append((pos, f"{a}..{b}", text))
            continue
        rng, pid = w
        if pid not in rank and pid != "?":
            sys.exit(f"{spec}:{n}: unknown patch {pid}")
        tgt = {"b": bas, "c": ctx}.get(rng[0], fin)
        lo, _, hi = rng.lstrip("bc").partition("-")
        tgt.append((int(lo), int(hi or lo), pid))
    return fin, bas, ctx, alts


def known(hits):
    """A range tagged `?` (not decided) loses to any range that decides."""
    return [h for h in hits if h[2] != "?"] or hits


def cmd_spec(d, path, spec):
    """Tag PATH afresh: blame first (init), then the spec over it."""
    ids, _ = load_order(d)
    rank = {p: i for i, p in enumerate(ids)}
    fin, bas, ctx, alts = read_spec(spec, rank)
    cmd_init(d, path, "blame")
    dst = os.path.join(tagged_dir(d), path)
    lines = [list(x) for x in parse_tagged(dst)]
    fno = bno = 0
    where = []
    for ln in lines:
        a, b, _ = ln
        if b == "":
            fno += 1
        if a == "":
            bno += 1
        where.append((fno if b == "" else None, bno if a == "" else None))
        if b == "" and a != "":
            hits = known([(hi - lo, -n, p) for n, (lo, hi, p)
                          in enumerate(fin) if lo <= fno <= hi])
            if hits:
                ln[0] = min(hits)[2]
    # a context line a base range names leaves the base at that patch; its
    # final copy comes with the final range that names it (or is `?`)
    split = []
    for ln, (f, bl) in zip(lines, where):
        if ln[0] == "" and ln[1] == "" and any(lo <= bl <= hi
                                                for lo, hi, _ in ctx):
            hits = known([(hi - lo, -n, p) for n, (lo, hi, p)
                          in enumerate(fin) if lo <= f <= hi])
            old = [(hi - lo, -n, p) for n, (lo, hi, p) in enumerate(ctx)
                   if lo <= bl <= hi]
            split.append((["", min(old)[2], ln[2]], (None, bl)))
            split.append(([min(hits)[2] if hits else "?", "", ln[2]],
                          (f, None)))
        else:
            split.append((ln, (f, bl)))
    lines = [x for x, _ in split]
    where = [w for _, w in split]
    # a deleted base line goes with the added lines next to it, unless told
    for i, ln in enumerate(lines):
        if ln[0] != "" or ln[1] == "":
            continue
        near = "?"
        for j in list(range(i + 1, len(lines))) + list(range(i - 1, -1, -1)):
            if lines[j][0] == "" and lines[j][1] == "":
                if j > i:
                    continue
                break
            if lines[j][0] != "" and lines[j][1] == "":
                near = lines[j][0]
                break
        hits = known([(hi - lo, -n, p) for n, (lo, hi, p)
                      in enumerate(bas + ctx) if lo <= where[i][1] <= hi])
        ln[1] = min(hits)[2] if hits else near
    out = []
    for (a, b, text), (f, bl) in zip(lines, where):
        for pos, t, xs in alts:
            if pos == ("f", f) or pos == ("b", bl):
                out += [f"{t}|{x}" for x in xs]
        out.append(f"{a}..{b}|{text}")
    out += [f"{t}|{x}" for pos, t, xs in alts if pos == ("f", 0) for x in xs]
    with open(dst, "w") as f:
        f.writelines(out)


def cmd_check(d):
    ids, _ = load_order(d)
    rank = {p: i for i, p in enumerate(ids)}
    bad = 0
    changed = set(git("diff-tree", "-r", "--name-only", "pristine", "HEAD")
                  .decode().split())
    seen = set()
    for rel, p in tagged_files(d):
        seen.add(rel)
        lines = parse_tagged(p)
        for n, (a, b, _) in enumerate(lines, 1):
            for t in (a, b):
                if t and t not in rank:
                    print(f"{rel}:{n}: unknown tag {t!r}")
                    bad += 1
            if a and b and a in rank and b in rank and rank[a] >= rank[b]:
                print(f"{rel}:{n}: empty range {a}..{b}")
                bad += 1
        if bad:
            continue
        first = state_text(lines, rank, -1).encode()
        last = state_text(lines, rank, len(ids) - 1).encode()
        have = git("ls-tree", "pristine", "--", rel).strip()
        base = git("show", f"pristine:{rel}") if have else b""
        if first != base:
            print(f"{rel}: the base state is not pristine's")
            bad += 1
        if last != git("show", f"HEAD:{rel}"):
            print(f"{rel}: the last state is not HEAD's")
            bad += 1
    for rel in sorted(changed - seen):
        print(f"{rel}: changed by the series but not tagged")
        bad += 1
    print(f"check: {len(seen)} files, {len(ids)} patches, {bad} problems")
    return 1 if bad else 0


def emit(d, ids, rank, k, out):
    for rel, p in tagged_files(d):
        text = state_text(parse_tagged(p), rank, k)
        dst = os.path.join(out, rel)
        existed = git("ls-tree", "pristine", "--", rel).strip()
        if not text and not existed:
            if os.path.exists(dst):
                os.unlink(dst)
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "w") as f:
            f.write(text)


def cmd_sizes(d):
    ids, subj = load_order(d)
    rank = {p: i for i, p in enumerate(ids)}
    add = {p: 0 for p in ids}
    rem = {p: 0 for p in ids}
    for _, p in tagged_files(d):
        for a, b, _ in parse_tagged(p):
            if a:
                add[a] = add.get(a, 0) + 1
            if b:
                rem[b] = rem.get(b, 0) + 1
    for p in ids:
        print(f"{p:6} +{add[p]:<5} -{rem[p]:<5} {subj[p]}")


def cmd_commit(d, wt):
    ids, subj = load_order(d)
    rank = {p: i for i, p in enumerate(ids)}
    for k, pid in enumerate(ids):
        emit(d, ids, rank, k, wt)
        git("add", "-A", "-f", ".", cwd=wt)
        mp = os.path.join(d, "msg", pid)
        if os.path.exists(mp):
            with open(mp) as f:
                msg = subj[pid] + "\n\n" + f.read()
        elif os.environ.get("RESHAPE_DRAFT"):
            msg = subj[pid] + "\n\n(draft: no message yet)\n"
        else:
            sys.exit(f"commit: no {mp}")
        subprocess.run(["git", "commit", "-q", "-s", "-F", "-"], cwd=wt,
                       check=True, input=msg.encode())
    if git("diff", "--stat", "HEAD", git("rev-parse", "HEAD").decode().strip(),
           cwd=wt):
        print("commit: the last patch does not give the final tree")
        return 1
    return 0


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    global TREE
    cmd, d = sys.argv[1], sys.argv[2]
    if not TREE:
        base = os.path.basename(os.path.dirname(os.path.abspath(d)))
        TREE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..",
                                            "..", "build", base, "linux"))
    if cmd == "init":
        cmd_init(d, *sys.argv[3:])
    elif cmd == "spec":
        cmd_spec(d, *sys.argv[3:])
    elif cmd == "tag":
        cmd_tag(d)
    elif cmd == "check":
        return cmd_check(d)
    elif cmd == "emit":
        ids, _ = load_order(d)
        rank = {p: i for i, p in enumerate(ids)}
        emit(d, ids, rank, rank[sys.argv[3]], sys.argv[4])
    elif cmd == "sizes":
        cmd_sizes(d)
    elif cmd == "commit":
        return cmd_commit(d, sys.argv[3])
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
