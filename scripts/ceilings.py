#!/usr/bin/env python3
"""Ceilings: how fast this x86-64 CPU's execution units let a row go.

Where ours and both libraries meet at the same speed, the question is whether
all three stop at the hardware or at the same mistake. This measures the
hardware side: small assembly loops of the instructions each kernel is made of,
timed on this CPU, turned into a ceiling in MiB/s per row and tier.

  * clock:  64 dependent ADDs an iteration, one a cycle (the way
            `clustercrypt bench` and libgcrypt's bench-slope measure it).
  * AESENC: latency (one dependent chain) and throughput (12 independent
            chains; 128-bit, and 256- and 512-bit VAES where the CPU has
            them).
  * AES-GCM (AES-NI + PCLMULQDQ): one round of eight AESENC carrying one
            block's GHASH work (load, byte swap, three PCLMULQDQ of
            Karatsuba, its middle operand, three accumulating XORs), the
            round every stitched kernel (AWS-LC's, libgcrypt's, ours) repeats.
  * ChaCha20: one double round of the vertical kernels (AVX-512: 16 blocks
            in zmm with VPROLD; AVX2: 8 blocks in ymm; SSSE3: 4 blocks in
            xmm, with the copies two-operand SSE needs before each shift),
            its instructions in a fixed shuffled
            order on 14 registers, so that no chain longer than a few
            instructions limits it.

The ceilings (B = bytes, c = cycles):
  aes-cbc encryption   16 B / (rounds x AESENC latency): the chain of one
                       block after the other, the next plaintext folded into
                       the last round's key.
  aes-ecb, -ctr, -xts, 16 B (32 with VAES-256, 64 with VAES-512) / (rounds
  aes-cbc decryption   x AESENC or AESDEC throughput).
  aes-gcm (aesni)      128 B / (8 GHASH-carrying rounds + the other rounds of
                       eight AESENC): the reduction, counters and stores
                       are left out, so the true bound is lower.
  chacha20             1024 B (AVX-512), 512 B (AVX2) or 256 B (SSSE3) /
                       (10 double rounds):
                       the feed-forward and the transposition are left out.

Each is an upper bound for kernels made of that instruction mix: it leaves out
dependencies, the front end and the memory system. A side measured above its
ceiling (by more than the timing noise) means the model is wrong, and is
flagged. compare.py --ceilings prints this table with the row's figures.

Usage:
  python3 scripts/ceilings.py             # this CPU's probes and ceilings
  python3 scripts/ceilings.py --json      # the same, machine-readable

x86-64 Linux with gcc; elsewhere it says so and exits 0. Python 3 standard
library only.
"""

import argparse
import json
import platform
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

MIB = 1048576.0
AES_ROUNDS = {128: 10, 256: 14}
# The 16-bit and 8-bit rotations are byte shuffles whose masks the kernels read
# from memory; the probe's mask sits at 64(%rsi).
MASK = "64(%rsi)"

# probe name -> (CPU flags it needs, the instructions of its body, how many
# times the body repeats in the loop, units the result is per: body repeats,
# or the instructions themselves for the one-instruction probes)
PROBES = {}


def probe(name, flags, body, repeat, per_instruction=False):
    units = len(body) * repeat if per_instruction else repeat
    PROBES[name] = (tuple(flags), body, repeat, units)


# A chain of dependent one-cycle ADDs of a register: Intel's cores from Golden
# Cove on fold an immediate ADD into the register's rename (a chain of
# `add $1, %rax` ran at about six a cycle on Emerald Rapids), a register
# operand they cannot.
probe("clock", (), ["add %rsi, %rax"], 64, per_instruction=True)
probe("aesenc_latency", ("aes",), ["aesenc %xmm15, %xmm0"], 32, per_instruction=True)
probe("aesenc_throughput", ("aes",), [f"aesenc %xmm15, %xmm{i}" for i in range(12)], 2,
      per_instruction=True)
