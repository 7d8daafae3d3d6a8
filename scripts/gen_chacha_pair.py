#!/usr/bin/env python3
"""Generates crates/catalogue/src/chacha/x86_avx2/pair.rs and
x86_ssse3/pair.rs: ChaCha's double round on two batches at once (8 blocks
each in ymm registers, 4 in xmm), as assembly.

One batch (one state word of each block per vector register) leaves the
vector pipes idle: each quarter round is a chain of 16 dependent
instructions, a round's four chains take longer than their 64 instructions
need to issue, and the next round waits for all of them. Two batches
interleaved double the independent work, but their 32 state words do not fit
the 16 registers. So the double round is cut into four steps, each two
quarter rounds of each batch (8 registers of words per batch, 16 in all);
the words a step does not use live in an array on the stack (32 slots for
the words, two for the rotations' byte masks: see `Isa`). Per step:

  * one register is the shifts' temporary; the 16th word, the `c` word of one
    quarter round, stays in memory (`c += d` reads it from memory into the
    temporary and stores it back, and `b ^= c` reads the temporary);
  * between steps, words leave (stored only if changed since they were loaded)
    and arrive (loaded) by Belady's furthest-next-use rule, so a word the next
    step shares stays in its register.

The loop's register assignment at its end is brought back to the one at its
start with register moves. The script checks the result by interpreting it on
random states against a plain double round, and writes the Rust files.
Deterministic.

    python3 scripts/gen_chacha_pair.py            # writes the files
    python3 scripts/gen_chacha_pair.py --check    # fails if they differ
"""

import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COLUMNS = [(0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15)]
DIAGONALS = [(0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14)]
# The four steps of a double round: two quarter rounds of each batch (0, 1).
STEPS = [[(b, q) for b in (0, 1) for q in qs]
         for qs in (COLUMNS[:2], COLUMNS[2:], DIAGONALS[:2], DIAGONALS[2:])]
NREGS = 16
NEVER = 10**6


class Isa:
    """AVX2 (ymm, three-operand VEX forms) or SSSE3 (xmm, two-operand: a
    result that is not its first operand costs a copy)."""

    def __init__(self, name):
        self.name = name
        self.vex = name == "avx2"
        self.reg = "ymm" if self.vex else "xmm"
        self.width = 32 if self.vex else 16
        self.ptr = "ymmword ptr" if self.vex else "xmmword ptr"
        # Where `pshufb` reads the rotations' byte masks: copies in slots 32
        # and 33 of the array. Read from the static masks instead, the loads
        # falsely waited on the array's stores whenever a mask's address
        # matched a slot's in its low 12 bits (the core guesses a load's
        # dependence on earlier stores from those bits): on Zen 4 the double
        # round took 108-127 cycles instead of 86 for 5 of 16 array offsets.
        # Inside the array, no slot shares a mask's low bits.
        self.masks = {16: f"{self.ptr} [{{s}} + {32 * self.width}]",
                      8: f"{self.ptr} [{{s}} + {33 * self.width}]"}

    def op(self, code, ins, dst, a, b):
        """dst = a <ins> b."""
        if self.vex:
            code.append(f"v{ins} {dst}, {a}, {b}")
            return
        if dst != a:
            code.append(f"movdqa {dst}, {a}")
        code.append(f"{ins} {dst}, {b}")

    def mov(self, code, dst, src):
        code.append(f"{'v' if self.vex else ''}movdqa {dst}, {src}")


ISA = Isa("avx2")


def slot(w):
    """The memory operand of word w = (batch, index)."""
    return "%s [{s} + %d]" % (ISA.ptr, ISA.width * (16 * w[0] + w[1]))


def y(r):
    return "%s%d" % (ISA.reg, r)


def quarter_rounds(code, chains, reg, memc, t):
    """Two quarter rounds of each batch, interleaved: each half of a quarter
    round for all four chains before the next half. Chain `memc` keeps its c
    in memory; `t` is the temporary."""
    def r(bt, i):
        return y(reg[(bt, i)])

    op = ISA.op
    for half in (("shuf", 16), ("shift", 20, 12), ("shuf", 8), ("shift", 25, 7)):
        if half[0] == "shuf":
            # a += b; d ^= a; d <<<= 16 or 8.
            for bt, (a, b, c, d) in chains:
                op(code, "paddd", r(bt, a), r(bt, a), r(bt, b))
            for bt, (a, b, c, d) in chains:
                op(code, "pxor", r(bt, d), r(bt, d), r(bt, a))
            for bt, (a, b, c, d) in chains:
                op(code, "pshufb", r(bt, d), r(bt, d), ISA.masks[half[1]])
        else:
            # c += d; b ^= c; b <<<= 12 or 7.
            _, right, left = half
            for k, (bt, (a, b, c, d)) in enumerate(chains):
                if k == memc:
                    op(code, "paddd", y(t), r(bt, d), slot((bt, c)))
                    ISA.mov(code, slot((bt, c)), y(t))
                else:
                    op(code, "paddd", r(bt, c), r(bt, c), r(bt, d))
            for k, (bt, (a, b, c, d)) in enumerate(chains):
                op(code, "pxor", r(bt, b), r(bt, b), y(t) if k == memc else r(bt, c))
            for bt, (a, b, c, d) in chains:
                op(code, "psrld", y(t), r(bt, b), right)
                op(code, "pslld", r(bt, b), r(bt, b), left)
                op(code, "por", r(bt, b), r(bt, b), y(t))


