#!/usr/bin/env python3
"""Times the AES-NI XTS batch loop of `aes/x86_aesni.rs` (`xts_batches`) on
this CPU with the tweaks stored 1 to 7 batches ahead of their use, and with
8 or 12 blocks a batch, against the same loop without the tweak chain (the
AES instructions and the two XORs a block alone).

The loop makes each tweak on the integer pipes and stores it as two 8-byte
halves; the vector side reads it back with one 16-byte load, which the core
cannot forward from two stores, so it waits until they reach the cache. How
far ahead that is enough depends on the core's store queue. On Zen 4 a first
probe (8-block batches, keys in registers) ran one or two batches ahead at
0.82x of three or more; this one, the product's 12-block loop, put every
lead within 2% of each other in quiet spells. The product uses 7 of a ring
of 8; this probe lets any x86-64 machine check that in seconds:

    python3 scripts/xts_ring_probe.py         # cycles per block, AES-128
    python3 scripts/xts_ring_probe.py --mca   # and llvm-mca's models

The loops here are the product's instruction for instruction (key loads,
steps spread over the rounds, last-round XOR), on a 12 KiB buffer; their
output is not checked (the Rust tests check the product's). x86-64 Linux
with gcc and AES-NI; elsewhere it says so and exits 0.
"""

import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

MCA_CPUS = ["znver2", "znver3", "skylake", "icelake-server"]
NR = 10  # AES-128: XTS-256
DATA = 12 * 1024