probe("aesdec_throughput", ("aes",), [f"aesdec %xmm15, %xmm{i}" for i in range(12)], 2,
      per_instruction=True)
probe("vaesenc256_throughput", ("vaes", "avx2"),
      [f"vaesenc %ymm15, %ymm{i}, %ymm{i}" for i in range(12)], 2, per_instruction=True)
probe("vaesdec256_throughput", ("vaes", "avx2"),
      [f"vaesdec %ymm15, %ymm{i}, %ymm{i}" for i in range(12)], 2, per_instruction=True)
probe("vaesenc512_throughput", ("vaes", "avx512f"),
      [f"vaesenc %zmm15, %zmm{i}, %zmm{i}" for i in range(12)], 2, per_instruction=True)
probe("vaesdec512_throughput", ("vaes", "avx512f"),
      [f"vaesdec %zmm15, %zmm{i}, %zmm{i}" for i in range(12)], 2, per_instruction=True)
probe("aes8_round", ("aes", "avx"), [f"vaesenc %xmm15, %xmm{i}, %xmm{i}" for i in range(8)], 4)
# Eight AES states in xmm0-7, the round key in xmm15, the block in xmm8, the
# three products in xmm9-11, the three sums in xmm12-14; the powers of H at
# 16(%rsi) and 32(%rsi) and the byte-swap mask from memory, as in the kernels.
probe("gcm_round", ("aes", "pclmulqdq", "avx"), [
    "vmovdqu (%rsi), %xmm8",
    "vaesenc %xmm15, %xmm0, %xmm0",
    f"vpshufb {MASK}, %xmm8, %xmm8",
    "vaesenc %xmm15, %xmm1, %xmm1",
    "vpclmulqdq $0x00, 16(%rsi), %xmm8, %xmm9",
    "vaesenc %xmm15, %xmm2, %xmm2",
    "vpxor %xmm9, %xmm12, %xmm12",
    "vpclmulqdq $0x11, 16(%rsi), %xmm8, %xmm10",
    "vaesenc %xmm15, %xmm3, %xmm3",
    "vpxor %xmm10, %xmm13, %xmm13",
    "vpshufd $0x4e, %xmm8, %xmm11",
    "vaesenc %xmm15, %xmm4, %xmm4",
    "vpxor %xmm8, %xmm11, %xmm11",
    "vpclmulqdq $0x00, 32(%rsi), %xmm11, %xmm11",
    "vaesenc %xmm15, %xmm5, %xmm5",
    "vpxor %xmm11, %xmm14, %xmm14",
    "vaesenc %xmm15, %xmm6, %xmm6",
    "vaesenc %xmm15, %xmm7, %xmm7",
], 4)


def chacha_double_round(reg, sse):
    """The instructions of one ChaCha double round on 16 (zmm), 8 (ymm) or 4
    (xmm) blocks: per quarter round 4 adds, 4 XORs and 4 rotations (AVX-512:
    one VPROLD each; else 2 byte shuffles, 2 shift pairs and 2 ORs, and 2
    copies more on two-operand SSE), and but for AVX-512's 32 registers the
    swap of one word with the stack (a store and a load), in a fixed shuffled
    order."""
    zmm = reg == "zmm"
    def r(i):
        return f"%{reg}{i}"
    ops = []
    for _ in range(8):  # quarter rounds
        for _ in range(4):
            ops.append("add")
            ops.append("xor")
        if zmm:
            ops += ["rot"] * 4
            continue
        ops += ["shuf", "shuf", "shift", "shift", "shift", "shift", "or", "or"]
        if sse:
            ops += ["copy", "copy"]
    random.Random(1).shuffle(ops)
    out = []
    for k, op in enumerate(ops):
        d = r(k % 14)
        if sse:
            out.append({"add": f"paddd %xmm15, {d}", "xor": f"pxor %xmm15, {d}",
                        "or": f"por %xmm15, {d}", "shift": f"pslld $7, {d}",
                        "shuf": f"pshufb {MASK}, {d}", "copy": f"movdqa %xmm14, {d}"}[op])
        elif zmm:
            out.append({"add": f"vpaddd %zmm15, {d}, {d}", "xor": f"vpxord %zmm15, {d}, {d}",
                        "rot": f"vprold $7, {d}, {d}"}[op])
        else:
            out.append({"add": f"vpaddd %ymm15, {d}, {d}", "xor": f"vpxor %ymm15, {d}, {d}",
                        "or": f"vpor %ymm15, {d}, {d}", "shift": f"vpslld $7, {d}, {d}",
                        "shuf": f"vpshufb {MASK}, {d}, {d}"}[op])
    if not zmm:  # AVX-512's 32 registers hold the 16 words and no swap is needed
        mov = "movdqu" if sse else "vmovdqu"
        out += [f"{mov} {r(14)}, 128(%rsi)", f"{mov} 160(%rsi), {r(13)}"]
    return out


