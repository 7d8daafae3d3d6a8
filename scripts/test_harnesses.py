#!/usr/bin/env python3
"""Checks the measuring programs of compare.py and arm_count.py.

  * scripts/evp_bench.c, which measures OpenSSL: every OpenSSL cipher
    compare.py compares with must pass its round trip (one request encrypted
    and decrypted on fresh contexts must come back) and run both of its
    modes. A harness that measures the wrong thing fails here instead of
    skewing a table: until 2026-11-26 it timed encryption in the decryption
    column of ECB and XTS.
  * scripts/ceilings.py (x86-64): its probes must assemble, run and agree
    with each other (ceilings.check: eight independent AESENC a round take
    eight times one AESENC's throughput, and so on), measured up to three
    times, each probe's best kept, since a busy neighbour on a shared
    machine slows a probe but never speeds one up.
  * scripts/xts_ring_probe.py (x86-64 with AES-NI): its XTS batch loops
    must assemble and run.
  * compare.py's choice of the `aes` crate's backend for each tier (software
    where the tier hides AES-NI, no comparison where it hides only VAES or
    AVX-512), and the cargo variables that force the software backend.

    python3 scripts/test_harnesses.py    # needs cc and libssl-dev

Exits 1 when a cipher or a probe fails or a program cannot be built.
"""

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ceilings  # noqa: E402
import compare  # noqa: E402

LABELS = [
    ("aes-ecb", (128, 192, 256)), ("aes-cbc", (128, 192, 256)), ("aes-ctr", (128, 192, 256)),
    ("aes-gcm", (128, 192, 256)), ("aes-xts", (256, 512)),
    ("camellia-ecb", (128, 256)), ("camellia-cbc", (128, 256)), ("camellia-ctr", (128, 256)),
    ("blowfish-ecb", (128,)), ("blowfish-cbc", (128,)), ("des-ecb", (64,)), ("des-cbc", (64,)),
    ("des3_ede-ecb", (192,)), ("des3_ede-cbc", (192,)), ("rc2-ecb", (128,)), ("rc2-cbc", (128,)),
    ("rc4", (128,)), ("chacha20", (256,)), ("chacha20-poly1305", (256,)),
]


def main():
    binary = compare.build_c(compare.EVP_SRC, compare.EVP_BIN, ["-lcrypto"], "is libssl-dev installed?")
    if binary is None:
        sys.exit("test_harnesses: cannot build scripts/evp_bench.c")
    failed, bad = [], set()
    names = sorted({compare.openssl_name(label, bits) for label, sizes in LABELS for bits in sizes})
    for name in names:
        for mode in (["--passes", "2,1"], ["-t", "0.01"]):
            cmd = [str(binary), "-b", "262144", "-r", "65536", *mode, name]
            p = subprocess.run(cmd, capture_output=True, text=True)
            fields = p.stdout.split()
            if p.returncode != 0 or len(fields) != 3 or fields[0] != name:
                failed.append(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[:300]}")
                bad.add(name)
    for f in failed:
        print(f, file=sys.stderr)
    print(f"evp_bench: {len(names) - len(bad)} of {len(names)} ciphers pass")
    problems = check_aes_crate_backend()
    problems += check_ceilings()
    problems += check_probe("xts_ring_probe.py", "without the chain")
    sys.exit(1 if failed or problems else 0)


def check_probe(name, marker):
    """One of the probe scripts: [problems] (none where it cannot run: it
    says so and prints no `marker` line)."""
    probe = Path(__file__).resolve().parent / name
    p = subprocess.run([sys.executable, str(probe)], capture_output=True, text=True)
    lines = p.stdout.strip().splitlines()
    print(f"{name.removesuffix('.py')}: {lines[-1].strip() if lines else p.stderr.strip()[:300]}")
    if p.returncode != 0:
        return [f"{name}: exit {p.returncode}: {p.stderr.strip()[:300]}"]
    skipped = any("nothing to do here" in line for line in lines)
    if ceilings.supported() is None and not skipped and not any(marker in line for line in lines):
        return [f"{name}: no timing printed"]
    return []


def check_aes_crate_backend():
    """compare.aes_crate_backend and soft_aes_env: [problems]."""
    want = {"": "native", "avx512": "unmasked", "vaes,vpclmulqdq,avx512": "unmasked",
            "aes,pclmulqdq,vaes,vpclmulqdq,avx2,avx512,sha_ni": "soft",
            "aes,pmull,sha2": "soft"}
    problems = []
    saved = compare.TIER
    try:
        for mask, backend in want.items():
            compare.TIER = compare.Tier("t", mask)
            got = compare.aes_crate_backend()
            if got != backend:
                problems.append(f"aes crate backend for mask '{mask}': {got}, want {backend}")
    finally:
        compare.TIER = saved
    right = len(want) - len(problems)
    env = compare.soft_aes_env({})
    flags = [v for k, v in env.items() if k.startswith("CARGO_TARGET_") and k.endswith("_RUSTFLAGS")]
    if len(flags) != 1 or not flags[0].endswith('--cfg aes_backend="soft"'):
        problems.append(f"soft_aes_env: rustflags {flags}")
    if env.get("CARGO_TARGET_DIR", "").rstrip("/") == str(compare.ROOT / "target"):
        problems.append("soft_aes_env: builds into the main target directory")
    for p in problems:
        print(f"aes crate backend: {p}", file=sys.stderr)
    print(f"aes crate backend: {right} of {len(want)} masks as expected")
    return problems


def check_ceilings():
    """ceilings.py's probes: [problems] (none where they cannot run)."""
    why = ceilings.supported()
    if why:
        print(f"ceilings: skipped: {why}")
        return []
    facts, problems = None, []
    for _ in range(3):
        facts = ceilings.merge(facts, ceilings.measure(runs=5, instructions=20_000_000))
        problems = ceilings.check(facts)
        if not problems:
            break
    for p in problems:
        print(f"ceilings: {p}", file=sys.stderr)
    probes = ", ".join(f"{n} {c:.2f}" for n, c in facts["cycles"].items())
    print(f"ceilings: {len(facts['cycles'])} probes, clock {facts['mhz']:.0f} MHz; cycles: {probes}")
    return problems


if __name__ == "__main__":
    main()
