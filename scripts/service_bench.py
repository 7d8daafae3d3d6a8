#!/usr/bin/env python3
"""Load benchmark of `clustercrypt serve` against local `clustercrypt encrypt`.

Usage: python3 scripts/service_bench.py [--binary target/release/clustercrypt]
           [--size-mib 64] [--clients 1,4,16] [--requests 48] [--dir DIR]

Builds nothing: give it a release binary (`cargo build --release -p clustercrypt`).
Creates one file of --size-mib random bytes per client, starts the server on a
loopback port, and for each concurrency level runs the same encryptions twice:
N local `clustercrypt encrypt` processes at a time, then N `clustercrypt remote
encrypt` processes at a time against the server; each level runs about
--requests encryptions in rounds of N. Both use the same 256-bit key file (no
Argon2), the default suite and chunk size, and write to files in DIR (default: a
directory in /dev/shm when there is one, so that fsync of the outputs does not
measure the disk).

The service is measured twice: with `clustercrypt remote` processes (end to
end: read the file, upload, download, write and fsync the output), and with a
minimal in-memory client (Python threads on raw sockets: the body from memory,
the answer read and dropped), which shows what the server itself sustains when
the client costs almost nothing. On one machine both clients share the CPUs
with the server.

Prints a Markdown table: clients, local MiB/s, service MiB/s (plaintext bytes
over the wall time of all rounds) and the ratio to local, and p50/p95/p99 of
the per-request latency (start to end of one request), for both clients.
Exits 1 if the `clustercrypt remote` ratio is below --target (default 0.7) at
any level.
"""

import argparse
import math
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time


def percentile(values, p):
    """Nearest-rank percentile."""
    s = sorted(values)
    k = max(0, math.ceil(p / 100 * len(s)) - 1)
    return s[k]


