#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Evaluate collapse_ext's Prometheus rules on what a host exported.

Usage: prom-check.py PROMTOOL RULES GUEST_OUTPUT WORKDIR

GUEST_OUTPUT is what loader/deb/test-deb-guest.sh printed: two scrapes of
collapse_ext.prom (@@PROM-BEGIN 1@@ ... @@PROM-END 1@@, then 2) taken
around two demo workloads, and `collapsectl -j stats` after the second
(@@STATS-BEGIN@@ ... @@STATS-END@@). The guest has no TCP/IP, so no
Prometheus server scrapes it; promtool, Prometheus's own PromQL engine,
evaluates the rules on the scrapes instead:

  - promtool check metrics lints each scrape, promtool check rules RULES;
  - a promtool unit test (WORKDIR/test.yml) replays the scrapes as series
    of one instance (scrape 1 for 10 minutes, then scrape 2 for 20) and
    checks, against what collapsectl stats said:
      the alert CollapseExtPolicyNotAttached fires for exactly the lines
      not attached (labels and annotations);
      the failure reasons of the frugal demo, every reason, 0 included;
      the A/B difference of pages collapsed, eager's demo minus frugal's;
      the recorded failure share of the frugal demo just after its run.
Exit status 0 when every check passes; what promtool said is printed.
"""
import json
import math
import re
import subprocess
import sys

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
INSTANCE = {'instance': 'guest:9100', 'job': 'node'}


def section(text, begin, end):
    out, inside = [], False
    for line in text.split('\n'):
        line = line.rstrip('\r')
        if line == begin:
            inside = True
        elif line == end:
            return '\n'.join(out) + '\n'
        elif inside and not re.match(r'^\[ *\d+\.\d+\] ', line):
            out.append(line)
    sys.exit(f'prom-check: no {begin} ... {end} in the guest output')


def samples(text):
    """{(name, frozenset(labels)): value} of a text exposition"""
    got = {}
    for line in text.split('\n'):
        m = SAMPLE.match(line)
        if not m or line.startswith('#'):
            continue
        labels = dict(LABEL.findall(m.group(2) or ''))
        labels.update(INSTANCE)
        got[(m.group(1), frozenset(labels.items()))] = float(m.group(3))
    return got


def series_name(name, labels):
    inner = ', '.join(f'{k}="{v}"' for k, v in sorted(labels))
    return f'{name}{{{inner}}}'


def values(v1, v2):
    """scrape 1 at 0..9 min, scrape 2 at 10..29 min ('_': absent); in
    promtool's notation 'v+0xN' is N + 1 samples, '_xN' N"""
    a = '_x10' if v1 is None else f'{v1!r}+0x9'
    b = '_x20' if v2 is None else f'{v2!r}+0x19'
    return f'{a} {b}'


def run(cmd, stdin=None):
    r = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    print(f'prom-check: {" ".join(cmd[:3])}: exit {r.returncode}')
    for line in (r.stdout + r.stderr).strip().split('\n'):
        if line:
            print(f'    {line}')
    return r.returncode


def main():
    promtool, rules, guest, work = sys.argv[1:5]
    text = open(guest, encoding='utf-8', errors='replace').read()
    s1 = section(text, '@@PROM-BEGIN 1@@', '@@PROM-END 1@@')
    s2 = section(text, '@@PROM-BEGIN 2@@', '@@PROM-END 2@@')
    stats = json.loads(section(text, '@@STATS-BEGIN@@', '@@STATS-END@@'))
    counters = {p['name']: p['counters'] for p in stats}
    bad = 0
    for n, s in (('1', s1), ('2', s2)):
        bad += run([promtool, 'check', 'metrics'], stdin=s) != 0
    bad += run([promtool, 'check', 'rules', rules]) != 0

    a, b = samples(s1), samples(s2)
    series = ''.join(f"      - series: '{series_name(*k)}'\n"
                     f"        values: '{values(a.get(k), b.get(k))}'\n"
                     for k in sorted(set(a) | set(b)))

    # the alert: expected lines whose policy is not attached in scrape 2
    attached = {dict(k[1])['policy']: v for k, v in b.items()
                if k[0] == 'collapse_ext_policy_attached'}
    alerts = ''
    for k in sorted(k for k in b if k[0] == 'collapse_ext_policy_expected'):
        lab = dict(k[1])
        if attached.get(lab['policy']) == 1:
            continue
        lab['severity'] = 'warning'
        alerts += '          - exp_labels:\n' + ''.join(
            f'              {n}: "{v}"\n' for n, v in sorted(lab.items()))
        alerts += (
            '            exp_annotations:\n'
            f'              summary: "collapse_ext policy {lab["policy"]} is '
            f'{lab["state"]}, not attached to {lab["cgroup"]}"\n'
            f'              description: "On {lab["instance"]}: run `collapsectl '
            'status`; a pending line waits for its unit to start."\n')
    if not alerts:
        sys.exit('prom-check: no line is expected and not attached: '
                 'the alert would not be tested')

    fr, eg = counters['demo_frugal'], counters['demo_eager']

    def delta(name, policy):
        """what a counter of @policy gained between the scrapes"""
        k = [k for k in b if k[0] == f'collapse_ext_{name}_total' and
             dict(k[1])['policy'] == policy][0]
        return b[k] - a.get(k, 0)

    reasons = ''.join(
        f"          - labels: '{{policy=\"demo_frugal\", reason=\"{k[7:]}\"}}'\n"
        f"            value: {v}\n"
        for k, v in sorted(fr.items()) if k.startswith('failed_'))
    diff = eg['pages_collapsed'] - fr['pages_collapsed']
    # the rules see what changed between the scrapes
    failed = delta('collapse_failed', 'demo_frugal')
    share = failed / (failed + delta('collapse_succeeded', 'demo_frugal'))
    frugal_cg = next(dict(k[1])['cgroup'] for k in b
                     if k[0] == 'collapse_ext_policy_info' and
                     dict(k[1])['policy'] == 'demo_frugal')
    inst = ', '.join(f'{k}="{v}"' for k, v in sorted(INSTANCE.items()))
    test = f'''rule_files:
  - {rules}
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
{series}    alert_rule_test:
      - eval_time: 29m
        alertname: CollapseExtPolicyNotAttached
        exp_alerts:
{alerts}    promql_expr_test:
      - expr: sum by (policy, reason) (collapse_ext_failed_total{{policy="demo_frugal"}})
        eval_time: 29m
        exp_samples:
{reasons}      - expr: >
          collapse_ext_pages_collapsed_total{{policy="demo_eager"}}
          - ignoring (policy, cgroup)
          collapse_ext_pages_collapsed_total{{policy="demo_frugal"}}
        eval_time: 29m
        exp_samples:
          - labels: '{{{inst}}}'
            value: {diff}
      - expr: round(collapse_ext:failed:ratio5m{{policy="demo_frugal"}} * 1000)
        eval_time: 12m
        exp_samples:
          - labels: '{{cgroup="{frugal_cg}", instance="{INSTANCE['instance']}", policy="demo_frugal"}}'
            value: {math.floor(share * 1000 + 0.5)}
'''
    path = f'{work}/test.yml'
    with open(path, 'w', encoding='utf-8') as f:
        f.write(test)
    bad += run([promtool, 'test', 'rules', path]) != 0
    print(f'prom-check: {"FAIL" if bad else "ok"}: {len(set(a) | set(b))} series, '
          f'alert on {alerts.count("exp_labels")} line(s), '
          f'{reasons.count("labels:")} failure reasons, A/B difference {diff:g} '
          f'pages, failure share {share:.3f}')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
