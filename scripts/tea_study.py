#!/usr/bin/env python3
"""The TEA cluster study's experiment (seed 001), repeated with clustercrypt.

For TEA with 1 to 32 "rounds" (the whole cipher applied R times per block) and
files of 240 kB to 240 MB, time three builds as the study did:
  serial   - one thread on one node     (their serial build)
  threads  - all threads of one node    (their OpenMP build)
  cluster  - all nodes under mpirun     (their hybrid MPI+OpenMP build)
and print seconds and speedups like the study's tables. Every run's output is
checked against the serial run's (same key, raw TEA-ECB, no padding).

The cluster runs use `mpirun -n N` on this machine, or the network-namespace
testbed (`--testbed`, see docs/TESTBED.md) to put a shaped link between the
nodes. Needs a build with MPI: `cargo build --release --features mpi`.

  python3 scripts/tea_study.py                       # sizes up to 24 MB
  python3 scripts/tea_study.py --max-size 240M --nodes 3 --testbed --rate 100mbit
  python3 scripts/tea_study.py --json tea.json && clustercrypt report tea.json --ref tea-cluster -o tea.html

`--json FILE` also writes the timings as clustercrypt results (the `speedup` rows
of the JSON schema, see docs/BENCH.md), which `clustercrypt report` draws as
speedup against file size and against rounds.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROUNDS = [1, 2, 4, 8, 16, 32]
SIZES = [("240kB", 240_000), ("2.4MB", 2_400_000), ("24MB", 24_000_000), ("240MB", 240_000_000)]
KEY = "00112233445566778899aabbccddeeff"


def parse_size(text):
    t = text.upper().rstrip("B")
    mult = {"K": 1000, "M": 1000_000, "G": 1000_000_000}.get(t[-1:], 1)
    return int(float(t[:-1] if t[-1:] in "KMG" else t) * mult)


def timed(cmd, env):
    start = time.monotonic()
    r = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.monotonic() - start
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stderr}")
    return elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default="target/release/clustercrypt")
    ap.add_argument("--nodes", type=int, default=3, help="ranks of the cluster runs (default 3, as the study)")
    ap.add_argument("--max-size", default="24M", help="largest file (default 24M; the study went to 240M)")
    ap.add_argument("--rounds", default=",".join(map(str, ROUNDS)))
    ap.add_argument("--testbed", action="store_true", help="run the cluster inside scripts/testbed.sh namespaces")
    ap.add_argument("--rate", default=None, help="with --testbed: link rate, e.g. 100mbit (the study's router)")
    ap.add_argument("--no-cluster", action="store_true")
    ap.add_argument("--json", metavar="FILE", help="also write the timings as clustercrypt results (JSON)")
    args = ap.parse_args()

    binary = os.path.abspath(args.binary)
    if not os.path.exists(binary):
        sys.exit(f"{binary} not found: cargo build --release --features mpi")
    limit = parse_size(args.max_size)
    sizes = [(n, s) for n, s in SIZES if s <= limit]
    rounds = [int(r) for r in args.rounds.split(",")]
    env = dict(os.environ, TK=KEY, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    here = os.path.dirname(os.path.abspath(__file__))
    cluster = not args.no_cluster and shutil.which("mpirun") is not None
    if args.testbed and cluster:
        up = [os.path.join(here, "testbed.sh"), "up", str(args.nodes)]
        if args.rate:
            up += ["--rate", args.rate]
        subprocess.run(up, check=True)

    def run(cmd_prefix, threads, rnds, src, dst, cluster_flag=False):
        cmd = cmd_prefix + [binary, "encrypt", "--raw", "--cipher", "tea-ecb", "--padding", "none",
                            "--key-env", "TK", "--rounds", str(rnds), "-q", "--force",
                            "--threads", threads, "-o", dst, src]
        if cluster_flag:
            cmd.append("--cluster")
        return timed(cmd, env)

    if args.testbed:
        mpi = [os.path.join(here, "testbed.sh"), "run", "--"]
    else:
        mpi = ["mpirun", "-n", str(args.nodes), "--oversubscribe", "--bind-to", "none"]

    print(f"TEA study (seed 001) with clustercrypt: raw TEA-ECB, seconds per run; "
          f"cluster = {args.nodes} ranks {'in the namespace testbed' if args.testbed else 'on this machine'}"
          f"{' at ' + args.rate if args.rate else ''}")
    header = f"{'size':>7} {'rounds':>6} {'serial s':>9} {'threads s':>9} {'cluster s':>9} " \
             f"{'threads/serial':>14} {'cluster/serial':>14} {'cluster/threads':>15}"
    print(header)
    print("-" * len(header))
    rows = []
    # `--threads all` means every logical CPU the binary may use: ask the binary.
    threads_all = os.cpu_count() or 1
    try:
        with tempfile.TemporaryDirectory(dir=".") as d:
            for name, size in sizes:
                src = os.path.join(d, "in")
                with open(src, "wb") as f:
                    f.write(os.urandom(size - size % 8))
                for r in rounds:
                    s = run([], "1", r, src, os.path.join(d, "s"))
                    t = run([], "all", r, src, os.path.join(d, "t"))
                    ref = open(os.path.join(d, "s"), "rb").read()
                    assert open(os.path.join(d, "t"), "rb").read() == ref, "threads output differs"
                    size_run = size - size % 8
                    rows.append(dict(nodes=1, threads=1, rounds=r, file_bytes=size_run, seconds=s, baseline_seconds=s))
                    rows.append(dict(nodes=1, threads=threads_all, rounds=r, file_bytes=size_run, seconds=t,
                                     baseline_seconds=s))
                    if cluster:
                        c = run(mpi, "all", r, src, os.path.join(d, "c"), cluster_flag=True)
                        rows.append(dict(nodes=args.nodes, threads=threads_all, rounds=r, file_bytes=size_run,
                                         seconds=c, baseline_seconds=s))
                        assert open(os.path.join(d, "c"), "rb").read() == ref, "cluster output differs"
                        print(f"{name:>7} {r:>6} {s:>9.3f} {t:>9.3f} {c:>9.3f} {s / t:>14.2f} {s / c:>14.2f} {t / c:>15.2f}")
                    else:
                        print(f"{name:>7} {r:>6} {s:>9.3f} {t:>9.3f} {'-':>9} {s / t:>14.2f} {'-':>14} {'-':>15}")
                    sys.stdout.flush()
    finally:
        if args.testbed and cluster:
            subprocess.run([os.path.join(here, "testbed.sh"), "down"], check=False)
    if args.json:
        write_results(binary, env, rows, args.json)


def write_results(binary, env, rows, path):
    """The timings as a clustercrypt results file: the machine, settings and a
    TEA row come from a short `clustercrypt bench` run, the timings go into
    `speedup` rows (serial rows included: their seconds are the baseline)."""
    out = subprocess.run([binary, "bench", "--cipher", "tea-ecb", "--no-kdf", "--time", "0.1",
                          "--format", "json"], env=env, check=True, capture_output=True, text=True).stdout
    report = json.loads(out)
    threads = report["machine"]["cores"] or 1
    for row in rows:
        row["cipher"] = "tea-ecb"
        row["threads"] = threads if row["threads"] > 1 else 1
    report["speedup"] = rows
    tmp = path + ".partial"
    with open(tmp, "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
