#!/usr/bin/env python3
"""Generates crates/catalogue/src/aes/x86_ssse3_sbox.rs: the depth-16 bitsliced
AES S-box circuits of crates/catalogue/src/aes/bitsliced.rs (`sub_bytes_depth16`,
`inv_sub_bytes_depth16`) as SSE assembly for the SSSE3 AES.

Why those and not the smaller `sub_bytes_no_nots` / `inv_sub_bytes_no_nots`
(113 / 115 gates, 27 / 32 deep): a round of the eight blocks in flight waits
on the S-box's longest path rather than on the vector pipes, and 16 gates
deep at 12 more gates each measured 1.015-1.031x in every mode and both
directions (AES-128 and AES-256, XTS, CBC decryption, CTR; Zen 4, both
circuits in one process; see docs/PERFORMANCE-LOG.md).

SSE logic instructions overwrite their first operand, so a gate whose inputs
both stay live costs a copy, and the circuits have more live values than the
sixteen registers. A round depends on the whole round before it, so the
order matters too: the out-of-order core issues the oldest ready
instruction first, and a gate on the longest remaining path issued late
delays the round. The script reorders the gates (seeded randomised greedy
list scheduling that prefers gates with the longest path to the outputs,
then gates whose inputs die; the order with the fewest copies and spills of
600 tries), allocates registers with Belady's furthest-next-use
eviction (spill slots on the stack; a spilled value used as a second operand
is read from memory in the gate), checks the result by interpreting it on
random words against the circuit, and writes the Rust file. Deterministic:
the same circuits and seeds give the same file.

    python3 scripts/gen_ssse3_sbox.py            # writes the file
    python3 scripts/gen_ssse3_sbox.py --check    # fails if it differs
"""

import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "crates/catalogue/src/aes/bitsliced.rs"
OUT = ROOT / "crates/catalogue/src/aes/x86_ssse3_sbox.rs"
INS = ["u%d" % i for i in range(8)]
OUTS = ["s%d" % i for i in range(8)]
NREGS = 16
NEVER = 10**9
# The scheduler's seeds for the forward and the inverse circuit.
FWD_SEED, INV_SEED = 7, 2
# How much a gate's longest path to the outputs counts against an input
# dying with it (each worth 1). 0 orders for fewest copies only, and then
# hill climbing over adjacent swaps cut them further; that order measured
# 1.5-2.6% slower (AES-128/256 ECB on Zen 4, in one process against this
# one) and llvm-mca's Zen 2, Zen 3, Skylake and Ice Lake models agree
# (see docs/PERFORMANCE-LOG.md). 1 trades a few copies for it; the climb, which
# would undo the order for them, is not run.
LATENCY_WEIGHT = 1.0


def circuit(name):
    body = SRC.read_text().split("pub(crate) fn %s" % name)[1].split("*state =")[0]
    return [m.groups() for m in re.finditer(r"let (\w+) = (\w+) ([\^&]) (\w+);", body)]


def allocate(order):
    """Two-operand code for `order`: (cost beyond the gates, code, output registers)."""
    uses = {}
    for i, (d, a, op, b) in enumerate(order):
        uses.setdefault(a, []).append(i)
        uses.setdefault(b, []).append(i)
    for o in OUTS:
        uses.setdefault(o, []).append(len(order))

    def nextuse(v, i):
        for u in uses.get(v, []):
            if u >= i:
                return u
        return NEVER

    reg, inreg, mem, free = {}, {}, set(), list(range(NREGS))
    for u in INS:
        r = free.pop(0)
        reg[u], inreg[r] = r, u
    code = []

    def getreg(i, protect):
        for r, v in list(inreg.items()):
            if nextuse(v, i) == NEVER:
                del inreg[r], reg[v]
                free.append(r)
        if free:
            return free.pop()
        _, r, v = max((nextuse(v, i), r, v) for r, v in inreg.items() if v not in protect)
        if v not in mem:
            code.append(("store", v, r))
            mem.add(v)
        del inreg[r], reg[v]
        return r

    for i, (d, a, op, b) in enumerate(order):
        na, nb = nextuse(a, i + 1), nextuse(b, i + 1)
        if na == NEVER and a in reg:
            first, second = a, b
        elif nb == NEVER and b in reg:
            first, second = b, a
        elif na == NEVER:
            first, second = a, b
        elif nb == NEVER:
            first, second = b, a
        else:
            first = second = None
        if first is not None:
            if first not in reg:
                r = getreg(i, {a, b})
                code.append(("load", first, r))
                reg[first], inreg[r] = r, first
            r = reg[first]
            code.append((op, r, ("r", reg[second]) if second in reg else ("m", second)))
            del inreg[r], reg[first]
            mem.discard(first)
        else:
            src = a if a in reg else b
            oth = b if src == a else a
            r = getreg(i, {a, b})
            code.append(("mov", r, ("r", reg[src]) if src in reg else ("m", src)))
            code.append((op, r, ("r", reg[oth]) if oth in reg else ("m", oth)))
        reg[d], inreg[r] = r, d
    for o in OUTS:
        if o not in reg:
            r = getreg(len(order), set(OUTS))
            code.append(("load", o, r))
            reg[o], inreg[r] = r, o
    return len(code) - len(order), code, reg


