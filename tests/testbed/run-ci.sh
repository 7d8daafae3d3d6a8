#!/usr/bin/env bash
# CI check of the simulated cluster (scripts/testbed.sh, docs/TESTBED.md):
# three nodes on a 100 Mbit/s link (plus 1 ms delay where the kernel has netem),
# `encrypt --cluster` across them, checked with a local decrypt, and a raw TEA
# run whose chunks must cross the shaped link. Builds nothing: give it the
# clustercrypt binary built with `--features mpi`. Needs root, iproute2 and
# Open MPI. Exits non-zero on any failure; always removes its namespaces.
#
#   tests/testbed/run-ci.sh target/release/clustercrypt
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TESTBED="$ROOT/scripts/testbed.sh"
PREFIX="ccci$$"             # our own namespaces: ccciPID-node0..2, ccciPID-br
RATE=100mbit
RATE_BYTES=12500000         # 100 Mbit/s in bytes per second
RUN_TIMEOUT=45              # seconds per mpirun, well above the few seconds a run takes

fail() {
    echo "testbed CI: FAIL: $*" >&2
    exit 1
}
say() { echo "testbed CI: $*"; }

[ $# = 1 ] || { echo "usage: $0 PATH/TO/clustercrypt (built with --features mpi)" >&2; exit 2; }
BIN=$(readlink -f "$1") || fail "no binary at $1"
[ -x "$BIN" ] || fail "$1 is not an executable"
[ "$(id -u)" = 0 ] || fail "must run as root (network namespaces)"

WORK=$(mktemp -d)
cleanup() {
    local rc=$?
    "$TESTBED" down --prefix "$PREFIX" >/dev/null 2>&1 || rc=1
    if ip netns list | awk '{print $1}' | grep -q "^$PREFIX-"; then
        echo "testbed CI: FAIL: namespaces of $PREFIX left behind" >&2
        rc=1
    fi
    rm -rf -- "$WORK"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cd "$WORK"

"$TESTBED" check >/dev/null || { "$TESTBED" check || true; fail "this machine cannot run the testbed"; }
DELAY=()
if "$TESTBED" check netem; then
    DELAY=(--delay 1ms)
else
    say "note: this kernel has no netem qdisc; the link is rate-shaped without the 1 ms delay"
fi
"$TESTBED" up 3 --rate "$RATE" "${DELAY[@]}" --prefix "$PREFIX"

counter() { # counter NODE rx|tx
    "$TESTBED" counters --prefix "$PREFIX" | awk -v n="node$1" -v f="$2" '$1 == n { print (f == "rx" ? $4 : $5) }'
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# Reproducible input of 4 MB (neither all zeros nor random: the same every run).
awk 'BEGIN { for (i = 0; i < 62500; i++) printf "%063d\n", i * 7919 }' >in
[ "$(stat -c %s in)" = 4000000 ] || fail "could not make the input"
"$BIN" keygen -o k.key >/dev/null 2>&1 || fail "keygen failed"

# 1. The authenticated format across the testbed, checked with a local decrypt.
say "encrypt --cluster, 3 ranks on 3 namespaces, $RATE ${DELAY[*]}"
before1=$(counter 1 tx) before2=$(counter 2 tx)
timeout "$RUN_TIMEOUT" "$TESTBED" run --prefix "$PREFIX" -- \
    "$BIN" encrypt --cluster --key-file k.key -q -o out.cc in ||
    fail "encrypt --cluster failed or timed out (exit $?)"
"$BIN" decrypt --key-file k.key -q -o back out.cc || fail "the cluster's output does not decrypt"
cmp -s back in || fail "the cluster's output does not decrypt to the input"
say "ok: the output decrypts locally to the input"
# Every rank greeted rank 0 over the links (fast ciphers may keep every chunk
# on rank 0, so only the greeting is certain to cross here).
[ "$(counter 1 tx)" -gt "$before1" ] || fail "node1 sent nothing: its rank did not talk over the testbed"
[ "$(counter 2 tx)" -gt "$before2" ] || fail "node2 sent nothing: its rank did not talk over the testbed"

# 2. Heavy work that is worth shipping: raw TEA with 32 rounds, 256 KiB chunks.
#    Its chunks must cross the shaped links, and the result must equal a local run.
export CI_TEA_KEY=000102030405060708090a0b0c0d0e0f
tea=(encrypt --raw --cipher tea-ecb --padding none --key-env CI_TEA_KEY --rounds 32 --chunk-size 256K -q)
"$BIN" "${tea[@]}" -o tea.local in 2>/dev/null || fail "local TEA run failed"
tx0=$(counter 0 tx) rx1=$(counter 1 rx) rx2=$(counter 2 rx)
start=$(now_ms)
timeout "$RUN_TIMEOUT" "$TESTBED" run --prefix "$PREFIX" -- "$BIN" "${tea[@]}" --cluster -o tea.cluster in 2>/dev/null ||
    fail "TEA --cluster failed or timed out (exit $?)"
elapsed=$(($(now_ms) - start))
cmp -s tea.cluster tea.local || fail "TEA --cluster differs from the local run"
sent=$(($(counter 0 tx) - tx0))
got1=$(($(counter 1 rx) - rx1))
got2=$(($(counter 2 rx) - rx2))
say "ok: TEA --cluster equals the local run; node0 sent $sent bytes (node1 got $got1, node2 got $got2) in $elapsed ms"
for g in "$got1" "$got2"; do
    [ "$g" -ge 262144 ] || fail "a node received less than one chunk ($g bytes): the work did not cross the links"
done
# Node0's link cannot carry more than the rate allows: a run shorter than
# sent/rate would mean the shaping is not in force.
min_ms=$((sent * 1000 / RATE_BYTES))
[ "$elapsed" -ge "$min_ms" ] || fail "$sent bytes in $elapsed ms is faster than $RATE ($min_ms ms at least)"
overlimits=$(tc -s -n "$PREFIX-node0" qdisc show dev eth0 | awk '/^qdisc tbf/ { t = 1 } t && /Sent/ { gsub(/[(),]/, ""); print $9; exit }')
[ "${overlimits:-0}" -gt 0 ] || fail "node0's tbf qdisc never held a packet back: the link was not shaped"
say "ok: at least $min_ms ms for $sent bytes at $RATE; node0's shaper held packets back $overlimits times"
say "PASS"
