#!/usr/bin/env python3
"""Checks the SASS of the wgmma probe for accesses to the registers of a wgmma still in flight.

    cuobjdump -sass wgmma-probe > probe.sass && sasscheck.py probe.sass

For every HGMMA (wgmma.mma_async) of every kernel, follows each control-flow path from it until a
WARPGROUP.DEPBAR.LE gsb0, 0x0 (wgmma.wait_group 0) and reports every other instruction on the way
that writes or reads the HGMMA's A registers (register operand 2, four registers) or its
accumulators (operand 1, N / 2 registers for f32 with M = 64). HGMMA and WARPGROUP instructions
are skipped: wgmmas of one shape may chain their accumulators. A write is the hazard the PTX ISA
calls undefined (the A fragments and accumulators are read and written asynchronously); reads are
listed too. Exit status: 1 if any such write was found, 0 otherwise.

The register model is what this probe needs, not a full SASS decoder: the destination is the
first operand when it is a plain R register (the second after a predicate destination, as in
SHFL), 2 registers for .64 / .WIDE and for D* (fp64) opcodes, 4 for .128; the sources are the
other R registers. Indirect branches end the walk with a note.
"""
import re
import sys

INS = re.compile(r'^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;')
FUN = re.compile(r'^\s*Function : (\S+)')
PRED = re.compile(r'^(@!?U?P[T0-9]+)\s+(.*)$')


def parse(text):
    funcs, cur = {}, None
    for line in text.splitlines():
        m = FUN.match(line)
        if m:
            cur = m.group(1)
            funcs[cur] = []
            continue
        m = INS.match(line)
        if m and cur is not None:
            funcs[cur].append((int(m.group(1), 16), m.group(2)))
    return funcs


def split(ins):
    pred = None
    m = PRED.match(ins)
    if m:
        pred, ins = m.group(1), m.group(2)
    parts = ins.split(None, 1)
    ops = [o.strip() for o in parts[1].split(',')] if len(parts) > 1 else []
    return pred, parts[0], ops


def reg(tok):
    m = re.match(r'^[-|!]*R(\d+)(\.reuse)?\|?$', tok.strip())
    return int(m.group(1)) if m else None


def width(op):
    if '.128' in op:
        return 4
    if '.64' in op or '.WIDE' in op or re.match(r'^D(ADD|MUL|FMA|MNMX)', op):
        return 2
    return 1


def dest_and_sources(op, ops):
    dest, rest = set(), ops
    if ops:
        first = reg(ops[0])
        if first is not None:
            dest = {first + i for i in range(width(op))}
            rest = ops[1:]
        elif re.match(r'^!?P[T0-9]+$', ops[0]) and len(ops) > 1 and reg(ops[1]) is not None:
            dest = {reg(ops[1])}
            rest = ops[2:]
    src = {int(r) for o in rest for r in re.findall(r'\bR(\d+)\b', o)}
    return dest, src


def check(code):
    index = {addr: i for i, (addr, _) in enumerate(code)}
    found, notes = [], []
    for i, (addr, ins) in enumerate(code):
        _, op, ops = split(ins)
        if not op.startswith('HGMMA'):
            continue
        shape = re.match(r'HGMMA\.(\d+)x(\d+)x(\d+)', op)
        acc_regs = max(1, int(shape.group(2)) // 2) if shape else 4
        d0, a0 = reg(ops[0]), reg(ops[1]) if len(ops) > 1 else None
        dregs = {d0 + k for k in range(acc_regs)} if d0 is not None else set()
        aregs = {a0 + k for k in range(4)} if a0 is not None else set()  # None: A in shared memory
        seen, stack = set(), [i + 1]
        while stack:
            j = stack.pop()
            if j in seen or j >= len(code):
                continue
            seen.add(j)
            at, ins2 = code[j]
            pred, op2, ops2 = split(ins2)
            if op2.startswith('WARPGROUP.DEPBAR') and ops2[-1:] == ['0x0']:
                continue  # every wgmma group retired on this path
            if not op2.startswith(('HGMMA', 'WARPGROUP')):
                dest, src = dest_and_sources(op2, ops2)
                for what, regs in (('A', aregs), ('D', dregs)):
                    if dest & regs:
                        found.append((addr, at, 'writes ' + what, sorted(dest & regs), ins2))
                    if src & regs:
                        found.append((addr, at, 'reads ' + what, sorted(src & regs), ins2))
            if op2 == 'EXIT' and pred is None:
                continue
            if op2.startswith('BRA'):
                target = int(ops2[-1], 16) if ops2 and ops2[-1].startswith('0x') else None
                if target in index:
                    stack.append(index[target])
                if pred is None:
                    continue
            elif op2.startswith(('BRX', 'JMX', 'CALL', 'RET')):
                notes.append(f'HGMMA@{addr:04x}: {op2} at {at:04x} not followed')
                continue
            stack.append(j + 1)
    return found, notes


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    shown = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    funcs = parse(open(sys.argv[1]).read())
    writes = kernels = 0
    for name, code in funcs.items():
        hgmma = sum(1 for _, ins in code if split(ins)[1].startswith('HGMMA'))
        if not hgmma:
            continue
        kernels += 1
        found, notes = check(code)
        counts = {}
        for f in found:
            counts[f[2]] = counts.get(f[2], 0) + 1
        nw = sum(1 for f in found if f[2].startswith('writes'))
        writes += nw
        summary = ', '.join(f'{v} {k}' for k, v in sorted(counts.items())) or 'none'
        print(f'sasscheck {"FAIL" if nw else "ok"}: {name}: {hgmma} HGMMA; accesses to the '
              f'registers of an in-flight wgmma: {summary}')
        for hg, at, what, regs, ins in found[:shown]:
            print(f'    HGMMA at {hg:04x}, then {at:04x} {what} '
                  f'{",".join("R%d" % r for r in regs)}: {ins}')
        for n in notes:
            print('    note: ' + n)
    if not kernels:
        print('sasscheck: no HGMMA found (was the sm_90a image dumped?)')
        return 1
    return 1 if writes else 0


if __name__ == '__main__':
    sys.exit(main())