def heights(gates):
    """Each signal's longest path (in gates) to the circuit's outputs."""
    h = {o: 0 for o in OUTS}
    for d, a, op, b in reversed(gates):
        x = h.get(d, 0) + 1
        h[a] = max(h.get(a, 0), x)
        h[b] = max(h.get(b, 0), x)
    return h


def greedy(gates, rng, temp):
    height = heights(gates)
    left = {}
    for d, a, op, b in gates:
        left[a] = left.get(a, 0) + 1
        left[b] = left.get(b, 0) + 1
    for o in OUTS:
        left[o] = left.get(o, 0) + 1
    avail, rem, order = set(INS), list(gates), []
    while rem:
        ready = [g for g in rem if g[1] in avail and g[3] in avail]
        g = max(
            ready,
            key=lambda g: LATENCY_WEIGHT * height[g[0]]
            + (left[g[1]] == 1)
            + (left[g[3]] == 1)
            + rng.random() * temp,
        )
        rem.remove(g)
        order.append(g)
        avail.add(g[0])
        left[g[1]] -= 1
        left[g[3]] -= 1
    return order


def climb(order, rng, rounds):
    best = allocate(order)[0]
    for _ in range(rounds):
        i = rng.randrange(len(order) - 1)
        g, h = order[i], order[i + 1]
        if g[0] in (h[1], h[3]):
            continue
        order[i], order[i + 1] = h, g
        c = allocate(order)[0]
        if c <= best:
            best = c
        else:
            order[i], order[i + 1] = g, h
    return order


def schedule(gates, seed, tries, climbs):
    rng = random.Random(seed)
    # The circuit's own order is a candidate only when order is for copies.
    best = (NEVER if LATENCY_WEIGHT else allocate(gates)[0], gates)
    for _ in range(tries):
        o = greedy(gates, rng, rng.choice([0.3, 0.7, 1.5, 2.5, 4]))
        c = allocate(o)[0]
        if c < best[0]:
            best = (c, o)
    if LATENCY_WEIGHT:
        return list(best[1])
    return climb(list(best[1]), rng, climbs)


def check(order, code, reg):
    rng = random.Random(3)
    for _ in range(20):
        val = {u: rng.getrandbits(64) for u in INS}
        regs = {i: val[u] for i, u in enumerate(INS)}
        for d, a, op, b in order:
            val[d] = val[a] ^ val[b] if op == "^" else val[a] & val[b]
        mem = {}
        for k, x, y in code:
            if k == "store":
                mem[x] = regs[y]
                continue
            if k == "load":
                regs[y] = mem[x]
                continue
            v = regs[y[1]] if y[0] == "r" else mem[y[1]]
            if k == "mov":
                regs[x] = v
            elif k == "^":
                regs[x] ^= v
            else:
                regs[x] &= v
        for o in OUTS:
            assert regs[reg[o]] == val[o], o


