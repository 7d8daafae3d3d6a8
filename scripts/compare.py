#!/usr/bin/env python3
"""Compare `clustercrypt bench` with OpenSSL, libgcrypt and the RustCrypto crates.

The target: every row at least 1.0x the faster of OpenSSL (EVP) and libgcrypt
where either has the cipher, under the same CPU mask, and at least as fast as
the best Rust crate otherwise. Our own code (block-cipher modes, Twofish, XTEA,
Serpent) must also beat the RustCrypto compositions it replaces.

What runs, on one thread unless said otherwise, row by row so that a busy
moment of the (shared) machine falls on all sides of a row alike:
  * ours:      target/release/clustercrypt bench --cipher SPEC --key-size BITS
               --no-kdf --format json (1 MiB buffer, 64 KiB requests with an
               IV each, >= --time s per direction, MiB = 2^20 bytes); built
               with `cargo build --release` first unless --no-build.
  * OpenSSL:   scripts/evp_bench.c (EVP, built into target/compare/ when
               libssl-dev is there) measures exactly like ours, the AEADs'
               tags made and verified. Without it, openssl speed -elapsed -evp
               NAME -bytes 1048576 -seconds N, and again with -decrypt: whole
               seconds only (N = max(1, round(--time))), one 1 MiB request per
               call, its 1000-byte "k" figures converted to MiB/s.
  * libgcrypt: scripts/gcrypt_bench.c, built into target/compare/, measures
               exactly like ours.
  * crates:    crates/catalogue/examples/versus_crates.rs: ours and the
               RustCrypto composition side by side in one process, for the rows
               of our own code and the rows no library has (--crates). The
               `aes` crate picks its AES instructions itself: at a tier
               without AES-NI it is built with its software backend (--cfg
               aes_backend="soft", in target/crates-soft-aes); at a tier that
               hides only VAES or AVX-512 its rows are shown as n/a.
  * threads:   `--threads all` aggregate against one thread for parallel modes
               (target 1.9x on this 2-core machine); --no-threads skips it.

CPU tiers: --tier NAME (avx512, vaes-avx2, aesni-avx2, portable on x86; ce,
neon, portable on ARM) masks all three sides alike: ours through
CLUSTERCRYPT_DISABLE_HWF, OpenSSL through OPENSSL_ia32cap / OPENSSL_armcap
(the value our binary computes for the same mask; `clustercrypt --version`
prints it), libgcrypt through gcry_control(GCRYCTL_DISABLE_HWF) (gcrypt_bench
--disable-hwf). --all-tiers prints one table per tier this CPU can run; a tier
it lacks is skipped with a note. Without either, the CPU runs unmasked.
Cycles per byte use --cpu-mhz, or the "cpu MHz" /proc/cpuinfo reports.

With --ceilings, scripts/ceilings.py also times this CPU's execution units
(AESENC latency and throughput, the AES-GCM and ChaCha20 instruction mixes)
before and after each tier, and a table gives each row's ceiling in MiB/s and
the share of it every side reaches: where all three meet below 1.0x of each
other, it shows whether they meet at the hardware's limit. Cycles per byte
then use the clock measured there (dependent ADDs) instead of /proc/cpuinfo's.

With --runs N every figure is the best of N measurements, the sides of a row
measured in turn N times (ours, OpenSSL, libgcrypt, ours, ...). The tables go to
stdout (progress to stderr), and to a Markdown file with --markdown FILE.
--strict exits with status 1 when any row is BELOW its target.

Usage:
  python3 scripts/compare.py                      # every row, 1 s per direction
  python3 scripts/compare.py --quick              # 0.3 s per direction
  python3 scripts/compare.py --rows aes-xts:512,twofish-cbc:256 --markdown out.md
  python3 scripts/compare.py --threads-only
  python3 scripts/compare.py --all-tiers --quick --markdown tiers.md
  python3 scripts/compare.py --tier aesni-avx2 --rows aes-cbc:256,aes-ctr:256
  python3 scripts/compare.py --all-tiers --ceilings --rows aes-cbc:128,chacha20:256

Rows are written label:key_bits, with labels and key sizes as `clustercrypt
ciphers` prints them (XTS counts both keys: aes-xts:512 is AES-256).
Python 3 standard library only.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import ceilings  # noqa: E402
WORK = ROOT / "target" / "compare"
CLI = ROOT / "target" / "release" / "clustercrypt"
GCRYPT_SRC = ROOT / "scripts" / "gcrypt_bench.c"
GCRYPT_BIN = WORK / "gcrypt_bench"
EVP_SRC = ROOT / "scripts" / "evp_bench.c"
EVP_BIN = WORK / "evp_bench"
MIB = 1048576.0

LIBRARY_TARGET = 1.0  # ours / max(OpenSSL, libgcrypt), same CPU mask
CRATE_TARGET = 1.0  # ours / best RustCrypto crate
THREADS_TARGET = 1.9  # --threads all / 1 thread, on 2 cores

# libgcrypt's names (gcry_control(GCRYCTL_DISABLE_HWF)) for what each tier
# hides. "portable" keeps the x86-64 baseline (SSE2) and the SSSE3/SSE4.1 the
# libraries may use; our portable code uses SSE2 only.
GCRYPT_HIDE = {
    "avx512": [],
    "vaes-avx2": ["intel-avx512"],
    "aesni-avx2": ["intel-avx512", "intel-vaes-vpclmul", "intel-gfni"],
    "portable": ["intel-aesni", "intel-pclmul", "intel-avx", "intel-avx2", "intel-avx512",
                 "intel-vaes-vpclmul", "intel-shaext", "intel-gfni",
                 "arm-neon", "arm-aes", "arm-pmull", "arm-sha1", "arm-sha2"],
    "ce": [],
    "neon": ["arm-aes", "arm-pmull", "arm-sha1", "arm-sha2"],
}


class Tier:
    """The masks of one CPU tier for the three sides (empty: unmasked)."""

    def __init__(self, name="", mask="", lib_env=None, gcrypt_hide=None):
        self.name, self.mask = name, mask
        self.lib_env = lib_env or {}
        self.gcrypt_hide = gcrypt_hide or []

    def ours_env(self):
        env = dict(os.environ)
        env["CLUSTERCRYPT_DISABLE_HWF"] = self.mask
        env.update(self.lib_env)
        return env

    def openssl_env(self):
        env = dict(os.environ)
        env.pop("OPENSSL_ia32cap", None)
        env.pop("OPENSSL_armcap", None)
        env.update(self.lib_env)
        return env


# The tier being measured (set by main for each table).
TIER = Tier()

# Bytes per request (one IV or nonce each) on every side: 64 KiB, cryptsetup
# benchmark's, unless --request-size says otherwise (dm-crypt's 512-byte or
# 4 KiB sectors, a network packet).
REQUEST = 65536


def version_info(mask):
    """`clustercrypt --version` under a mask, as {key: value}."""
    env = dict(os.environ)
    env["CLUSTERCRYPT_DISABLE_HWF"] = mask
    p = run([str(CLI), "--version"], check=False, env=env)
    info = {}
    for line in p.stdout.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            info[k.strip()] = v.strip()
    return info


def tier_masks():
    """[(name, mask)] of this architecture's tiers, from the binary itself."""
    info = version_info("")
    tiers = []
    for item in info.get("tiers", "").split():
        name, _, mask = item.partition("=")
        tiers.append((name, mask))
    return tiers


