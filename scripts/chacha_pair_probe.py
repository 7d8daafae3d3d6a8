#!/usr/bin/env python3
"""Times ChaCha's double round on this CPU, one batch against two batches
interleaved (the code `gen_chacha_pair.py` generates), with their real
dependencies, for AVX2 (8 blocks a batch) and SSSE3 (4 blocks).

The kernels choose the pair whenever two batches remain. That was measured
on one CPU (Zen 4) and llvm-mca's models disagree with each other about
others (see docs/PERFORMANCE.md), so this probe lets any machine answer the
question for itself in a few seconds:

    python3 scripts/chacha_pair_probe.py          # cycles per batch, ratio
    python3 scripts/chacha_pair_probe.py --mca    # and llvm-mca's models

The one-batch code is the schedule of `chacha/x86_avx2.rs`'s `rounds_asm`
and `x86_ssse3_poly1305.rs`'s rounds without hashing: two quarter rounds a
step, one word in a stack slot. Both codes are checked by interpretation
against a plain double round before they are timed. x86-64 Linux with gcc;
elsewhere it says so and exits 0.
"""

import importlib.util
import platform
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("gen", HERE / "gen_chacha_pair.py")
gen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen)

MCA_CPUS = ["znver2", "znver3", "skylake", "icelake-server"]


def one_batch():
    """(code, entry assignment) of the one-batch double round: words 0-14 in
    registers 0-14, word 15 in its slot, register 15 the first temporary."""
    code = []

    def qr2(a1, b1, c1, d1, a2, b2, c2, d2, t):
        # Two chains on named registers: pseudo-words 0-7 stand for them.
        regs = (a1, b1, c1, d1, a2, b2, c2, d2)
        gen.quarter_rounds(code, [(0, (0, 1, 2, 3)), (0, (4, 5, 6, 7))],
                           {(0, i): r for i, r in enumerate(regs)}, -1, t)

    slot = gen.slot((0, 15))
    # The kernel's steps: registers hold words; the slot swaps 8 and 15.
    qr2(0, 4, 8, 12, 1, 5, 9, 13, 15)
    gen.ISA.mov(code, gen.y(15), slot)
    gen.ISA.mov(code, slot, gen.y(8))
    qr2(2, 6, 10, 14, 3, 7, 11, 15, 8)
    qr2(0, 5, 10, 15, 1, 6, 11, 12, 8)
    gen.ISA.mov(code, gen.y(8), slot)
    gen.ISA.mov(code, slot, gen.y(15))
    qr2(2, 7, 8, 13, 3, 4, 9, 14, 15)
    return code, {(0, i): i for i in range(15)}


def check_one(code, start):
    """The one-batch code against three plain double rounds."""
    rng = random.Random(2)
    at = lambda w: gen.ISA.width * (16 * w[0] + w[1])  # noqa: E731
    state = [rng.getrandbits(32) for _ in range(16)]
    mem = {at((0, i)): state[i] for i in range(16)}
    regs = [0] * gen.NREGS
    for w, r in start.items():
        regs[r] = mem[at(w)]
    for _ in range(3):
        gen.interpret(code, regs, mem)
    got = [regs[i] for i in range(15)] + [mem[at((0, 15))]]
    want = state
    for _ in range(3):
        want = gen.reference(want)
    if got != want:
        sys.exit(f"one-batch {gen.ISA.name} double round is wrong")


def function(name, entry, code):
    body = [line.replace("{s}", "rsi").replace("{r16}", "ROT16").replace("{r8}", "ROT8")
            for line in entry + code]
    lines = [f".globl {name}", f"{name}:"] + body[:len(entry)] + ["1:"] + body[len(entry):]
    lines += ["dec rdi", "jnz 1b"] + (["vzeroupper"] if gen.ISA.vex else []) + ["ret"]
    return lines


DRIVER = r"""
#include <stdio.h>
#include <string.h>
#include <time.h>
static unsigned char big[4096 + 4096] __attribute__((aligned(4096)));
static const unsigned char rot16[16] = {2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13};
static const unsigned char rot8[16] = {3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14};
void clock_probe(long, void *);
%(decls)s
static double ns(void (*f)(long, void *), long n, void *buf) {
    double best = 1e30;
    for (int run = 0; run < 11; run++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        f(n, buf);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double t = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n;
        if (t < best) best = t;
    }
    return best;
}
/* Each function at 16 offsets of its array within a page: the best and the
   worst, since a load whose address matches an earlier store's in the low
   12 bits can wait on it falsely. */
static void run(const char *name, void (*f)(long, void *), int width, double cycle) {
    double lo = 1e30, hi = 0;
    for (int off = 0; off < 4096; off += 256) {
        unsigned char *buf = big + off;
        for (int m = 0; m < width; m += 16) {  /* the pair's mask slots 32, 33 */
            memcpy(buf + 32 * width + m, rot16, 16);
            memcpy(buf + 33 * width + m, rot8, 16);
        }
        double c = ns(f, 20000, buf) / cycle;
        if (c < lo) lo = c;
        if (c > hi) hi = c;
    }
    printf("%%s %%f %%f\n", name, lo, hi);
}
int main(void) {
    double cycle = ns(clock_probe, 1000000, big) / 64;
    printf("clock %%.0f %%.0f\n", 1000 / cycle, 1000 / cycle);
%(calls)s
    return 0;
}
"""


