# SPDX-License-Identifier: GPL-2.0
"""Read tests/mutate/mutants.txt: list the mutants, or apply one to a copy of the tree."""
import sys


def parse(path):
    mutants, cur, field = [], None, None
    for line in open(path).read().split('\n'):
        if line.startswith('=== '):
            cur = {'name': line[4:].strip(), 'old': [], 'new': []}
            mutants.append(cur)
            field = None
        elif cur is None or (field is None and line.startswith('#')):
            continue
        elif line == '--- old':
            field = 'old'
        elif line == '--- new':
            field = 'new'
        elif line == '+++':
            field = None
        elif field:
            cur[field].append(line)
        elif ': ' in line:
            key, value = line.split(': ', 1)
            cur[key] = value
    return mutants


def main():
    mutants = parse(sys.argv[2])
    if sys.argv[1] == 'list':
        for m in mutants:
            print('\t'.join((m['name'], m['file'], m['test'])))
        return 0
    m = next(m for m in mutants if m['name'] == sys.argv[3])
    path = sys.argv[4] + '/' + m['file']
    text = open(path).read()
    old = '\n'.join(m['old']) + '\n'
    new = '\n'.join(m['new']) + '\n' if m['new'] else ''
    if text.count(old) != 1:
        print('%s: the old lines occur %d times' % (m['name'], text.count(old)), file=sys.stderr)
        return 1
    open(path, 'w').write(text.replace(old, new))
    return 0


sys.exit(main())