def make_tier(name):
    """The Tier called `name`, or (None, reason) when this CPU cannot run it."""
    masks = dict(tier_masks())
    if name not in masks:
        sys.exit(f"compare.py: unknown tier '{name}'; this architecture has "
                 + ", ".join(masks))
    info = version_info(masks[name])
    if info.get("tier") != name:
        return None, f"this CPU reaches only {info.get('tier')} (detected: {info.get('cpu detected')})"
    lib_env = {}
    lib = info.get("library mask", "none")
    if lib != "none":
        k, _, v = lib.partition("=")
        lib_env[k] = v
    return Tier(name, masks[name], lib_env, GCRYPT_HIDE.get(name, [])), None

# Rows whose code is our own (modes over AES; Twofish, Serpent, XTEA): the
# crate comparison always covers these when they are selected. Rows without a
# library reference are added to it as well.
OWN_CODE_ROWS = [
    "aes-ecb:128", "aes-ecb:256", "aes-cbc:128", "aes-cbc:256",
    "aes-ctr:128", "aes-ctr:256", "aes-xts:256", "aes-xts:512",
    "twofish-ecb:128", "twofish-ecb:192", "twofish-ecb:256",
    "twofish-cbc:128", "twofish-cbc:192", "twofish-cbc:256",
    "serpent-ecb:128", "serpent-ecb:256", "serpent-cbc:128", "serpent-cbc:256",
    "serpent-ctr:128", "serpent-ctr:256", "serpent-xts:256", "serpent-xts:512",
    "xtea-ecb:128", "xtea-cbc:128", "xtea-ctr:128",
]

# Thread-scaling rows: (row, directions checked). CBC encryption is sequential.
THREADS_ROWS = [
    ("aes-xts:512", ("enc", "dec")),
    ("serpent-xts:512", ("enc", "dec")),
    ("twofish-cbc:256", ("dec",)),
    ("chacha20:256", ("enc", "dec")),
]

# OpenSSL 3 keeps these in the legacy provider.
LEGACY_PREFIXES = ("bf-", "des-ecb", "des-cbc", "rc2-", "rc4")


def log(msg):
    print(f"[compare] {msg}", file=sys.stderr, flush=True)


def run(cmd, check=True, **kw):
    """Runs a command, returning its CompletedProcess (text mode)."""
    return subprocess.run(cmd, text=True, capture_output=True, check=check, **kw)


# ----------------------------------------------------------------------------
# Rows


def split_rows(text):
    rows = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if ":" not in part:
            sys.exit(f"compare.py: row '{part}' is not label:key_bits (e.g. aes-xts:512)")
        label, bits = part.rsplit(":", 1)
        try:
            rows.append((label, int(bits)))
        except ValueError:
            sys.exit(f"compare.py: row '{part}': '{bits}' is not a number of bits")
    return rows


def row_name(row):
    return f"{row[0]}:{row[1]}"


def catalogue():
    """Our rows as `clustercrypt ciphers --json` lists them, in table order."""
    out = run([str(CLI), "ciphers", "--json"]).stdout
    return [
        {"label": r["cipher"], "bits": r["key_bits"], "spec": r["spec"], "mode": r["mode"]}
        for r in json.loads(out)
    ]


# ----------------------------------------------------------------------------
# Building