def words_of(step):
    return {(bt, i) for bt, q in step for i in q}


def double_round(reg, t):
    """The loop body from register assignment `reg` (word -> register, the
    temporary `t` free): (code, the assignment at its end, changed words)."""
    # Every word in a register at the start was changed by the iteration before.
    code, reg, dirty = [], dict(reg), set(reg)
    n = len(STEPS)
    for k, step in enumerate(STEPS):
        future = [words_of(STEPS[(k + j) % n]) for j in range(1, n + 1)]

        def nextuse(w):
            return next((j for j, f in enumerate(future) if w in f), NEVER)

        def evict(w):
            r = reg.pop(w)
            if w in dirty:
                ISA.mov(code, slot(w), y(r))
                dirty.discard(w)
            return r

        # The chain whose c stays in memory: one whose c is there already.
        memc = next((i for i, (bt, q) in enumerate(step) if (bt, q[2]) not in reg), 0)
        mem_word = (step[memc][0], step[memc][1][2])
        if mem_word in reg:
            evict(mem_word)
        need = words_of(step) - {mem_word}
        free = sorted(set(range(NREGS)) - set(reg.values()) - {t})
        missing = sorted(w for w in need if w not in reg)
        while len(free) < len(missing):
            free.append(evict(max((w for w in reg if w not in need), key=nextuse)))
            free.sort()
        for w in missing:
            reg[w] = free.pop(0)
            ISA.mov(code, y(reg[w]), slot(w))
        quarter_rounds(code, step, reg, memc, t)
        dirty |= need
    return code, reg, dirty


def loop_body():
    """The double round as a loop body that starts and ends with the same
    assignment: (entry assignment, temporary, code)."""
    t = NREGS - 1
    _, start, _ = double_round({}, t)  # the assignment a steady loop settles in
    code, end, dirty = double_round(start, t)
    for w in [w for w in end if w not in start]:
        if w in dirty:
            ISA.mov(code, slot(w), y(end[w]))
        del end[w]
    # Permute the registers back; `t` breaks cycles.
    at = {r: w for w, r in end.items()}
    moves = {w: end[w] for w in end if end[w] != start[w]}
    while moves:
        for w, src in list(moves.items()):
            if start[w] not in at:
                ISA.mov(code, y(start[w]), y(src))
                del at[src], moves[w]
                at[start[w]] = w
                break
        else:
            w, src = next(iter(moves.items()))
            ISA.mov(code, y(t), y(src))
            del at[src]
            at[t], moves[w] = w, t
    for w in start:
        if w not in end:
            ISA.mov(code, y(start[w]), slot(w))
    return start, t, code


# ---- the check: interpret the code on random states ----

M32 = 0xFFFFFFFF


def rotl(x, n):
    return ((x << n) | (x >> (32 - n))) & M32


def reference(state):
    x = list(state)

    def qr(a, b, c, d):
        x[a] = (x[a] + x[b]) & M32; x[d] = rotl(x[d] ^ x[a], 16)
        x[c] = (x[c] + x[d]) & M32; x[b] = rotl(x[b] ^ x[c], 12)
        x[a] = (x[a] + x[b]) & M32; x[d] = rotl(x[d] ^ x[a], 8)
        x[c] = (x[c] + x[d]) & M32; x[b] = rotl(x[b] ^ x[c], 7)

    for q in COLUMNS + DIAGONALS:
        qr(*q)
    return x


def interpret(lines, regs, mem):
    """Runs the code on one lane: regs a list of 16 words, mem a dict offset -> word."""
    def is_reg(op):
        return op.startswith(ISA.reg) and "ptr" not in op

    def offset(op):
        return int(op.split("+")[1].rstrip("]").strip())

    def val(op):
        return regs[int(op[3:])] if is_reg(op) else mem[offset(op)]

    for line in lines:
        ins, rest = line.split(" ", 1)
        ops = [o.strip() for o in rest.split(",")]
        ins = ins[1:] if ISA.vex else ins
        if ins == "movdqa":
            if is_reg(ops[0]):
                regs[int(ops[0][3:])] = val(ops[1])
            else:
                mem[offset(ops[0])] = val(ops[1])
            continue
        # VEX: dst, a, b; SSE: dst (= a), b.
        dst = int(ops[0][3:])
        a, b = (ops[1], ops[2]) if ISA.vex else (ops[0], ops[1])
        x = val(a)
        if ins == "pshufb":
            regs[dst] = rotl(x, next(n for n, m in ISA.masks.items() if m == b))
        elif ins in ("psrld", "pslld"):
            n = int(b)
            regs[dst] = (x >> n) if ins == "psrld" else (x << n) & M32
        else:
            y_ = val(b)
            regs[dst] = {"paddd": (x + y_) & M32, "pxor": x ^ y_, "por": x | y_}[ins]


