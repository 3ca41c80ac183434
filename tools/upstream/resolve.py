#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Resolve the conditionals on known macros in a C file, as unifdef does.

resolve.py -D NAME ... -U NAME ... <in >out: each #ifdef/#ifndef NAME (with its
#else and #endif) on a NAME given is replaced by the branch that holds; every
other preprocessor line is kept. An in-tree build has one kernel and no
userspace twin: what the out-of-tree module chooses at build time is chosen
once, in the series.
"""
import re
import sys

COND = re.compile(r'^\s*#\s*(ifdef|ifndef)\s+(\w+)\s*(/\*.*\*/)?\s*$')
OPEN = re.compile(r'^\s*#\s*if')
ELSE = re.compile(r'^\s*#\s*else\b')
ELIF = re.compile(r'^\s*#\s*elif\b')
ENDIF = re.compile(r'^\s*#\s*endif\b')


def resolve(lines, defined, undefined):
    out = []
    # one entry per open conditional: (resolved, branch taken now) where
    # resolved is False for a conditional passed through as it is
    stack = []

    def live():
        return all(taken for _, taken in stack)

    known = defined | undefined
    for n, line in enumerate(lines, 1):
        m = COND.match(line)
        if not m and OPEN.match(line) or ELIF.match(line):
            # a form this does not resolve (#if defined(X), #elif X) must not pass as it is
            if known & set(re.findall(r'\w+', line)):
                sys.exit('line %d: cannot resolve %s' % (n, line.strip()))
        if m and (m.group(2) in defined or m.group(2) in undefined):
            holds = (m.group(2) in defined) == (m.group(1) == 'ifdef')
            stack.append((True, holds))
            continue
        if OPEN.match(line):
            stack.append((False, True))
        elif ELIF.match(line) and stack and stack[-1][0]:
            sys.exit('line %d: #elif under a resolved conditional' % n)
        elif ELSE.match(line) and stack and stack[-1][0]:
            stack[-1] = (True, not stack[-1][1])
            continue
        elif ENDIF.match(line):
            if not stack:
                sys.exit('line %d: #endif without #if' % n)
            resolved, _ = stack.pop()
            if resolved:
                continue
        if live():
            out.append(line)
    if stack:
        sys.exit('unterminated conditional')
    # a resolved block may leave two blank lines where it stood
    text = re.sub(r'\n{3,}', '\n\n', ''.join(out))
    return text


def main():
    defined, undefined = set(), set()
    args = sys.argv[1:]
    while args:
        flag, name = args[0], args[1]
        (defined if flag == '-D' else undefined).add(name)
        if flag not in ('-D', '-U'):
            sys.exit('usage: resolve.py [-D NAME | -U NAME]... <in >out')
        args = args[2:]
    sys.stdout.write(resolve(sys.stdin.readlines(), defined, undefined))


if __name__ == '__main__':
    main()
