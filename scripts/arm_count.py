#!/usr/bin/env python3
"""Instructions per byte on aarch64 (or x86-64), ours against OpenSSL and libgcrypt, under QEMU.

Wall time under QEMU means nothing, but the number of guest instructions a
program executes is deterministic: scripts/insn_count.c, a QEMU TCG plugin
(API version 1, QEMU 7.2 as Debian 12 ships it), counts them. Each side
processes a fixed amount of data, the way `clustercrypt bench` measures (a
BUFFER of 256 KiB in 64 KiB requests, an IV per request, the key schedule
once), with exactly ENC passes of encryption and DEC passes of decryption:

  * ours:      target/aarch64-unknown-linux-gnu/release/clustercrypt bench
               --cipher SPEC --key-size BITS --no-kdf --passes ENC,DEC
  * OpenSSL:   scripts/evp_bench.c against Debian's arm64 libcrypto (EVP)
  * libgcrypt: scripts/gcrypt_bench.c --passes ENC,DEC against Debian's arm64
               libgcrypt

Each side runs three times: passes (1,1), (3,1) and (1,3). Start-up, key
schedules, buffer filling and the AEAD set-up are the same in all three, so
  encrypt instructions/byte = (count(3,1) - count(1,1)) / (2 * BUFFER)
  decrypt instructions/byte = (count(1,3) - count(1,1)) / (2 * BUFFER).

ratio = (the fewer of OpenSSL's and libgcrypt's instructions/byte) / ours,
per direction; the target is ratio >= 1.0 in both directions (ours executes
no more instructions per byte than the better library). --strict exits with
status 1 when a selected row misses it, cannot be measured on our side, or
ran code the tier hides (an implementation named "...-unmasked": a library
that detects the CPU itself, such as the `aes` crate, ignored the mask; such a
row is marked NOT MASKED, its count is not the tier's).

Tiers, under `qemu-aarch64 -cpu max` (which has every ARMv8 crypto extension):
  * ce:   nothing masked.
  * neon: no crypto extensions, as on a Raspberry Pi 3/4: ours with
          CLUSTERCRYPT_DISABLE_HWF=aes,pmull,sha2 (and AWS-LC's OPENSSL_armcap
          as `clustercrypt --version` prints it, so no re-exec is needed);
          OpenSSL 3.0 with OPENSSL_armcap=0x1 (crypto/armcap.c takes the
          variable as the whole capability word: bit 0 = NEON only);
          libgcrypt with --disable-hwf arm-aes,arm-pmull,arm-sha1,arm-sha2.

x86-64 (--arch x86_64): the same counts for this machine's own architecture,
under `qemu-x86_64 -cpu max` (AES-NI, PCLMULQDQ, AVX2 and VAES, no VPCLMULQDQ
or AVX-512 in QEMU 7.2), for the tiers that model reaches (portable and
aesni-avx2; the others are skipped with a note). Deterministic where wall time
on a shared machine is not, but a count, not a time: even the portable tier's
bitsliced AES waits on its S-box's depth on a wide out-of-order core (its
depth-16 circuits execute 4-5% more instructions and run 1.5-3% faster on
Zen 4), and at AES-NI and above latencies and ports decide. Only compare.py
measures time. Masks are those of compare.py: ours from the binary's `tiers:`
line, OpenSSL's OPENSSL_ia32cap from its `library mask:` line, libgcrypt's
hidden features from compare.py's GCRYPT_HIDE. The drivers link the host's
libcrypto and libgcrypt (libssl-dev, libgcrypt20-dev); ours is
target/release/clustercrypt (`cargo build --release -p clustercrypt`).

What it needs: qemu-user (qemu-aarch64), a host C compiler (the plugin),
gcc-aarch64-linux-gnu and libc6-dev-arm64-cross (the drivers), the arm64
packages libssl3 libssl-dev libgcrypt20 libgcrypt20-dev libgpg-error0
libgpg-error-dev (fetched with `apt-get download` after `dpkg
--add-architecture arm64 && apt-get update`, extracted with dpkg -x), and the
rustup target aarch64-unknown-linux-gnu. Everything goes to target/arm-count/
and is reused on the next run; --no-build uses the existing clustercrypt.

Usage:
  python3 scripts/arm_count.py                           # every row both sides have
  python3 scripts/arm_count.py --rows aes-cbc:256 --tier neon
  python3 scripts/arm_count.py --tier all --markdown arm.md --strict
  python3 scripts/arm_count.py --arch x86_64 --tier portable --rows aes-ctr:128
  python3 scripts/arm_count.py --binary target/aarch64-unknown-linux-gnu/release-small/clustercrypt

Rows are label:key_bits as compare.py and `clustercrypt ciphers` name them.
Python 3 standard library only.
"""

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "target" / "arm-count"
TARGET = "aarch64-unknown-linux-gnu"
TARGET_DIR = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
CLI = TARGET_DIR / TARGET / "release" / "clustercrypt"
SYSROOT = WORK / "sysroot"
LIBDIRS = [SYSROOT / "usr" / "lib" / "aarch64-linux-gnu", SYSROOT / "lib" / "aarch64-linux-gnu"]
PLUGIN_SRC = ROOT / "scripts" / "insn_count.c"
PLUGIN = WORK / "libinsn_count.so"
DRIVERS = {
    "evp_bench": (ROOT / "scripts" / "evp_bench.c", ["-lcrypto"]),
    "gcrypt_bench": (ROOT / "scripts" / "gcrypt_bench.c", ["-lgcrypt", "-lgpg-error"]),
}
DEBS = ["libssl3", "libssl-dev", "libgcrypt20", "libgcrypt20-dev", "libgpg-error0",
        "libgpg-error-dev"]