def steps_per_round(width):
    """Round r (1..9) carries the tweak steps of these blocks, as the product
    spreads 12 steps over the first 9 rounds."""
    per = {r: [] for r in range(1, NR)}
    for i in range(width):
        per[1 + (i * 9) // width].append(i)
    return per


def loop(width, lead, chain=True):
    """The batch loop: rdi data, rsi batches, rdx round keys (k[r] at 16 r,
    k[NR] ^ k0 at 16 (NR + 1), α·k0 ^ k0 at 16 (NR + 2)), rcx the ring of
    lead + 1 slots. Registers as the product's: blocks in xmm0..width-1, the
    round key in xmm12 (or xmm15 at 8 blocks), the last key in xmm13/14."""
    slot = 16 * width
    ring = lead + 1
    key, last = ("xmm12", "xmm13") if width == 12 else ("xmm15", "xmm14")
    out = [f"movdqu {last}, [rdx + {16 * (NR + 1)}]",
           f"mov r12, [rdx + {16 * (NR + 2)}]", f"mov r13, [rdx + {16 * (NR + 2) + 8}]",
           "mov r8, [rcx]", "mov r9, [rcx + 8]",
           "mov r14, rcx", f"lea rbx, [rcx + {slot * lead}]", "1:"]
    for j in range(width):
        out += [f"movdqu xmm{j}, [rdi + {16 * j}]", f"pxor xmm{j}, [rcx + {16 * j}]"]
    per = steps_per_round(width)
    for r in range(1, NR):
        out.append(f"movdqu {key}, [rdx + {16 * r}]")
        for j in per[r] if chain else []:
            out += ["mov r10, r9", "sar r10, 63", "and r10, 0x87", "add r8, r8", "adc r9, r9",
                    "xor r8, r10", "xor r8, r12", "xor r9, r13",
                    f"mov [rbx + {16 * j}], r8", f"mov [rbx + {16 * j + 8}], r9"]
        out += [f"aesenc xmm{j}, {key}" for j in range(width)]
    for j in range(width):
        out += [f"movdqa {key}, [rcx + {16 * j}]", f"pxor {key}, {last}",
                f"aesenclast xmm{j}, {key}", f"movdqu [rdi + {16 * j}], xmm{j}"]
    out += ["mov rbx, rcx", f"add rcx, {slot}", f"lea r10, [r14 + {slot * ring}]",
            "cmp rcx, r10", "cmove rcx, r14", f"add rdi, {slot}", "dec rsi", "jnz 1b"]
    return out


def function(name, body):
    return ([f".globl {name}", f"{name}:", "push rbx", "push r12", "push r13", "push r14"]
            + body + ["pop r14", "pop r13", "pop r12", "pop rbx", "ret"])


VARIANTS = [("no chain", 12, 7, False)] + [
    (f"12 blocks, {lead} ahead", 12, lead, True) for lead in (1, 2, 3, 5, 7)] + [
    ("8 blocks, 7 ahead", 8, 7, True), ("8 blocks, no chain", 8, 7, False)]

DRIVER = r"""
#include <stdio.h>
#include <time.h>
static unsigned char data[%(data)d] __attribute__((aligned(64)));
static unsigned char keys[256] __attribute__((aligned(64)));
static unsigned char ring[8 * 192] __attribute__((aligned(64)));
void clock_probe(long, void *);
%(decls)s
static double best[%(n)d];
/* One sample: 20 calls over the buffer; each variant's best sample, the
   variants taking turns so that a slow spell of the machine hits them all. */
static void sample(int i, void (*f)(void *, long, void *, void *), long batches) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int k = 0; k < 20; k++) f(data, batches, keys, ring);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double t = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 20;
    if (best[i] == 0 || t < best[i]) best[i] = t;
}
int main(void) {
    double add_ns = 1e30;
    for (int run = 0; run < 11; run++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        clock_probe(1000000, 0);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double t = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 64e6;
        if (t < add_ns) add_ns = t;
    }
    printf("clock %%f\n", 1000 / add_ns);
    for (int round = 0; round < 150; round++) {
%(calls)s
    }
%(prints)s
    return 0;
}
"""


def main():
    flags = open("/proc/cpuinfo").read() if Path("/proc/cpuinfo").exists() else ""
    if platform.machine() not in ("x86_64", "AMD64") or not shutil.which("gcc") \
            or " aes " not in flags.replace("\n", " "):
        print("xts_ring_probe: x86-64 with AES-NI and gcc only; nothing to do here")
        return
    asm = [".intel_syntax noprefix", ".text", ".globl clock_probe", "clock_probe:", "1:"] \
        + ["add rax, 1"] * 64 + ["dec rdi", "jnz 1b", "ret"]
    bodies = {}
    for i, (_, width, lead, chain) in enumerate(VARIANTS):
        bodies[i] = loop(width, lead, chain)
        asm += function(f"v{i}", bodies[i])
    asm.append('.section .note.GNU-stack,"",@progbits')
    decls = "\n".join(f"void v{i}(void *, long, void *, void *);" for i in bodies)
    calls = "\n".join(f"        sample({i}, v{i}, {DATA // (16 * w)});"
                      for i, (_, w, _, _) in enumerate(VARIANTS))
    prints = "\n".join(f'    printf("v{i} %f\\n", best[{i}] / {DATA // (16 * w) * w});'
                       for i, (_, w, _, _) in enumerate(VARIANTS))
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "p.S").write_text("\n".join(asm) + "\n")
        (Path(d) / "d.c").write_text(DRIVER % {"data": DATA, "decls": decls, "calls": calls,
                                                     "prints": prints, "n": len(VARIANTS)})
        subprocess.run(["gcc", "-O2", "-o", f"{d}/probe", f"{d}/d.c", f"{d}/p.S"], check=True)
        out = subprocess.run([f"{d}/probe"], check=True, capture_output=True, text=True).stdout
        got = dict(line.split() for line in out.splitlines())
        mhz = float(got.pop("clock"))
        ns = {int(k[1:]): float(v) for k, v in got.items()}
        print(f"clock {mhz:.0f} MHz (dependent ADDs); AES-128 XTS batch loop, cycles per block "
              f"(AESENC alone: 10 / its throughput), {DATA // 1024} KiB (in L1)")
        base = {12: ns[0], 8: ns[7]}
        for i, (name, width, _, _) in enumerate(VARIANTS):
            c = ns[i] * mhz / 1000
            print(f"  {name:22} {c:6.2f}   {base[width] / ns[i]:.3f}x the loop without the chain")
        if "--mca" in sys.argv and shutil.which("llvm-mca"):
            print("llvm-mca, cycles per block:")
            for i, (name, width, _, _) in enumerate(VARIANTS):
                (Path(d) / f"v{i}.s").write_text(
                    ".intel_syntax noprefix\n" + "\n".join(bodies[i][bodies[i].index("1:") + 1:-1]) + "\n")
                row = []
                for cpu in MCA_CPUS:
                    r = subprocess.run(["llvm-mca", f"-mcpu={cpu}", "-iterations=100", f"{d}/v{i}.s"],
                                       capture_output=True, text=True)
                    total = next((int(line.split()[-1]) for line in r.stdout.splitlines()
                                  if line.startswith("Total Cycles")), None)
                    row.append(f"{cpu} {total / 100 / width:.2f}" if total else f"{cpu} -")
                print(f"  {name:22} " + ", ".join(row))


if __name__ == "__main__":
    main()