def run_round(commands, cwd):
    """Starts all commands at once; returns (wall seconds, per-command seconds)."""
    t0 = time.perf_counter()
    procs = []
    for cmd in commands:
        procs.append((time.perf_counter(), subprocess.Popen(
            cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE)))
    latencies = [None] * len(procs)
    errors = []

    def wait(i, start, p):
        _, err = p.communicate()
        latencies[i] = time.perf_counter() - start
        if p.returncode != 0:
            errors.append(f"{' '.join(commands[i])}: exit {p.returncode}: {err.decode()[-400:]}")

    threads = [threading.Thread(target=wait, args=(i, s, p)) for i, (s, p) in enumerate(procs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    if errors:
        raise SystemExit("service_bench: a run failed:\n" + "\n".join(errors))
    return wall, latencies


def measure(make_commands, clients, rounds, cwd):
    total_wall, lat = 0.0, []
    for r in range(rounds):
        wall, l = run_round(make_commands(clients), cwd)
        total_wall += wall
        lat += l
        for i in range(clients):
            try:
                os.remove(os.path.join(cwd, f"out{i}"))
            except FileNotFoundError:
                pass
    return total_wall, lat


def memory_request(port, token, key, data, query=""):
    """One encryption by a minimal client: the body from memory, the answer read
    and dropped, both at once (the server streams; a client that sent the whole
    body before reading would stall). Returns the latency in seconds."""
    t0 = time.perf_counter()
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    head = (f"POST /v1/encrypt{query} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
            f"Authorization: Bearer {token}\r\nX-Clustercrypt-Key: {key}\r\n"
            f"Content-Length: {len(data)}\r\n\r\n").encode()
    sent = []

    def send():
        view = memoryview(data)
        s.sendall(head)
        for i in range(0, len(view), 1 << 20):
            s.sendall(view[i:i + (1 << 20)])
        sent.append(True)

    sender = threading.Thread(target=send)
    sender.start()
    buf = bytearray(1 << 20)
    first, tail, total = b"", b"", 0
    while True:
        n = s.recv_into(buf)
        if n == 0:
            break
        if len(first) < 16:
            first += bytes(buf[:16])
        tail = (tail + bytes(buf[max(0, n - 5):n]))[-5:]
        total += n
    sender.join()
    s.close()
    if not sent or not first.startswith(b"HTTP/1.1 200") or tail != b"0\r\n\r\n" \
            or total < len(data):
        raise SystemExit(f"service_bench: an in-memory request failed: {first!r} ... {tail!r}")
    return time.perf_counter() - t0


def measure_memory(port, token, key, data, clients, rounds, query=""):
    total_wall, lat = 0.0, []
    for _ in range(rounds):
        results = [None] * clients
        t0 = time.perf_counter()

        def one(i):
            results[i] = memory_request(port, token, key, data, query)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        total_wall += time.perf_counter() - t0
        if any(r is None for r in results):
            raise SystemExit("service_bench: an in-memory request failed")
        lat += results
    return total_wall, lat


def start_server(binary, cwd, extra):
    proc = subprocess.Popen(
        [binary, "serve", "--listen", "127.0.0.1:0", "--tokens", "tokens.txt",
         "--bench-results", "bench.json", *extra],
        cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True)
    deadline = time.time() + 30
    while time.time() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            # Keep draining the per-request log lines so the server never blocks on them.
            threading.Thread(target=lambda: proc.stderr.read(), daemon=True).start()
            return proc, m.group(1).rstrip("/")
    proc.kill()
    raise SystemExit("service_bench: the server did not start")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default="target/release/clustercrypt")
    ap.add_argument("--size-mib", type=int, default=64)
    ap.add_argument("--clients", default="1,4,16")
    ap.add_argument("--requests", type=int, default=48,
                    help="encryptions per level and side (rounded up to whole rounds)")
    ap.add_argument("--dir", help="where the files go (default: /dev/shm if present)")
    ap.add_argument("--target", type=float, default=0.7)
    ap.add_argument("--suite", help="suite for every encryption (default: the CPU's default); "
                    "a slow one (serpent-256-ctr-hmac-sha256) stands for a board without "
                    "AES instructions, where the cipher rather than loopback copies dominates")
    ap.add_argument("--server-arg", action="append", default=[],
                    help="extra option for `clustercrypt serve` (repeatable)")
    args = ap.parse_args()
    binary = os.path.abspath(args.binary)
    if not os.access(binary, os.X_OK):
        raise SystemExit(f"service_bench: no binary at {binary}; "
                         "build it with `cargo build --release -p clustercrypt`")
    levels = [int(c) for c in args.clients.split(",")]
    base = args.dir or ("/dev/shm" if os.path.isdir("/dev/shm") else None)
    work = tempfile.mkdtemp(prefix="cc-service-bench-", dir=base)
    server = None
    try:
        def cli(*a):
            return subprocess.run([binary, *a], cwd=work, check=True, capture_output=True,
                                  text=True).stdout

        size = args.size_mib << 20
        for i in range(max(levels)):
            with open(os.path.join(work, f"in{i}"), "wb") as f:
                f.write(os.urandom(size))
        cli("keygen", "-o", "key.hex")
        cli("bench", "--cipher", "aes-cbc", "--key-size", "256", "--no-kdf", "--time", "0.05",
            "--format", "json", "-o", "bench.json")
        token = cli("token", "create", "--tokens", "tokens.txt", "--name", "bench").strip()
        with open(os.path.join(work, "bench.token"), "w") as f:
            f.write(token + "\n")
        server, url = start_server(binary, work, args.server_arg)

        suite = ["--suite", args.suite] if args.suite else []

        def local(n):
            return [[binary, "encrypt", "--key-file", "key.hex", "-q", *suite, f"in{i}",
                     "-o", f"out{i}"] for i in range(n)]

        def remote(n):
            return [[binary, "remote", "encrypt", "--server", url, "--token-file", "bench.token",
                     "--key-file", "key.hex", "-q", *suite, f"in{i}", "-o", f"out{i}"]
                    for i in range(n)]

        port = int(url.rsplit(":", 1)[1])
        key = open(os.path.join(work, "key.hex")).read().strip()
        with open(os.path.join(work, "in0"), "rb") as f:
            payload = f.read()

        # Warm-up: page cache, server threads.
        measure(local, 1, 1, work)
        measure(remote, 1, 1, work)
        query = f"?suite={args.suite}" if args.suite else ""
        measure_memory(port, token, key, payload, 1, 1, query)
        version = cli("--version").splitlines()[0]
        print(f"{version}; {platform.node()}, {os.cpu_count()} CPUs; "
              f"{args.size_mib} MiB per request; suite {args.suite or 'default'}; "
              f"files in {base or tempfile.gettempdir()}")
        print()
        print("| clients | requests | local MiB/s | service MiB/s (`remote`) | ratio "
              "| latency p50 / p95 / p99 | service MiB/s (in-memory client) | ratio "
              "| latency p50 / p95 / p99 |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")

        def lat(seconds):
            ms = [1000 * x for x in seconds]
            return " / ".join(f"{percentile(ms, p):.0f}" for p in (50, 95, 99)) + " ms"

        worst = worst_mem = float("inf")
        for n in levels:
            rounds = max(1, math.ceil(args.requests / n))
            mib = n * rounds * args.size_mib
            lw, _ = measure(local, n, rounds, work)
            sw, slat = measure(remote, n, rounds, work)
            mw, mlat = measure_memory(port, token, key, payload, n, rounds, query)
            loc, svc, mem = mib / lw, mib / sw, mib / mw
            worst, worst_mem = min(worst, svc / loc), min(worst_mem, mem / loc)
            print(f"| {n} | {n * rounds} | {loc:.0f} | {svc:.0f} | {svc / loc:.2f} | {lat(slat)} "
                  f"| {mem:.0f} | {mem / loc:.2f} | {lat(mlat)} |", flush=True)
        print()
        for what, w in (("`clustercrypt remote`", worst), ("the in-memory client", worst_mem)):
            verdict = "meets" if w >= args.target else "MISSES"
            print(f"{what}: lowest ratio {w:.2f}, {verdict} the target of {args.target}x")
        return 0 if worst >= args.target else 1
    finally:
        if server is not None:
            server.terminate()
            server.wait(30)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