CROSS_CC = "aarch64-linux-gnu-gcc"
GUEST_LIBC = "/usr/aarch64-linux-gnu"
QEMU = "qemu-aarch64"
ARCH = "aarch64"

BUFFER = 256 << 10
REQUEST = 64 << 10
TARGET_RATIO = 1.0

# tier -> (our mask, OpenSSL 3.0's environment, libgcrypt's hidden features).
# OpenSSL 3.0 takes OPENSSL_armcap as the whole capability word: 0x1 = NEON only.
TIERS = {
    "ce": ("", {}, []),
    "neon": ("aes,pmull,sha2", {"OPENSSL_armcap": "0x1"},
             ["arm-aes", "arm-pmull", "arm-sha1", "arm-sha2"]),
}
# What --arch x86_64 changes (see main).
X86_WORK = ROOT / "target" / "x86-count"

DEFAULT_ROWS = ("aes-ecb:128,aes-ecb:256,aes-cbc:128,aes-cbc:256,aes-ctr:128,aes-ctr:256,"
                "aes-xts:256,aes-xts:512,aes-gcm:128,aes-gcm:256,chacha20:256,"
                "chacha20-poly1305:256,serpent-cbc:256,serpent-ctr:256,serpent-xts:512,"
                "twofish-cbc:256,camellia-cbc:256")


def log(msg):
    print(f"[arm_count] {msg}", file=sys.stderr, flush=True)


def fail(msg):
    sys.exit(f"arm_count.py: {msg}")


