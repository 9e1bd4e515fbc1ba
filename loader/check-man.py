#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check that collapsectl(8) and `collapsectl COMMAND --help` name the same
options, command by command.

Usage: check-man.py COLLAPSECTL MANPAGE

--help's options: those of its Usage lines and those that start a line
(an option's description). The man page's: those of the command's
synopsis (the lines of its .SS before the first .PP) and those that head
a .TP item. Each must have the other's; exits 1 and names what differs.
"""
import re
import subprocess
import sys

COMMANDS = ('load', 'unload', 'swap', 'apply', 'status', 'list', 'info',
            'stats', 'collapse', 'ab', 'version')
OPT = r'(?<![\w-])--[a-z][a-z-]*'


def help_options(ctl, cmd):
    text = subprocess.run([ctl, cmd, '--help'], capture_output=True,
                          text=True, check=True).stdout
    opts = set()
    for line in text.split('\n'):
        if line.startswith(('Usage:', '       collapsectl')):
            opts |= set(re.findall(OPT, line))
        m = re.match(r'\s+(--[a-z][a-z-]*)', line)
        if m:
            opts.add(m.group(1))
    # global options, and --help everywhere
    return opts - {'--help', '--version'}


def man_sections(path):
    text = open(path, encoding='utf-8').read().replace('\\-', '-')
    secs = {}
    for sh in text.split('\n.SH '):
        for part in re.split(r'^\.SS ', sh, flags=re.M)[1:]:
            secs[part.split('\n', 1)[0].strip()] = part
    return secs


def man_options(sec):
    synopsis = sec.split('\n.PP', 1)[0]
    opts = set(re.findall(OPT, synopsis))
    opts |= set(re.findall(r'^\.TP\n\.B[IR]? (--[a-z][a-z-]*)', sec, flags=re.M))
    return opts - {'--help', '--version'}


def main():
    ctl, man = sys.argv[1:3]
    secs = man_sections(man)
    problems = 0
    for cmd in COMMANDS:
        if cmd not in secs:
            print(f'check-man: {man} has no section for {cmd}')
            problems += 1
            continue
        h, m = help_options(ctl, cmd), man_options(secs[cmd])
        for o in sorted(h - m):
            print(f'check-man: {cmd}: {o} is in --help, not in {man}')
        for o in sorted(m - h):
            print(f'check-man: {cmd}: {o} is in {man}, not in --help')
        problems += len(h ^ m)
    sys.exit(1 if problems else 0)


if __name__ == '__main__':
    main()