def build_cli(args):
    if args.no_build:
        if not CLI.exists():
            sys.exit(f"compare.py: {CLI} is missing and --no-build was given")
        return
    log("cargo build --release -p clustercrypt")
    p = subprocess.run(
        ["cargo", "build", "--release", "-p", "clustercrypt"],
        cwd=ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    if p.returncode != 0:
        if CLI.exists():
            log("cargo build failed; using the existing target/release/clustercrypt:\n"
                + p.stdout[-2000:])
        else:
            sys.exit("compare.py: cargo build failed:\n" + p.stdout[-4000:])


def build_c(src, binary, libs, missing):
    """Builds one of the C measuring programs; returns the binary or None."""
    WORK.mkdir(parents=True, exist_ok=True)
    if binary.exists() and binary.stat().st_mtime >= src.stat().st_mtime:
        return binary
    cc = os.environ.get("CC", "cc")
    cmd = [cc, "-O2", str(src), *libs, "-o", str(binary)]
    log(" ".join(cmd))
    p = subprocess.run(cmd, text=True, capture_output=True)
    if p.returncode != 0:
        log(f"cannot build {src.name} ({missing}):\n" + p.stderr[-2000:])
        return None
    return binary


def build_gcrypt():
    """Builds scripts/gcrypt_bench.c; returns the binary or None."""
    return build_c(GCRYPT_SRC, GCRYPT_BIN, ["-lgcrypt"],
                   "is libgcrypt20-dev installed?; no libgcrypt column")


# ----------------------------------------------------------------------------
# Ours


def bench_ours(rows, specs, seconds, runs, threads="1"):
    """Runs clustercrypt bench; returns {(label, bits): (enc, dec, impl)}, each
    figure the best of `runs` (aggregate over the workers with --threads)."""
    groups = {}
    # --key-size applies to every --cipher of a run: one run per key size.
    for row in rows:
        groups.setdefault(row[1], []).extend(["--cipher", specs[row]])
    out = {}
    for bits, cipher_args in groups.items():
        cmd = [str(CLI), "bench", *cipher_args, "--key-size", str(bits), "--no-kdf",
               "--format", "json", "--time", f"{seconds:g}", "--runs", str(runs),
               "--threads", threads, "--request-size", str(REQUEST)]
        p = run(cmd, check=False, env=TIER.ours_env())
        if p.returncode != 0:
            log(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
            continue
        for r in json.loads(p.stdout)["ciphers"]:
            enc = r.get("encrypt", {}).get("max", r["encrypt_mib_s"])
            dec = r.get("decrypt", {}).get("max", r["decrypt_mib_s"])
            out[(r["cipher"], r["key_bits"])] = (enc, dec, r.get("implementation", ""))
    return out


# ----------------------------------------------------------------------------
# OpenSSL


def openssl_name(label, bits):
    """OpenSSL's EVP name for a row, or None. A trailing '*' marks a stand-in."""
    if label == "chacha20":
        return "chacha20"
    if label == "chacha20-poly1305":
        return "chacha20-poly1305"
    if label == "rc4":
        # openssl speed keys RC4 with 128 bits; RC4's speed after the key
        # schedule does not depend on the key length.
        return "rc4" if bits == 128 else "rc4*"
    if "-" not in label:
        return None
    alg, mode = label.rsplit("-", 1)
    if alg == "aes":
        if mode in ("ecb", "cbc", "ctr", "gcm") and bits in (128, 192, 256):
            return f"aes-{bits}-{mode}"
        if mode == "xts" and bits in (256, 512):  # OpenSSL has no AES-192-XTS
            return f"aes-{bits // 2}-xts"
    if alg == "camellia" and mode in ("ecb", "cbc", "ctr") and bits in (128, 192, 256):
        return f"camellia-{bits}-{mode}"
    if alg == "blowfish" and bits == 128 and mode in ("ecb", "cbc"):
        return f"bf-{mode}"
    if alg == "des" and bits == 64 and mode in ("ecb", "cbc"):
        return f"des-{mode}"
    if alg == "des3_ede" and bits == 192:
        return {"ecb": "des-ede3", "cbc": "des-ede3-cbc"}.get(mode)
    if alg == "rc2" and bits == 128 and mode in ("ecb", "cbc"):
        return f"rc2-{mode}"
    return None


def openssl_speed(name, seconds, decrypt):
    """MiB/s of `openssl speed` for an EVP name, or None."""
    cmd = ["openssl", "speed", "-elapsed"]
    if name.startswith(LEGACY_PREFIXES):
        cmd += ["-provider", "legacy", "-provider", "default"]
    cmd += ["-evp", name, "-bytes", "1048576", "-seconds", str(seconds)]
    if decrypt:
        cmd.append("-decrypt")
    try:
        p = run(cmd, check=False, timeout=120 + 4 * seconds, env=TIER.openssl_env())
    except subprocess.TimeoutExpired:
        return None
    if p.returncode != 0:
        return None
    # "type        1048576 bytes" then "AES-128-XTS   12012415.57k": the figure
    # is in 1000s of bytes per second.
    lines = p.stdout.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("type") and "1048576" in line:
            for data in lines[i + 1:]:
                m = re.search(r"([0-9.]+)k\s*$", data)
                if m:
                    return float(m.group(1)) * 1000.0 / MIB
    return None


def best_pair(pairs):
    """Best encryption and best decryption figure over runs (None when absent)."""
    enc = [p[0] for p in pairs if p[0] is not None]
    dec = [p[1] for p in pairs if p[1] is not None]
    return (max(enc) if enc else None, max(dec) if dec else None)


class OpenSSL:
    """OpenSSL per row, one measurement per call: scripts/evp_bench.c, which
    measures like ours and gcrypt_bench (64 KiB requests with an IV each, the
    AEADs' tags made and verified), or, when it cannot be built (no
    libssl-dev), `openssl speed` (whole seconds, one 1 MiB request per call)."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.version = None
        self.binary = None
        if shutil.which("openssl"):
            self.version = run(["openssl", "version"], check=False).stdout.strip()
            self.binary = build_c(EVP_SRC, EVP_BIN, ["-lcrypto"],
                                  "is libssl-dev installed?; measuring with openssl speed")
        else:
            log("openssl not found; no OpenSSL column")

    def method(self):
        """How the OpenSSL column is measured, for the table's header."""
        if self.binary:
            return f"OpenSSL: scripts/evp_bench.c, the same method, >= {self.seconds:g} s"
        return (f"OpenSSL: openssl speed -seconds {max(1, round(self.seconds))}, "
                "one 1 MiB request per call, -elapsed")

    def row(self, row):
        """(enc, dec, name) for a row, or None."""
        name = openssl_name(*row)
        if not name or not self.version:
            return None
        evp = name.rstrip("*")
        if self.binary:
            p = run([str(self.binary), "-t", f"{self.seconds:g}", "-r", str(REQUEST), evp],
                    check=False, env=TIER.openssl_env())
            f = p.stdout.split()
            if p.returncode != 0 or len(f) != 3:
                log(f"evp_bench {evp} failed:\n{p.stderr[-2000:]}")
                return None
            enc, dec = float(f[1]), float(f[2])
        elif REQUEST != 65536:
            return None  # openssl speed cannot be told the request size
        else:
            secs = max(1, round(self.seconds))
            enc = openssl_speed(evp, secs, False)
            dec = openssl_speed(evp, secs, True)
        if enc is None and dec is None:
            return None
        return (enc, dec, name)


# ----------------------------------------------------------------------------
# libgcrypt


class Gcrypt:
    """scripts/gcrypt_bench.c per row."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.binary, self.version, self.have = build_gcrypt(), None, set()
        if self.binary:
            for line in run([str(self.binary), "--list"]).stdout.splitlines():
                label, bits = line.split()
                self.have.add((label, int(bits)))

    def row(self, row):
        """(enc, dec) of one measurement of a row, or None."""
        if row not in self.have:
            return None
        cmd = [str(self.binary), "-t", f"{self.seconds:g}", "-r", str(REQUEST)]
        if TIER.gcrypt_hide:
            cmd += ["--disable-hwf", ",".join(TIER.gcrypt_hide)]
        p = run(cmd + [row_name(row)], check=False)
        if p.returncode != 0:
            log(f"gcrypt_bench {row_name(row)} failed:\n" + p.stderr[-2000:])
            return None
        for line in p.stdout.splitlines():
            if line.startswith("# libgcrypt"):
                self.version = line[2:].split(";")[0]
            if line.startswith("#") or not line.strip():
                continue
            f = line.split()
            if (f[0], int(f[1])) == row:
                return (float(f[2]), float(f[3]))
        return None


# ----------------------------------------------------------------------------
# RustCrypto crates


def aes_crate_backend():
    """What the RustCrypto `aes` crate (the crates' AES rows) runs at this tier.

    It picks AES-NI, VAES-256 or VAES-512 for itself and no run-time mask
    reaches it; its one switch is the build-time cfg aes_backend="soft" (its
    fixsliced, constant-time code). So: "soft" where the tier hides the AES
    instructions (the example is built a second time with that cfg),
    "unmasked" where the tier hides only VAES or AVX-512 (the crate would
    run them: its AES rows are shown but compare nothing), else "native"."""
    masked = set(filter(None, TIER.mask.split(",")))
    if "aes" in masked:
        return "soft"
    if masked & {"vaes", "avx512"}:
        return "unmasked"
    return "native"


def soft_aes_env(env):
    """`env` with the `aes` crate's software backend forced, built into its own
    target directory (the flags of .cargo/config.toml for this host kept:
    a RUSTFLAGS-like variable replaces them)."""
    host = next(line.split()[1] for line in run(["rustc", "-vV"]).stdout.splitlines()
                if line.startswith("host:"))
    flags = []
    try:
        import tomllib
        with open(ROOT / ".cargo" / "config.toml", "rb") as f:
            flags = tomllib.load(f).get("target", {}).get(host, {}).get("rustflags", [])
    except (ImportError, OSError):
        pass
    env = dict(env)
    env["CARGO_TARGET_" + host.upper().replace("-", "_") + "_RUSTFLAGS"] = " ".join(
        [*flags, "--cfg", 'aes_backend="soft"'])
    env["CARGO_TARGET_DIR"] = str(ROOT / "target" / "crates-soft-aes")
    return env


def bench_crates(rows, seconds, runs):
    """Runs the versus_crates example; returns {row: (oe, od, ce, cd, ref, impl)},
    the `aes` crate's rows named with its backend where that is not "native"
    (aes_crate_backend)."""
    out = {}
    if not rows:
        return out
    base = ["cargo", "run", "--release", "-q", "-p", "clustercrypt-catalogue",
            "--example", "versus_crates", "--"]
    backend = aes_crate_backend()
    env = TIER.ours_env()
    if backend == "soft" and any(r[0].startswith("aes-") for r in rows):
        env = soft_aes_env(env)
        log("the aes crate without AES instructions: building versus_crates with "
            f"--cfg aes_backend=\"soft\" in {env['CARGO_TARGET_DIR']}")
    log("cargo run --release -p clustercrypt-catalogue --example versus_crates")
    p = subprocess.run(base + ["--list"], cwd=ROOT, env=env, text=True, capture_output=True)
    if p.returncode != 0:
        log("cannot build or run the versus_crates example; no crate comparison:\n"
            + p.stderr[-2000:])
        return out
    have = set()
    for line in p.stdout.splitlines():
        if line.strip():
            label, bits = line.split()[0].rsplit(":", 1)
            have.add((label, int(bits)))
    todo = [r for r in rows if r in have]
    if not todo:
        return out
    log(f"versus_crates: {len(todo)} rows")
    p = subprocess.run(env=env, args=base + ["--time", f"{seconds:g}", "--runs", str(runs),
                                             "--rows", ",".join(map(row_name, todo))],
                       cwd=ROOT, text=True, capture_output=True)
    if p.returncode != 0:
        log("versus_crates reported a failure:\n" + p.stderr[-2000:])
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[0] == "#" and f[2] == "MISMATCH":
            label, bits = f[1].rsplit(":", 1)
            out[(label, int(bits))] = None  # the two sides disagreed
            continue
        if line.startswith("#") or not f:
            continue
        label, bits = f[0].rsplit(":", 1)
        cname = f[6] if len(f) > 6 else "crate"
        if cname.endswith("+aes") and backend != "native":
            cname += f"({backend})"
        out[(label, int(bits))] = (float(f[1]), float(f[2]), float(f[3]), float(f[4]),
                                   cname, f[7] if len(f) > 7 else "")
    return out


# ----------------------------------------------------------------------------
# Threads


def bench_threads(rows, specs, seconds, runs):
    """[(row, directions, one, all)] with one/all = (enc, dec)."""
    out = []
    for row, dirs in rows:
        log(f"threads: {row_name(row)}")
        one = bench_ours([row], specs, seconds, runs, "1").get(row)
        many = bench_ours([row], specs, seconds, runs, "all").get(row)
        out.append((row, dirs, one, many))
    return out


# ----------------------------------------------------------------------------
# Report


def fmt(v, nd=1):
    return "-" if v is None else f"{v:.{nd}f}"


def ratio(a, b):
    if a is None or not b:
        return None
    return a / b


def best_of(candidates):
    """candidates: [(source, value)] -> (source, value) of the largest value."""
    present = [(s, v) for s, v in candidates if v is not None]
    if not present:
        return None, None
    return max(present, key=lambda c: c[1])


def cpb(mib_s, mhz):
    """Cycles per byte at `mhz` for a MiB/s figure."""
    if not mib_s or not mhz:
        return None
    return mhz * 1e6 / (mib_s * MIB)


def cpb_pair(enc, dec, mhz):
    e, d = cpb(enc, mhz), cpb(dec, mhz)
    if e is None and d is None:
        return "-"
    return f"{fmt(e, 2)}/{fmt(d, 2)}"


def main_table(rows, ours, ossl, gcry, crates, mhz=None):
    headers = ["row", "ours enc", "ours dec", "impl", "OpenSSL enc", "OpenSSL dec",
               "gcrypt enc", "gcrypt dec", "best ref", "best enc", "best dec", "enc ratio",
               "dec ratio", "c/B ours", "c/B ref", "target", "mark"]
    table, tally, notes = [], {}, set()
    for row in rows:
        oe, od, impl = ours.get(row, (None, None, None))
        se, sd, sname = ossl.get(row, (None, None, None))
        ge, gd = gcry.get(row, (None, None))
        if sname and sname.endswith("*"):
            notes.add("rc4*")
        if any(v is not None for v in (se, sd, ge, gd)):
            src_e, be = best_of([("openssl", se), ("gcrypt", ge)])
            src_d, bd = best_of([("openssl", sd), ("gcrypt", gd)])
            # One name when one library is the faster both ways, else enc/dec.
            src = src_e if src_e == src_d else f"{src_e or '-'}/{src_d or '-'}"
            target = LIBRARY_TARGET
        elif crates.get(row):
            _, _, be, bd, cname, _ = crates[row]
            src, target = f"crate {cname}", CRATE_TARGET
            if cname.endswith("(unmasked)"):
                target = None  # it ran what this tier hides: no comparison
        elif row in crates:
            src, be, bd, target = "crate MISMATCH", None, None, None
        else:
            src, be, bd, target = "none", None, None, None
        re_, rd = ratio(oe, be), ratio(od, bd)
        if src == "crate MISMATCH":
            mark = "MISMATCH"
        elif oe is None and od is None:
            mark = "ERROR"
        elif target is None:
            mark = "n/a"
        else:
            present = [r for r in (re_, rd) if r is not None]
            mark = "PASS" if present and min(present) >= target else "BELOW"
        tally[mark] = tally.get(mark, 0) + 1
        table.append([row_name(row), fmt(oe), fmt(od), impl or "-", fmt(se), fmt(sd), fmt(ge),
                      fmt(gd), src, fmt(be), fmt(bd), fmt(re_, 2), fmt(rd, 2),
                      cpb_pair(oe, od, mhz), cpb_pair(be, bd, mhz),
                      "-" if target is None else f"{target:g}", mark])
    return headers, table, tally, notes


def ceilings_table(rows, ours, ossl, gcry, table):
    """Each row with a ceiling in `table` ({row: (MiB/s, basis)}, a tier of
    ceilings.ceilings): the ceiling and each side's share of it per direction.
    A side above its ceiling by more than timing noise (3%) means the
    ceiling's model is wrong: marked ABOVE."""
    headers = ["row", "dir", "ceiling", "ours", "ours %", "OpenSSL %", "gcrypt %", "basis",
               "mark"]
    out, above = [], 0
    for row in rows:
        for i, d in enumerate(("enc", "dec")):
            c = ceilings.row_ceiling(table, row_name(row), d)
            if c is None:
                continue
            limit, basis = c
            sides = [ours.get(row, (None, None))[i], ossl.get(row, (None, None))[i],
                     gcry.get(row, (None, None))[i]]
            pct = [None if v is None else 100.0 * v / limit for v in sides]
            mark = "ABOVE" if any(p is not None and p > 103.0 for p in pct) else ""
            above += mark == "ABOVE"
            out.append([row_name(row), d, fmt(limit), fmt(sides[0]),
                        *("-" if p is None else f"{p:.0f}" for p in pct), basis, mark])
    notes = ["a ceiling leaves out dependencies, the front end and memory: an upper bound "
             "for kernels made of that instruction mix"]
    if above:
        notes.append(f"{above} figure(s) above their ceiling: that ceiling's model is wrong")
    return headers, out, notes


def crates_table(rows, crates):
    headers = ["row", "ours enc", "ours dec", "crate enc", "crate dec", "crate", "our impl",
               "enc ratio", "dec ratio", "mark"]
    table, tally = [], {}
    for row in rows:
        if row not in crates:
            continue
        if crates[row] is None:
            table.append([row_name(row)] + ["-"] * 8 + ["MISMATCH"])
            tally["MISMATCH"] = tally.get("MISMATCH", 0) + 1
            continue
        oe, od, ce, cd, cname, impl = crates[row]
        re_, rd = ratio(oe, ce), ratio(od, cd)
        if cname.endswith("(unmasked)"):
            mark = "n/a"  # the crate ran what this tier hides
        else:
            mark = "PASS" if min(re_, rd) >= CRATE_TARGET else "BELOW"
        tally[mark] = tally.get(mark, 0) + 1
        table.append([row_name(row), fmt(oe), fmt(od), fmt(ce), fmt(cd), cname, impl,
                      fmt(re_, 2), fmt(rd, 2), mark])
    return headers, table, tally


def threads_table(results):
    headers = ["row", "checked", "1 thread enc", "1 thread dec", "all enc", "all dec",
               "enc scaling", "dec scaling", "mark"]
    table, tally = [], {}
    for row, dirs, one, many in results:
        if not one or not many:
            table.append([row_name(row), "/".join(dirs), "-", "-", "-", "-", "-", "-", "ERROR"])
            tally["ERROR"] = tally.get("ERROR", 0) + 1
            continue
        se, sd = ratio(many[0], one[0]), ratio(many[1], one[1])
        checked = [s for d, s in (("enc", se), ("dec", sd)) if d in dirs]
        mark = "PASS" if all(s is not None and s >= THREADS_TARGET for s in checked) else "BELOW"
        tally[mark] = tally.get(mark, 0) + 1
        table.append([row_name(row), "/".join(dirs), fmt(one[0]), fmt(one[1]), fmt(many[0]),
                      fmt(many[1]), fmt(se, 2) + ("" if "enc" in dirs else " (seq)"),
                      fmt(sd, 2), mark])
    return headers, table, tally


def render_text(headers, table):
    widths = [max(len(h), *(len(r[i]) for r in table)) if table else len(h)
              for i, h in enumerate(headers)]
    lines = ["  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in
                       enumerate(zip(headers, widths)))]
    lines.append("  ".join("-" * w for w in widths))
    for r in table:
        lines.append("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in
                               enumerate(zip(r, widths))))
    return "\n".join(lines)


def render_markdown(headers, table):
    lines = ["| " + " | ".join(headers) + " |",
             "|" + "|".join("---" if i == 0 else "---:" for i in range(len(headers))) + "|"]
    for r in table:
        lines.append("| " + " | ".join(r) + " |")
    return "\n".join(lines)


def summary(tally):
    return ", ".join(f"{n} {k}" for k, n in sorted(tally.items())) or "no rows"


# ----------------------------------------------------------------------------


def parse_args():
    ap = argparse.ArgumentParser(
        description="Compare clustercrypt bench rows with OpenSSL, libgcrypt and the "
                    "RustCrypto crates, and print the ratios.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Example: python3 scripts/compare.py --rows aes-xts:512,twofish-cbc:256 --quick")
    ap.add_argument("--time", type=float, default=1.0, metavar="SECONDS",
                    help="minimum seconds per direction and row (default 1; OpenSSL takes "
                         "whole seconds, at least 1)")
    ap.add_argument("--quick", action="store_true", help="same as --time 0.3")
    ap.add_argument("--runs", type=int, default=1, metavar="N",
                    help="measure every figure N times and keep the best (default 1)")
    ap.add_argument("--rows", metavar="ROW,ROW", help="only these rows, e.g. aes-xts:512,"
                    "twofish-cbc:256 (default: every row of `clustercrypt ciphers`)")
    ap.add_argument("--markdown", metavar="FILE", help="also write the tables as Markdown")
    ap.add_argument("--crates", choices=["default", "all", "none"], default="default",
                    help="crate comparison: our own code's rows and rows with no library "
                         "reference (default), every selected row it can do (all), or none")
    ap.add_argument("--request-size", type=request_bytes, default=65536, metavar="BYTES",
                    help="bytes per request, one IV or nonce each, on every side: a number "
                         "with an optional K suffix, a multiple of 16 that divides 1 MiB "
                         "(default 64K, cryptsetup benchmark's; 512 or 4K for dm-crypt's "
                         "sectors); the crate comparison is skipped at other sizes")
    ap.add_argument("--no-threads", action="store_true", help="skip the --threads check")
    ap.add_argument("--threads-only", action="store_true", help="run only the --threads check")
    ap.add_argument("--threads-rows", metavar="ROW,ROW",
                    help="rows of the --threads check (default: "
                         + ", ".join(r for r, _ in THREADS_ROWS) + ")")
    ap.add_argument("--no-openssl", action="store_true", help="skip OpenSSL")
    ap.add_argument("--no-gcrypt", action="store_true", help="skip libgcrypt")
    ap.add_argument("--no-build", action="store_true",
                    help="use the existing target/release/clustercrypt")
    ap.add_argument("--tier", metavar="NAME",
                    help="mask all three sides to this CPU tier (avx512, vaes-avx2, aesni-avx2, "
                    "portable; ARM: ce, neon, portable)")
    ap.add_argument("--all-tiers", action="store_true",
                    help="one table per tier this CPU can run")
    ap.add_argument("--cpu-mhz", type=float, metavar="MHZ",
                    help="clock for cycles per byte (default: /proc/cpuinfo's cpu MHz)")
    ap.add_argument("--strict", action="store_true",
                    help="exit with status 1 if any row is BELOW its target")
    ap.add_argument("--ceilings", action="store_true",
                    help="also time this CPU's execution units (scripts/ceilings.py) and print "
                    "each row's ceiling and how close every side comes to it; cycles per "
                    "byte then use the clock measured there")
    args = ap.parse_args()
    if args.tier and args.all_tiers:
        ap.error("--tier and --all-tiers exclude each other")
    if args.quick:
        args.time = 0.3
    if args.time <= 0:
        ap.error("--time must be positive")
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    if args.request_size != 65536 and args.crates != "none":
        log(f"--request-size {request_name(args.request_size)}: no crate comparison "
            "(it runs 64 KiB requests)")
        args.crates = "none"
    return args


def request_bytes(text):
    """--request-size: BYTES or NK, a multiple of 16 that divides 1 MiB."""
    t = text.strip().upper()
    try:
        n = int(t[:-1]) * 1024 if t.endswith("K") else int(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 512, 4K, 64K)")
    if n < 16 or n % 16 or (1 << 20) % n:
        raise argparse.ArgumentTypeError(
            f"{text}: a request must be a multiple of 16 bytes that divides 1 MiB")
    return n


def request_name(n):
    """512 B, 4 KiB, 64 KiB."""
    return f"{n // 1024} KiB" if n % 1024 == 0 else f"{n} B"


def main():
    global REQUEST
    args = parse_args()
    REQUEST = args.request_size
    seconds = args.time
    build_cli(args)
    cat = catalogue()
    specs = {(r["label"], r["bits"]): r["spec"] for r in cat}
    modes = {(r["label"], r["bits"]): r["mode"] for r in cat}
    every = [(r["label"], r["bits"]) for r in cat]
    if args.rows:
        wanted = split_rows(args.rows)
        unknown = [row_name(r) for r in wanted if r not in specs]
        if unknown:
            sys.exit(f"compare.py: unknown rows {', '.join(unknown)}; known: "
                     + ", ".join(map(row_name, every)))
        rows = [r for r in every if r in wanted]
    else:
        rows = every

    if args.threads_rows:
        threads_rows = []
        for r in split_rows(args.threads_rows):
            if r not in specs:
                sys.exit(f"compare.py: unknown row {row_name(r)} in --threads-rows")
            mode = modes[r]
            dirs = ("dec",) if mode == "cbc" else ("enc", "dec")
            threads_rows.append((r, dirs))
    else:
        threads_rows = [(tuple(split_rows(n)[0]), d) for n, d in THREADS_ROWS]
        if args.rows:
            threads_rows = [t for t in threads_rows if t[0] in rows]
    if args.no_threads:
        threads_rows = []

    global TIER
    if args.tier or args.all_tiers:
        names = [args.tier] if args.tier else [n for n, _ in tier_masks()]
        tiers = []
        for name in names:
            tier, why = make_tier(name)
            if tier is None:
                print(f"note: tier {name} skipped: {why}", flush=True)
                log(f"tier {name} skipped: {why}")
            else:
                tiers.append(tier)
        if not tiers:
            sys.exit("compare.py: no tier to run on this CPU")
    else:
        tiers = [Tier()]
    facts = None
    if args.ceilings:
        why = ceilings.supported()
        if why:
            print(f"note: --ceilings skipped: {why}", flush=True)
        else:
            log("timing the execution units (scripts/ceilings.py)")
            facts = ceilings.measure()
            for n, missing in facts["skipped"].items():
                print(f"note: ceiling probe {n} skipped: the CPU lacks {', '.join(missing)}",
                      flush=True)
    mhz = args.cpu_mhz or (facts["mhz"] if facts else None) or cpu_mhz()
    text, md, below = [], ["# clustercrypt performance comparison", ""], 0
    for tier in tiers:
        TIER = tier
        if tier.name:
            log(f"== tier {tier.name}")
        header, sections, b = measure(args, rows, threads_rows, specs, mhz, facts)
        below += b
        text.append("\n".join(header))
        md += ["\n\n".join(header), ""]
        for title, h, t, foot in sections:
            text.append(f"\n== {title}\n{render_text(h, t)}\n" + "\n".join(foot))
            md += [f"## {title}", "", render_markdown(h, t), "", *[f"{f}  " for f in foot], ""]
        text.append("")
    print("\n".join(text), flush=True)
    if args.markdown:
        Path(args.markdown).write_text("\n".join(md) + "\n")
        log(f"wrote {args.markdown}")
    if args.strict and below:
        sys.exit(1)


def cpu_mhz():
    """The clock /proc/cpuinfo reports (MHz), or None."""
    try:
        for line in open("/proc/cpuinfo"):
            if line.lower().startswith("cpu mhz"):
                return float(line.split(":", 1)[1])
    except (OSError, ValueError):
        pass
    return None


def measure(args, rows, threads_rows, specs, mhz, facts=None):
    """Measures every side at the current TIER: (header lines, sections, rows below);
    with `facts` (ceilings.measure), a section of the rows' ceilings too."""
    seconds = args.time
    ours, ossl, gcry, crates = {}, {}, {}, {}
    ossl_version = gcry_version = ossl_method = None
    if not args.threads_only:
        openssl = None if args.no_openssl else OpenSSL(seconds)
        gcrypt = None if args.no_gcrypt else Gcrypt(seconds)
        # Row by row, and within a row the sides in turn (ours, OpenSSL,
        # libgcrypt, --runs times), so that a slow moment of the (shared)
        # machine, which lasts seconds, does not fall on one side only.
        for i, row in enumerate(rows, 1):
            log(f"[{i}/{len(rows)}] {row_name(row)}")
            mine, theirs, gcrys = [], [], []
            for _ in range(args.runs):
                got = bench_ours([row], specs, seconds, 1).get(row)
                if got:
                    mine.append(got)
                got = openssl.row(row) if openssl else None
                if got:
                    theirs.append(got)
                got = gcrypt.row(row) if gcrypt else None
                if got:
                    gcrys.append(got)
            if mine:
                ours[row] = (*best_pair(mine), mine[-1][2])
            if theirs:
                ossl[row] = (*best_pair(theirs), theirs[-1][2])
            if gcrys:
                gcry[row] = best_pair(gcrys)
        ossl_version = openssl.version if openssl else None
        ossl_method = openssl.method() if openssl and openssl.version else None
        gcry_version = gcrypt.version if gcrypt else None
        if args.crates != "none":
            if args.crates == "all":
                crate_rows = rows
            else:
                own = set(split_rows(",".join(OWN_CODE_ROWS)))
                crate_rows = [r for r in rows if r in own or (r not in ossl and r not in gcry)]
            crates = bench_crates(crate_rows, seconds, args.runs)
    threads = bench_threads(threads_rows, specs, seconds, args.runs) if threads_rows else []

    machine = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                machine = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    header = [
        f"clustercrypt comparison, {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}, "
        f"{machine or platform.machine()}, {os.cpu_count()} CPUs",
        f"method: 1 MiB buffer, {request_name(REQUEST)} requests with an IV each, "
        f">= {seconds:g} s per direction "
        + (f"({ossl_method}), " if ossl_method else "")
        + f"MiB/s = 2^20 bytes/s, one thread, best of {args.runs} run(s)",
        f"references: {ossl_version or 'OpenSSL: not run'}; {gcry_version or 'libgcrypt: not run'}",
        f"tier: {TIER.name or 'unmasked'}"
        + (f" (ours: CLUSTERCRYPT_DISABLE_HWF={TIER.mask or '(empty)'}; OpenSSL: "
           + (" ".join(f"{k}={v}" for k, v in TIER.lib_env.items()) or "unmasked")
           + f"; libgcrypt: disable-hwf {','.join(TIER.gcrypt_hide) or '(none)'})"
           if TIER.name else ""),
        f"cycles per byte at {mhz:.0f} MHz" + (
            " (--cpu-mhz)" if args.cpu_mhz else " (measured: dependent ADDs)" if facts else
            " (/proc/cpuinfo; the real clock may differ)")
        if mhz else "cycles per byte: clock unknown (give --cpu-mhz)",
        f"targets: ours >= {LIBRARY_TARGET}x max(OpenSSL, libgcrypt) where either has the row, "
        f">= {CRATE_TARGET}x the best crate otherwise; --threads all >= {THREADS_TARGET}x one "
        "thread",
    ]
    sections = []
    below = 0
    if not args.threads_only:
        h, t, tally, notes = main_table(rows, ours, ossl, gcry, crates, mhz)
        below += tally.get("BELOW", 0) + tally.get("ERROR", 0) + tally.get("MISMATCH", 0)
        foot = [f"rows: {summary(tally)}"]
        if notes:
            foot.append("rc4:256: OpenSSL speed keys RC4 with 128 bits (its speed does not "
                        "depend on the key length)")
        sections.append(("Ours against OpenSSL and libgcrypt (MiB/s)", h, t, foot))
        if facts:
            # Once more after the rows, keeping each probe's best: a busy
            # moment of the shared machine can slow a probe as it slows a row.
            facts = ceilings.merge(facts, ceilings.measure())
            tier = TIER.name or version_info("").get("tier", "")
            h, t, notes = ceilings_table(rows, ours, ossl, gcry,
                                         ceilings.ceilings(facts).get(tier, {}))
            if t:
                sections.append((f"Ceilings of this CPU's execution units at {tier} "
                                 "(scripts/ceilings.py; MiB/s, % of the ceiling)", h, t, notes))
        h, t, tally = crates_table(rows, crates)
        below += tally.get("BELOW", 0) + tally.get("MISMATCH", 0)
        if t:
            foot = [f"rows: {summary(tally)}"]
            if any(r[5].endswith("(unmasked)") for r in t):
                foot.append("aes(unmasked): the aes crate picks VAES or AVX-512 itself, "
                            "whatever the mask, so its rows at this tier compare nothing (n/a)")
            if any(r[5].endswith("(soft)") for r in t):
                foot.append('aes(soft): the aes crate built with --cfg aes_backend="soft" '
                            "(its fixsliced code), the only way to keep it off AES-NI")
            sections.append(("Our code against the RustCrypto compositions it replaces "
                             "(same process, alternating; MiB/s, target 1.0)", h, t, foot))
    if threads:
        h, t, tally = threads_table(threads)
        below += tally.get("BELOW", 0) + tally.get("ERROR", 0)
        sections.append((f"--threads all against 1 thread (aggregate MiB/s, target "
                         f"{THREADS_TARGET}x on {os.cpu_count()} CPUs)", h, t,
                         [f"rows: {summary(tally)}"]))

    return header, sections, below


if __name__ == "__main__":
    main()