probe("chacha_avx512_double_round", ("avx512f",), chacha_double_round("zmm", False), 1)
probe("chacha_avx2_double_round", ("avx2",), chacha_double_round("ymm", False), 1)
probe("chacha_ssse3_double_round", ("ssse3",), chacha_double_round("xmm", True), 1)

DRIVER = r"""
#include <stdio.h>
#include <string.h>
#include <time.h>
static unsigned char buf[256] __attribute__((aligned(64)));
%(decls)s
static double ns_per_iteration(void (*f)(long, void *), long iterations) {
    double best = 1e30;
    for (int run = 0; run < %(runs)d; run++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        f(iterations, buf);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / iterations;
        if (ns < best) best = ns;
    }
    return best;
}
int main(void) {
    memset(buf, 1, sizeof buf);
%(calls)s
    return 0;
}
"""


def cpu_flags():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def build_and_run(names, runs, instructions):
    """Assembles the probes `names`, times each `runs` times over about
    `instructions` instructions, returns {name: best nanoseconds per loop
    iteration}."""
    asm = [".text"]
    for name in names:
        need, body, repeat, _ = PROBES[name]
        asm += [f".globl probe_{name}", f"probe_{name}:", "1:"]
        asm += ["    " + line for _ in range(repeat) for line in body]
        asm += ["    dec %rdi", "    jnz 1b"]
        if {"avx", "avx2", "vaes", "avx512f"} & set(need):
            asm.append("    vzeroupper")  # no SSE transition penalty for the next probe
        asm.append("    ret")
    asm.append('.section .note.GNU-stack,"",@progbits')
    decls = "\n".join(f"void probe_{n}(long, void *);" for n in names)
    calls = "\n".join(
        f'    printf("{n} %.6f\\n", ns_per_iteration(probe_{n}, '
        f'{max(1000, instructions // (len(PROBES[n][1]) * PROBES[n][2]))}L));' for n in names)
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "p.S").write_text("\n".join(asm) + "\n")
        (Path(d) / "d.c").write_text(DRIVER % {"runs": runs, "decls": decls, "calls": calls})
        exe = Path(d) / "probes"
        subprocess.run(["gcc", "-O2", "-o", str(exe), str(Path(d) / "d.c"), str(Path(d) / "p.S")],
                       check=True)
        out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    result = {}
    for line in out.splitlines():
        name, ns = line.split()
        result[name] = float(ns)
    return result


def measure(runs=11, instructions=60_000_000):
    """The probes this CPU can run, in cycles per unit (an instruction for
    the one-instruction probes, a round or double round for the others),
    with the clock in MHz and the probes skipped for want of a feature."""
    flags = cpu_flags()
    have = {n for n, (need, *_) in PROBES.items() if all(f in flags for f in need)}
    skipped = {n: [f for f in PROBES[n][0] if f not in flags] for n in PROBES if n not in have}
    ns = build_and_run([n for n in PROBES if n in have], runs, instructions)
    ns_per_cycle = ns["clock"] / PROBES["clock"][3]
    cycles = {n: v / ns_per_cycle / PROBES[n][3] for n, v in ns.items()}
    return {"mhz": 1000.0 / ns_per_cycle, "cycles": cycles, "skipped": skipped}