def check(start, code, rounds=3):
    rng = random.Random(1)
    at = lambda w: ISA.width * (16 * w[0] + w[1])  # noqa: E731
    for _ in range(4):
        states = [[rng.getrandbits(32) for _ in range(16)] for _ in range(2)]
        mem = {at((bt, i)): states[bt][i] for bt in (0, 1) for i in range(16)}
        regs = [0] * NREGS
        for w, r in start.items():  # the entry loads
            regs[r] = mem[at(w)]
        for _ in range(rounds):
            interpret(code, regs, mem)
        for w, r in start.items():  # the exit stores
            mem[at(w)] = regs[r]
        for bt in (0, 1):
            want = states[bt]
            for _ in range(rounds):
                want = reference(want)
            if [mem[at((bt, i))] for i in range(16)] != want:
                sys.exit(f"generated {ISA.name} double round is wrong (batch {bt})")


def rust(start, code):
    blocks, vec, feature, load = ((8, "__m256i", "avx2", "_mm256_load_si256") if ISA.vex
                                  else (4, "__m128i", "ssse3", "_mm_load_si128"))
    entry, leave = [], []
    for w, r in sorted(start.items()):
        ISA.mov(entry, y(r), slot(w))
        ISA.mov(leave, slot(w), y(r))
    mem_ops = sum("ptr [{s}" in line and not any(m in line for m in ISA.masks.values())
                  for line in code)
    lines = entry + ["2:"] + code + ["dec {n}", "jnz 2b"] + leave
    body = "\n".join(f'            "{line}",' for line in lines)
    clobbers = "\n".join(f'            out("{y(r)}") _,' for r in range(NREGS))
    return f"""\
//! ChaCha's double round on two {blocks}-block {ISA.name.upper()} batches at once, as
//! assembly: four steps of two quarter rounds of each batch, the words a step
//! does not use in a 32-slot array, one register the shifts' temporary, the
//! rotations' byte masks copied beside the array.
//! Generated by `scripts/gen_chacha_pair.py` (see there why): do not edit by
//! hand. Constant time: fixed register and memory operations, no
//! data-dependent address or branch.

use core::arch::asm;
use core::arch::x86_64::{{{vec}, {load}}};

/// `R / 2` double rounds on the two batches `x[..16]` and `x[16..]`, one
/// state word of {blocks} blocks in each vector; `x[32]` and `x[33]` are
/// overwritten with the masks of the 16- and 8-bit rotations, which the
/// rounds read from there (why: `scripts/gen_chacha_pair.py`, `Isa`). A
/// double round is {len(code)} instructions, {mem_ops} of them loads and stores of
/// words (between steps, and the `c` word kept in memory).
///
/// # Safety
/// The CPU must support {ISA.name.upper()}.
#[inline]
#[target_feature(enable = "{feature}")]
pub(in crate::chacha) unsafe fn rounds<const R: usize>(x: &mut [{vec}; 34]) {{
    const {{ assert!(R >= 2 && R.is_multiple_of(2), "whole double rounds") }};
    // SAFETY: aligned loads of the two static masks (aligned to their size);
    // {ISA.name.upper()} instructions on registers and on `x`, 34 aligned
    // {ISA.width}-byte slots. The caller has {ISA.name.upper()}.
    unsafe {{
        x[32] = {load}(super::ROT16.0.as_ptr().cast());
        x[33] = {load}(super::ROT8.0.as_ptr().cast());
        asm!(
{body}
            s = in(reg) x.as_mut_ptr(),
            n = inout(reg) R / 2 => _,
{clobbers}
            options(nostack),
        );
    }}
}}
"""


def main():
    global ISA
    for name in ("avx2", "ssse3"):
        ISA = Isa(name)
        out = ROOT / f"crates/catalogue/src/chacha/x86_{name}/pair.rs"
        start, _, code = loop_body()
        check(start, code)
        text = rust(start, code)
        if "--check" in sys.argv:
            if not out.exists() or out.read_text() != text:
                sys.exit(f"{out.relative_to(ROOT)} differs from the generator's output")
            continue
        out.parent.mkdir(exist_ok=True)
        out.write_text(text)
        print(f"{out.relative_to(ROOT)}: {len(code)} instructions a double round")


if __name__ == "__main__":
    main()
