#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Turn a checked-in symbol list (name@@VERSION / name@VERSION lines, as
`objdump -T` prints them) into a GNU ld version script.

Every version named in the list becomes a node; nodes of one family
(IBVERBS_1.x, RDMACM_1.x) inherit from the previous one, like rdma-core's
maps. Default versions (@@) are listed as global in their node; non-default
ones (@) are bound by .symver in the C source and need only the node (and
no `local: *` in it). Everything else is local.

usage: gen_version_script.py <symbols>... <output map>
"""
import re
import sys


def version_key(v):
    m = re.match(r'^(.*?)_(\d+(?:\.\d+)*)$', v)
    if not m:
        return (v, ())
    return (m.group(1), tuple(int(x) for x in m.group(2).split('.')))


def read_list(src, nodes, compat):
    with open(src) as f:
        for lineno, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            m = re.match(r'^([A-Za-z_][A-Za-z0-9_]*)(@@?)([A-Za-z0-9_.]+)$', line)
            if not m:
                sys.exit('%s:%d: not name@VERSION or name@@VERSION: %r' % (src, lineno, line))
            name, at, ver = m.groups()
            nodes.setdefault(ver, [])
            if at == '@@':
                nodes[ver].append(name)
            else:
                compat.add(ver)


def main():
    srcs, out = sys.argv[1:-1], sys.argv[-1]
    nodes = {}
    compat = set()
    for src in srcs:
        read_list(src, nodes, compat)
    src = srcs[0]
    versions = sorted(nodes, key=version_key)
    # A name bound by .symver to node V is looked up in V alone: a `local: *`
    # there would hide it. Hide everything else from a node without any.
    local_node = [v for v in versions if v not in compat]
    if not local_node:
        sys.exit('%s: every version has a non-default symbol, no node can hold local: *' % src)
    local_node = local_node[-1]
    lines = ['/* Generated from %s by gen_version_script.py: do not edit. */' % src.split('/')[-1]]
    prev = {}
    for ver in versions:
        family = version_key(ver)[0]
        # private ABIs (IBVERBS_PRIVATE_34) stand alone
        parent = prev.get(family) if 'PRIVATE' not in family else None
        lines.append('%s {' % ver)
        if nodes[ver]:
            lines.append('\tglobal:')
            lines.extend('\t\t%s;' % n for n in sorted(set(nodes[ver])))
        if ver == local_node:
            lines.append('\tlocal: *;')
        lines.append('}%s;' % (' ' + parent if parent else ''))
        lines.append('')
        prev[family] = ver
    with open(out, 'w') as f:
        f.write('\n'.join(lines))


if __name__ == '__main__':
    main()