def ceilings(facts):
    """{tier: {row: (MiB/s, basis)}} from `measure`'s facts."""
    c, mhz = facts["cycles"], facts["mhz"]

    def mib(bytes_, cyc):
        return bytes_ * mhz * 1e6 / cyc / MIB

    out = {}
    # tier, the blocks one AES instruction carries, and the names of its probes
    for tier, lanes, probe_of in (
            ("avx512", 4, lambda d: f"vaes{d}512_throughput"),
            ("vaes-avx2", 2, lambda d: f"vaes{d}256_throughput"),
            ("aesni-avx2", 1, lambda d: f"aes{d}_throughput")):
        if lanes > 1 and probe_of("enc") not in c:
            continue
        rows = {}
        if "aesenc_latency" in c:
            lat = c["aesenc_latency"]
            for bits, nr in AES_ROUNDS.items():
                rows[f"aes-cbc:{bits}/enc"] = (mib(16, nr * lat),
                                               f"{nr} x AESENC latency {lat:.2f} c")
        for d, insn in (("enc", "AESENC"), ("dec", "AESDEC")):
            tp = c.get(probe_of(d))
            if tp is None:
                continue
            for bits, nr in AES_ROUNDS.items():
                basis = (f"{nr} x {'VAES ' if lanes > 1 else ''}{insn} every {tp:.2f} c"
                         + (f" ({lanes} blocks)" if lanes > 1 else ""))
                ceiling = (mib(16 * lanes, nr * tp), basis)
                for row in (f"aes-ecb:{bits}", f"aes-xts:{2 * bits}"):
                    rows[f"{row}/{d}"] = ceiling
                if d == "enc":
                    rows[f"aes-ctr:{bits}"] = ceiling  # both directions encrypt
                else:
                    rows[f"aes-cbc:{bits}/dec"] = ceiling
        if lanes == 1 and "gcm_round" in c and "aes8_round" in c:
            for bits, nr in AES_ROUNDS.items():
                cyc = 8 * c["gcm_round"] + (nr - 8) * c["aes8_round"]
                rows[f"aes-gcm:{bits}"] = (mib(128, cyc),
                                           f"8 x {c['gcm_round']:.2f} c (AES+GHASH round) + "
                                           f"{nr - 8} x {c['aes8_round']:.2f} c per 8 blocks")
        if lanes == 4 and "chacha_avx512_double_round" in c:
            dr = c["chacha_avx512_double_round"]
            rows["chacha20:256"] = (mib(1024, 10 * dr),
                                    f"10 x {dr:.1f} c per 16 blocks (AVX-512)")
        elif "chacha_avx2_double_round" in c:
            dr = c["chacha_avx2_double_round"]
            rows["chacha20:256"] = (mib(512, 10 * dr), f"10 x {dr:.1f} c per 8 blocks (AVX2)")
        out[tier] = rows
    if "chacha_ssse3_double_round" in c:
        dr = c["chacha_ssse3_double_round"]
        out["portable"] = {"chacha20:256": (mib(256, 10 * dr),
                                            f"10 x {dr:.1f} c per 4 blocks (SSSE3)")}
    return out


def merge(a, b):
    """Two `measure` results as one: the fewer cycles of each probe and the
    higher clock. On a shared machine a busy neighbour only ever slows a
    probe down, so the best of several measurements is the hardware's; and
    a ceiling from them stays an upper bound."""
    if a is None:
        return b
    cycles = dict(a["cycles"])
    for n, v in b["cycles"].items():
        cycles[n] = min(v, cycles.get(n, v))
    return {"mhz": max(a["mhz"], b["mhz"]), "cycles": cycles,
            "skipped": {**a["skipped"], **b["skipped"]}}