def rust(fname, doc, order):
    cost, code, reg = allocate(order)
    check(order, code, reg)
    slots = {}

    def m(v):
        slots.setdefault(v, len(slots))
        return "xmmword ptr [{m} + %d]" % (16 * slots[v])

    def opnd(y):
        return "{r%d}" % y[1] if y[0] == "r" else m(y[1])

    lines = []
    for k, x, y in code:
        if k == "store":
            lines.append("movdqa %s, {r%d}" % (m(x), y))
        elif k == "load":
            lines.append("movdqa {r%d}, %s" % (y, m(x)))
        else:
            ins = {"mov": "movdqa", "^": "pxor", "&": "pand"}[k]
            lines.append("%s {r%d}, %s" % (ins, x, opnd(y)))
    copies = sum(1 for c in code if c[0] == "mov")
    spills = sum(1 for c in code if c[0] == "store")
    held = {reg[o] for o in OUTS}
    nslots = max(1, len(slots))
    out = [
        "/// %s" % doc,
        "/// %d instructions: %d gates, %d copies, %d spills, %d reloads."
        % (len(lines), len(order), copies, spills, cost - copies - spills),
        "#[inline(always)]",
        "pub(super) fn %s(x: &mut [__m128i; 8]) {" % fname,
        "    let mut spill = MaybeUninit::<[__m128i; %d]>::uninit();" % nslots,
        "    // Plane i is bit i: input u_k is x[7 - k].",
        "    let [%s] = *x;"
        % ", ".join(("mut r%d" % i) if i in held else ("r%d" % i) for i in range(7, -1, -1)),
    ]
    hi = [i for i in range(8, 16) if i in held]
    if hi:
        out.append(
            "    let (%s): (%s);" % (", ".join("r%d" % i for i in hi), ", ".join("__m128i" for _ in hi))
        )
    out += [
        "    // SAFETY: SSE2 instructions (x86-64 baseline) on the register",
        "    // operands and on `spill`, %d aligned 16-byte slots of the stack." % nslots,
        "    unsafe {",
        "        asm!(",
    ]
    out += ['            "%s",' % l for l in lines]
    for i in range(8):
        out.append("            r%d = inout(xmm_reg) r%d%s," % (i, i, "" if i in held else " => _"))
    for i in range(8, 16):
        out.append("            r%d = out(xmm_reg) %s," % (i, ("r%d" % i) if i in held else "_"))
    out += [
        "            m = in(reg) spill.as_mut_ptr(),",
        "            options(nostack, preserves_flags),",
        "        );",
        "    }",
        "    *x = [%s];" % ", ".join("r%d" % reg["s%d" % (7 - i)] for i in range(8)),
        "}",
    ]
    return "\n".join(out)


HEADER = """\
//! The depth-16 S-box circuits of [`super::bitsliced`] (`sub_bytes_depth16`,
//! `inv_sub_bytes_depth16`) as SSE assembly for the SSSE3 AES: the gates
//! reordered and the sixteen registers allocated (spilling to the stack
//! where more values are live) so that the two-operand instructions need few
//! copies; the compiler's allocation of the smaller circuits had taken 10 to
//! 25 instructions more a round. Generated by
//! `scripts/gen_ssse3_sbox.py`: do not edit by hand. Constant time: fixed
//! register and stack-slot operations, no data-dependent address or branch.

use core::arch::asm;
use core::arch::x86_64::__m128i;
use core::mem::MaybeUninit;
"""


def main():
    parts = [HEADER]
    for name, fname, doc, seed in [
        ("sub_bytes_depth16", "sub_bytes", "SubBytes without its NOTs (`sub_bytes_depth16`).",
         FWD_SEED),
        ("inv_sub_bytes_depth16", "inv_sub_bytes",
         "InvSubBytes without its NOTs (`inv_sub_bytes_depth16`).", INV_SEED),
    ]:
        order = schedule(circuit(name), seed, 600, 20000)
        parts.append(rust(fname, doc, order))
    text = "\n".join(parts) + "\n"
    if "--check" in sys.argv:
        if OUT.read_text() != text:
            sys.exit("x86_ssse3_sbox.rs differs from the generator's output")
        return
    OUT.write_text(text)


if __name__ == "__main__":
    main()
