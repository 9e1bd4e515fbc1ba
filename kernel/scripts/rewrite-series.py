#!/usr/bin/env python3
"""Rewrite a series' commits by transforming their trees, without a checkout.

Usage (in build/BASE/linux or a worktree of it, on the branch to rewrite):
    rewrite-series.py RULES.py     prints the new head; nothing is moved:
                                   `git reset --hard NEW` once it looks right

RULES.py is a Python module with:
    FIRST = n              the first patch (1-based, from "pristine") to touch;
                           the ones before keep their commits
    PATHS = [...]          the files transform() sees
    transform(path, text, i) -> text
                           the file as patch i (or, for an extra commit made
                           after patch i, (i, "x")) should leave it
and optionally:
    patch(i) -> file       a diff applied to patch i's tree after transform()
    message(msg, i) -> msg patch i's new commit message
    extra(i) -> msg        make a new commit after patch i, with this message
                           and patch i's original tree through
                           transform(path, text, (i, "x"))

Why trees and not `git rebase -i`: moving a hunk from patch 20 to patch 18
means patches 18 and 19 get it too, and rebasing conflicts at every patch in
between that touches the lines around it. A transform of each tree says
what each prefix contains; the diffs follow. Check afterwards that the last
tree is the one you meant (`git diff OLD NEW`), that every prefix builds
(`make check-series FROM=n`), and read the moved diffs.
"""
import importlib.util
import os
import subprocess
import sys
import tempfile


def git(*args, inp=None, env=None):
    return subprocess.run(("git",) + args, input=inp, env=env,
                          capture_output=True, check=True).stdout.decode()


def load(path):
    spec = importlib.util.spec_from_file_location("rules", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def tree_of(rules, commit, key, index_env, extra_patch=None):
    """The tree of @commit with rules.transform(path, text, key) applied."""
    git("read-tree", commit, env=index_env)
    for path in rules.PATHS:
        r = subprocess.run(["git", "cat-file", "-p", f"{commit}:{path}"],
                           capture_output=True)
        if r.returncode:
            continue
        old = r.stdout.decode()
        new = rules.transform(path, old, key)
        if new == old:
            continue
        blob = git("hash-object", "-w", "--stdin", inp=new.encode()).strip()
        mode = git("ls-tree", commit, path).split()[0]
        git("update-index", "--cacheinfo", f"{mode},{blob},{path}",
            env=index_env)
    if extra_patch:
        git("apply", "--cached", extra_patch, env=index_env)
    return git("write-tree", env=index_env).strip()


def commit(tree, parent, msg, author_env):
    msg = msg.rstrip("\n") + "\n"
    return git("commit-tree", tree, "-p", parent, inp=msg.encode(),
               env=author_env).strip()


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rules = load(sys.argv[1])
    commits = git("rev-list", "--reverse", "pristine..HEAD").split()
    if not 1 <= rules.FIRST <= len(commits):
        sys.exit(f"FIRST={rules.FIRST}: the series has {len(commits)} patches")
    parent = git("rev-parse", commits[rules.FIRST - 1] + "^").strip()
    with tempfile.TemporaryDirectory() as tmp:
        index_env = dict(os.environ, GIT_INDEX_FILE=os.path.join(tmp, "index"))
        for i, c in enumerate(commits[rules.FIRST - 1:], rules.FIRST):
            name, email, date = git("log", "-1", "--format=%an%x00%ae%x00%ad",
                                    "--date=raw", c).split("\0")
            author_env = dict(os.environ, GIT_AUTHOR_NAME=name,
                              GIT_AUTHOR_EMAIL=email,
                              GIT_AUTHOR_DATE=date.strip())
            extra_patch = rules.patch(i) if hasattr(rules, "patch") else None
            tree = tree_of(rules, c, i, index_env, extra_patch)
            msg = git("log", "-1", "--format=%B", c)
            if hasattr(rules, "message"):
                msg = rules.message(msg, i)
            parent = commit(tree, parent, msg, author_env)
            print(i, parent[:12], file=sys.stderr)
            extra = rules.extra(i) if hasattr(rules, "extra") else None
            if extra:
                tree = tree_of(rules, c, (i, "x"), index_env)
                parent = commit(tree, parent, extra, author_env)
                print(i, "x", parent[:12], file=sys.stderr)
    print(parent)


if __name__ == "__main__":
    main()