def check(facts):
    """Consistency checks of `measure`'s facts: [problems]. They catch a
    probe counted in the wrong units or a loop that does not run what it
    says, not a slow CPU: eight independent AESENC per round must take about
    eight times one AESENC's throughput, a round that adds GHASH work cannot
    be faster than the AES alone, and so on."""
    c, bad = facts["cycles"], []
    if not 300 <= facts["mhz"] <= 8000:
        bad.append(f"clock {facts['mhz']:.0f} MHz is not a CPU clock")

    def ratio(a, b, times, lo, hi, what):
        if a in c and b in c and not lo <= c[a] / (times * c[b]) <= hi:
            bad.append(f"{a} / ({times} x {b}) = {c[a] / (times * c[b]):.2f}, expected "
                       f"{lo}-{hi} ({what})")
    ratio("aes8_round", "aesenc_throughput", 8, 0.8, 1.6, "a round is eight independent AESENC")
    ratio("aesenc_latency", "aesenc_throughput", 1, 1.0, 20.0, "latency is at least throughput")
    ratio("gcm_round", "aes8_round", 1, 0.95, 10.0, "GHASH work adds to the AES round")
    ratio("vaesenc512_throughput", "vaesenc256_throughput", 1, 0.9, 2.5,
          "a 512-bit VAESENC is one or two 256-bit ones")
    # A double round is 8 quarter rounds of 12 instructions (AVX-512's
    # rotations), 16 (AVX2) or 18 (SSE's copies), and but for AVX-512 a swap
    # with the stack (2); at most 8 instructions a cycle on any x86 core, so
    # one that seems faster did not run them.
    for name, per_qr, swap in (("chacha_avx512_double_round", 12, 0),
                               ("chacha_avx2_double_round", 16, 2),
                               ("chacha_ssse3_double_round", 18, 2)):
        ops = 8 * per_qr + swap
        if len(PROBES[name][1]) != ops:
            bad.append(f"{name} has {len(PROBES[name][1])} instructions, a double round {ops}")
        if name in c and not ops / 8 <= c[name] <= ops * 2:
            bad.append(f"{name} = {c[name]:.1f} cycles for {ops} instructions")
    return bad


def supported():
    """None when the probes can run here, else why not."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return f"the probes are x86-64 assembly; this is {platform.machine()}"
    if not shutil.which("gcc"):
        return "gcc is not installed"
    return None


def row_ceiling(table, row, direction):
    """The ceiling of `row` ("aes-cbc:128") in one direction ("enc"/"dec"),
    or None."""
    return table.get(f"{row}/{direction}", table.get(row))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print JSON")
    ap.add_argument("--runs", type=int, default=11, help="best of N timings per probe")
    args = ap.parse_args()
    why = supported()
    if why:
        print(f"ceilings: skipped: {why}")
        return
    facts = measure(runs=args.runs)
    for problem in check(facts):
        print(f"ceilings: warning: {problem}", file=sys.stderr)
    table = ceilings(facts)
    if args.json:
        print(json.dumps({"facts": facts, "ceilings": table}, indent=2))
        return
    print(f"clock {facts['mhz']:.0f} MHz (dependent ADDs)")
    for n, cyc in facts["cycles"].items():
        if n != "clock":
            print(f"  {n:28s} {cyc:8.2f} cycles")
    for n, missing in facts["skipped"].items():
        print(f"  {n:28s} skipped: the CPU lacks {', '.join(missing)}")
    for tier, rows in table.items():
        print(f"== {tier}")
        for row, (v, basis) in rows.items():
            print(f"  {row:22s} {v:9.1f} MiB/s  {basis}")


if __name__ == "__main__":
    main()