def main():
    if platform.machine() not in ("x86_64", "AMD64") or not shutil.which("gcc"):
        print("chacha_pair_probe: x86-64 with gcc only; nothing to do here")
        return
    flags = open("/proc/cpuinfo").read()
    asm = [".intel_syntax noprefix", ".section .rodata", ".balign 32",
           "ROT16: .byte " + ",".join(map(str, [2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13] * 2)),
           "ROT8: .byte " + ",".join(map(str, [3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14] * 2)),
           ".text", ".globl clock_probe", "clock_probe:", "1:"] + ["add rax, 1"] * 64 + [
           "dec rdi", "jnz 1b", "ret"]
    names, loops = [], {}
    for isa in ("avx2", "ssse3"):
        if f" {isa} " not in flags.replace("\n", " "):
            print(f"{isa}: not on this CPU, skipped")
            continue
        gen.ISA = gen.Isa(isa)
        code, start = one_batch()
        check_one(code, start)
        entry = []
        for w, r in start.items():
            gen.ISA.mov(entry, gen.y(r), gen.slot(w))
        asm += function(f"one_{isa}", entry, code)
        loops[f"one_{isa}"] = code
        pstart, _, pcode = gen.loop_body()
        gen.check(pstart, pcode)
        entry = []
        for w, r in pstart.items():
            gen.ISA.mov(entry, gen.y(r), gen.slot(w))
        asm += function(f"pair_{isa}", entry, pcode)
        loops[f"pair_{isa}"] = pcode
        names += [f"one_{isa}", f"pair_{isa}"]
    if not names:
        return
    asm.append('.section .note.GNU-stack,"",@progbits')
    decls = "\n".join(f"void {n}(long, void *);" for n in names)
    calls = "\n".join(f'    run("{n}", {n}, {32 if "avx2" in n else 16}, cycle);' for n in names)
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "p.S").write_text("\n".join(asm) + "\n")
        (Path(d) / "d.c").write_text(DRIVER % {"decls": decls, "calls": calls})
        subprocess.run(["gcc", "-O2", "-o", f"{d}/probe", f"{d}/d.c", f"{d}/p.S"], check=True)
        out = subprocess.run([f"{d}/probe"], check=True, capture_output=True, text=True).stdout
        cycles = {k: (float(lo), float(hi)) for k, lo, hi in (line.split() for line in out.splitlines())}
        print(f"clock {cycles.pop('clock')[0]:.0f} MHz (dependent ADDs); cycles per double round "
              "of one batch (a pair's halved), best and worst of 16 array offsets in a page")
        for isa in ("avx2", "ssse3"):
            if f"one_{isa}" in cycles:
                one, pair = cycles[f"one_{isa}"], [c / 2 for c in cycles[f"pair_{isa}"]]
                print(f"  {isa:6} one batch {one[0]:5.1f}-{one[1]:5.1f}   pair {pair[0]:5.1f}-{pair[1]:5.1f}"
                      f"   pair speed-up {one[0] / pair[0]:.3f}x (best), {one[1] / pair[1]:.3f}x (worst)")
        if "--mca" in sys.argv and shutil.which("llvm-mca"):
            for name in names:
                (Path(d) / f"{name}.s").write_text(
                    ".intel_syntax noprefix\n" + "\n".join(loops[name]).replace("{s}", "rsi")
                    .replace("{r16}", "ROT16").replace("{r8}", "ROT8") + "\n")
            print("llvm-mca, one batch / pair per batch:")
            for isa in ("avx2", "ssse3"):
                if f"one_{isa}" not in cycles:
                    continue
                row = []
                for cpu in MCA_CPUS:
                    got = []
                    for name in (f"one_{isa}", f"pair_{isa}"):
                        r = subprocess.run(["llvm-mca", f"-mcpu={cpu}", "-iterations=200",
                                            f"{d}/{name}.s"], capture_output=True, text=True)
                        total = next((int(line.split()[-1]) for line in r.stdout.splitlines()
                                      if line.startswith("Total Cycles")), None)
                        got.append(total / 200 if total else float("nan"))
                    row.append(f"{cpu} {got[0]:.1f} / {got[1] / 2:.1f}")
                print(f"  {isa:6} " + ", ".join(row))


if __name__ == "__main__":
    main()