def load_compare():
    """scripts/compare.py as a module: its OpenSSL names for our rows (one list)."""
    spec = importlib.util.spec_from_file_location("compare", ROOT / "scripts" / "compare.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


COMPARE = load_compare()


def need(tool, package):
    if not shutil.which(tool):
        fail(f"{tool} not found: install {package} (apt-get install -y {package})")


def newer(out, *sources):
    return out.exists() and all(out.stat().st_mtime >= s.stat().st_mtime for s in sources)


def build_plugin():
    need(QEMU, "qemu-user")
    WORK.mkdir(parents=True, exist_ok=True)
    if newer(PLUGIN, PLUGIN_SRC):
        return
    cc = os.environ.get("CC", "cc")
    need(cc, "gcc")
    cmd = [cc, "-shared", "-fPIC", "-O2", str(PLUGIN_SRC), "-o", str(PLUGIN)]
    log(" ".join(cmd))
    p = subprocess.run(cmd, text=True, capture_output=True)
    if p.returncode != 0:
        fail("cannot build the QEMU plugin:\n" + p.stderr[-2000:])


def fetch_libraries():
    """Debian's arm64 libcrypto and libgcrypt, extracted under target/arm-count/sysroot."""
    if (LIBDIRS[0] / "libgcrypt.so").exists() and (LIBDIRS[0] / "libcrypto.so").exists():
        return
    debs = WORK / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    archs = subprocess.run(["dpkg", "--print-foreign-architectures"], text=True,
                           capture_output=True).stdout.split()
    if "arm64" not in archs:
        fail("apt has no arm64 packages: run `dpkg --add-architecture arm64 && apt-get update` "
             "(as root) first")
    log("apt-get download " + " ".join(f"{d}:arm64" for d in DEBS))
    p = subprocess.run(["apt-get", "download", *[f"{d}:arm64" for d in DEBS]], cwd=debs,
                       text=True, capture_output=True)
    if p.returncode != 0:
        fail("downloading the arm64 packages failed (is `apt-get update` done after "
             "`dpkg --add-architecture arm64`?):\n" + p.stderr[-2000:])
    for deb in sorted(debs.glob("*_arm64.deb")):
        subprocess.run(["dpkg", "-x", str(deb), str(SYSROOT)], check=True)


def build_drivers():
    need(CROSS_CC, "gcc-aarch64-linux-gnu" if ARCH == "aarch64" else "gcc")
    if ARCH == "aarch64":
        fetch_libraries()
        inc = [f"-I{SYSROOT / 'usr' / 'include'}",
               f"-I{SYSROOT / 'usr' / 'include' / 'aarch64-linux-gnu'}"]
        libs = [f"-L{d}" for d in LIBDIRS] + ["-Wl,-rpath-link," + ":".join(map(str, LIBDIRS))]
    else:
        inc, libs = [], []
    for name, (src, link) in DRIVERS.items():
        out = WORK / name
        if newer(out, src):
            continue
        cmd = [CROSS_CC, "-O2", *inc, str(src), *libs, *link, "-o", str(out)]
        log(" ".join(cmd))
        p = subprocess.run(cmd, text=True, capture_output=True)
        if p.returncode != 0:
            fail(f"cannot compile {src.name} (x86-64: libssl-dev and libgcrypt20-dev "
                 "installed?):\n" + p.stderr[-2000:])


def build_ours(args):
    if args.no_build:
        if not CLI.exists():
            fail(f"{CLI} is missing and --no-build was given")
        return
    env = dict(os.environ)
    env.setdefault("CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER", CROSS_CC)
    env.setdefault("CC_aarch64_unknown_linux_gnu", CROSS_CC)
    cmd = ["nice", "-n", "10", "cargo", "build", "--release", "-p", "clustercrypt"]
    if ARCH == "aarch64":
        cmd += ["--target", TARGET]
    log(" ".join(cmd))
    p = subprocess.run(cmd, cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    if p.returncode != 0:
        if CLI.exists():
            log("cargo build failed; using the existing binary:\n" + p.stdout[-2000:])
        else:
            fail("cargo build failed (rustup target add aarch64-unknown-linux-gnu?):\n"
                 + p.stdout[-4000:])


def guest_env(extra):
    env = dict(os.environ)
    for k in ("CLUSTERCRYPT_DISABLE_HWF", "OPENSSL_armcap", "OPENSSL_ia32cap"):
        env.pop(k, None)
    if GUEST_LIBC:
        env["QEMU_LD_PREFIX"] = GUEST_LIBC
    if LIBDIRS:
        env["LD_LIBRARY_PATH"] = ":".join(map(str, LIBDIRS))
    env.update(extra)
    return env


def guest(cmd, env, plugin_out=None):
    """Runs a guest program under QEMU's -cpu max (optionally counted)."""
    q = [QEMU, "-cpu", "max"]
    if plugin_out:
        q += ["-plugin", f"{PLUGIN},out={plugin_out}"]
    return subprocess.run(q + cmd, env=env, text=True, errors="replace", capture_output=True)


def count(cmd, env):
    """Guest instructions `cmd` executes, or None (with a log line) when it fails."""
    with tempfile.TemporaryDirectory(prefix="arm-count-") as tmp:
        out = Path(tmp) / "insns"
        p = guest(cmd, env, out)
        if p.returncode != 0 or not out.exists():
            log(f"{' '.join(map(str, cmd))} failed ({p.returncode}):\n{p.stderr[-1500:]}")
            return None
        return int(out.read_text().split()[1])


def per_byte(make_cmd, env):
    """(encrypt, decrypt) instructions per byte from passes (1,1), (3,1), (1,3)."""
    c = {}
    for passes in ("1,1", "3,1", "1,3"):
        c[passes] = count(make_cmd(passes), env)
        if c[passes] is None:
            return None
    return ((c["3,1"] - c["1,1"]) / (2 * BUFFER), (c["1,3"] - c["1,1"]) / (2 * BUFFER))


def parse_info(text):
    info = {}
    for line in text.splitlines():
        k, sep, v = line.partition(":")
        if sep:
            info[k.strip()] = v.strip()
    return info


def our_info(mask, extra=None):
    """`clustercrypt --version` under a mask (and `extra` environment), as {key: value}."""
    env = {"CLUSTERCRYPT_DISABLE_HWF": mask, **(extra or {})}
    return parse_info(guest([str(CLI), "--version"], guest_env(env)).stdout)


def our_specs():
    p = guest([str(CLI), "ciphers", "--json"], guest_env({}))
    if p.returncode != 0:
        fail("clustercrypt ciphers --json failed under QEMU:\n" + p.stderr[-2000:])
    return {(r["cipher"], r["key_bits"]): r["spec"] for r in json.loads(p.stdout)}


def measure_tier(tier, rows, specs):
    mask, ossl_extra, hide = TIERS[tier]
    info = our_info(mask, ossl_extra if ARCH == "x86_64" else None)
    if info.get("tier") != tier:
        fail(f"under QEMU -cpu max with CLUSTERCRYPT_DISABLE_HWF={mask!r} the binary reports "
             f"tier {info.get('tier')!r}, not {tier!r}")
    ours_env = {"CLUSTERCRYPT_DISABLE_HWF": mask}
    lib = info.get("library mask", "none")
    if lib != "none":
        k, _, v = lib.partition("=")
        ours_env[k] = v
    ours_env = guest_env(ours_env)
    ossl_env = guest_env(ossl_extra)
    lib_env = guest_env({})
    table = []
    for row in rows:
        label, bits = row
        name = COMPARE.row_name(row)
        log(f"{tier}: {name}")
        ours, impl = None, ""
        if row in specs:
            ours = per_byte(lambda ps: [str(CLI), "bench", "--cipher", specs[row], "--key-size",
                                        str(bits), "--no-kdf", "--format", "json",
                                        "--buffer-size", str(BUFFER), "--request-size",
                                        str(REQUEST), "--passes", ps], ours_env)
            p = guest([str(CLI), "bench", "--cipher", specs[row], "--key-size", str(bits),
                       "--no-kdf", "--format", "json", "--buffer-size", str(BUFFER),
                       "--request-size", str(REQUEST), "--passes", "1"], ours_env)
            if p.returncode == 0:
                impl = json.loads(p.stdout)["ciphers"][0].get("implementation", "")
        ossl = None
        evp = COMPARE.openssl_name(label, bits)
        if evp and not evp.endswith("*"):
            ossl = per_byte(lambda ps: [str(WORK / "evp_bench"), "-b", str(BUFFER), "-r",
                                        str(REQUEST), "--passes", ps, evp], ossl_env)
        gcry = per_byte(lambda ps: [str(WORK / "gcrypt_bench"), "-b", str(BUFFER), "-r",
                                    str(REQUEST), "--passes", ps,
                                    *(["--disable-hwf", ",".join(hide)] if hide else []),
                                    name], lib_env)
        table.append((name, impl, ours, ossl, gcry))
    return info, table


def fmt(v):
    return "-" if v is None else f"{v:.2f}"


def ratio(ours, ossl, gcry, i):
    theirs = [s[i] for s in (ossl, gcry) if s is not None and s[i] > 0]
    if ours is None or not theirs or ours[i] <= 0:
        return None
    return min(theirs) / ours[i]


HEADERS = ["row", "ours impl", "ours enc", "ours dec", "OpenSSL enc", "OpenSSL dec",
           "gcrypt enc", "gcrypt dec", "ratio enc", "ratio dec", "target"]


def render(table):
    lines, missed = [], []
    for name, impl, ours, ossl, gcry in table:
        r = [ratio(ours, ossl, gcry, i) for i in (0, 1)]
        if ours is None:
            verdict = "NOT MEASURED"
            missed.append(name)
        elif "unmasked" in impl:
            # A library that detects the CPU itself ran code the tier hides.
            verdict = "NOT MASKED"
            missed.append(name)
        elif all(x is None for x in r):
            verdict = "no library"
        elif all(x is None or x >= TARGET_RATIO for x in r):
            verdict = "ok"
        else:
            verdict = "BELOW"
            missed.append(name)
        lines.append([name, impl or "-", fmt(ours and ours[0]), fmt(ours and ours[1]),
                      fmt(ossl and ossl[0]), fmt(ossl and ossl[1]), fmt(gcry and gcry[0]),
                      fmt(gcry and gcry[1]), fmt(r[0]) + ("x" if r[0] else ""),
                      fmt(r[1]) + ("x" if r[1] else ""), verdict])
    return lines, missed


def text_table(lines):
    widths = [max(len(str(x)) for x in col) for col in zip(HEADERS, *lines)]
    out = ["  ".join(h.ljust(w) for h, w in zip(HEADERS, widths))]
    out += ["  ".join(str(x).ljust(w) for x, w in zip(line, widths)) for line in lines]
    return "\n".join(out)


def md_table(lines):
    out = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    out += ["| " + " | ".join(map(str, line)) + " |" for line in lines]
    return "\n".join(out)


def use_x86_64():
    """Switches the module to counting x86-64 programs (--arch x86_64)."""
    global ARCH, QEMU, WORK, PLUGIN, CLI, CROSS_CC, GUEST_LIBC, LIBDIRS
    ARCH, QEMU = "x86_64", "qemu-x86_64"
    WORK = X86_WORK
    PLUGIN = WORK / "libinsn_count.so"
    CLI = TARGET_DIR / "release" / "clustercrypt"
    CROSS_CC = os.environ.get("CC", "cc")
    GUEST_LIBC, LIBDIRS = None, []


def x86_tiers():
    """The x86-64 tiers from the binary's `tiers:` line, masked as compare.py masks them.

    OpenSSL's (and AWS-LC's) mask is the `library mask:` our binary prints for
    the tier, asked natively: with a mask and without that variable the binary
    starts itself again to set it, and qemu-user runs such an exec of an x86-64
    program natively, outside QEMU and its count. Passing it to every guest
    run avoids that exec."""
    TIERS.clear()
    for item in our_info("").get("tiers", "").split():
        name, _, mask = item.partition("=")
        native = subprocess.run([str(CLI), "--version"], text=True, capture_output=True,
                                env={**os.environ, "CLUSTERCRYPT_DISABLE_HWF": mask})
        lib = parse_info(native.stdout).get("library mask", "none")
        lib_env = dict([lib.partition("=")[::2]]) if lib != "none" else {}
        TIERS[name] = (mask, lib_env, COMPARE.GCRYPT_HIDE.get(name, []))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", default=DEFAULT_ROWS, help="ROW,ROW as label:key_bits")
    ap.add_argument("--arch", default="aarch64", choices=["aarch64", "x86_64"],
                    help="the guest architecture (x86_64: this machine's, see above)")
    ap.add_argument("--tier", default="all",
                    help="ce, neon (aarch64); portable, aesni-avx2, ... (x86_64); or all")
    ap.add_argument("--strict", action="store_true",
                    help="exit 1 when a row misses ratio >= 1.0 or is not measured")
    ap.add_argument("--markdown", metavar="FILE", help="also write the tables to FILE")
    ap.add_argument("--no-build", action="store_true", help="use the existing binary")
    ap.add_argument("--binary", metavar="PATH",
                    help="count this clustercrypt instead of the release build (implies "
                         "--no-build), e.g. the package's: target/aarch64-unknown-linux-gnu/"
                         "release-small/clustercrypt")
    args = ap.parse_args()
    if args.arch == "x86_64":
        use_x86_64()
    elif args.tier not in ("all", *TIERS):
        ap.error(f"--tier {args.tier}: aarch64 has ce, neon or all")
    if args.binary:
        global CLI
        CLI = Path(args.binary).resolve()
        args.no_build = True
    rows = []
    for part in filter(None, (x.strip() for x in args.rows.split(","))):
        label, _, bits = part.rpartition(":")
        if not label or not bits.isdigit():
            ap.error(f"row '{part}' is not label:key_bits (e.g. aes-xts:512)")
        rows.append((label, int(bits)))
    if not rows:
        ap.error("--rows names no row")
    build_plugin()
    build_drivers()
    build_ours(args)
    specs = our_specs()
    if ARCH == "x86_64":
        x86_tiers()
        if args.tier not in ("all", *TIERS):
            ap.error(f"--tier {args.tier}: x86-64 has {', '.join(TIERS)} or all")
    tiers = (["neon", "ce"] if ARCH == "aarch64" else list(TIERS)) if args.tier == "all" \
        else [args.tier]
    sections, missed_all = [], []
    for tier in tiers:
        if ARCH == "x86_64":
            reached = our_info(*TIERS[tier][:2]).get("tier")
            if reached != tier:
                print(f"x86-64 tier {tier}: skipped, QEMU's -cpu max reaches only {reached} "
                      "under its mask\n", flush=True)
                continue
        info, table = measure_tier(tier, rows, specs)
        lines, missed = render(table)
        missed_all += [f"{tier}:{m}" for m in missed]
        title = (f"{ARCH} tier {tier} ({QEMU} -cpu max, CLUSTERCRYPT_DISABLE_HWF="
                 f"{TIERS[tier][0] or 'none'}; features in use: {info.get('cpu features')}): "
                 f"instructions per byte, {BUFFER >> 10} KiB buffer, {REQUEST >> 10} KiB "
                 f"requests; ratio = the better library / ours, target >= {TARGET_RATIO:.1f}")
        print(title + "\n" + text_table(lines) + "\n", flush=True)
        sections.append(f"#### {title}\n\n{md_table(lines)}\n")
    if args.markdown:
        Path(args.markdown).write_text("\n".join(sections))
        log(f"wrote {args.markdown}")
    if missed_all:
        log("below target or not measured: " + ", ".join(missed_all))
        if args.strict:
            sys.exit(1)


if __name__ == "__main__":
    main()
