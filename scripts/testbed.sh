#!/usr/bin/env bash
# A simulated cluster on one machine: N nodes as network namespaces on a bridge,
# each with its own address and an optionally shaped link, MPI ranks launched
# inside them. See docs/TESTBED.md.
#
#   scripts/testbed.sh up N [--rate RATE] [--delay DELAY] [--prefix NAME] [--subnet A.B.C] [--burst SIZE]
#   scripts/testbed.sh run [--prefix NAME] [--] MPIRUN-ARGS...
#   scripts/testbed.sh status [--prefix NAME]
#   scripts/testbed.sh counters [--prefix NAME]      # "node namespace address rx_bytes tx_bytes"
#   scripts/testbed.sh exec [--prefix NAME] NODE CMD...
#   scripts/testbed.sh down [--prefix NAME]
#   scripts/testbed.sh check [tbf|netem]              # what this machine supports
#
# Everything lives in namespaces this script creates: NAME-node0..N-1 (one per
# node, interface eth0 with address A.B.C.(i+1)/24) and NAME-br (the bridge br0
# and the switch-side ends p0..pN-1 of the links). The root namespace gets no
# interface, no address and no route; no packet leaves the namespaces.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
AGENT="$SCRIPT_DIR/testbed-rsh.sh"
STATE_ROOT=${CLUSTERCRYPT_TESTBED_STATE:-/run/clustercrypt-testbed}
DEFAULT_PREFIX=ccnode
DEFAULT_SUBNET=10.77.0
IFACE=eth0

die() {
    echo "testbed: error: $*" >&2
    exit 1
}
note() { echo "testbed: $*" >&2; }

usage() {
    local code=${1:-2}
    if [ "$code" = 0 ]; then
        sed -n '6,12p' "${BASH_SOURCE[0]}" | sed 's/^#   /  /'
    else
        sed -n '6,12p' "${BASH_SOURCE[0]}" | sed 's/^#   /  /' >&2
    fi
    exit "$code"
}

need_root() {
    [ "$(id -u)" = 0 ] || die "must run as root (network namespaces and tc need CAP_NET_ADMIN); try: sudo $0 $CMDLINE"
}

need_tools() {
    local t
    for t in "$@"; do
        command -v "$t" >/dev/null 2>&1 || case $t in
            ip | tc) die "'$t' not found: install iproute2 (apt-get install iproute2)" ;;
            mpirun) die "'mpirun' not found: install Open MPI (apt-get install openmpi-bin libopenmpi-dev)" ;;
            *) die "'$t' not found" ;;
        esac
    done
}

check_prefix() {
    [[ $1 =~ ^[A-Za-z][A-Za-z0-9_]{0,23}$ ]] ||
        die "bad prefix '$1': a letter, then up to 23 letters, digits or '_'"
}

# The namespaces of a testbed, nodes in order, then the bridge's.
node_namespaces() {
    ip netns list 2>/dev/null | awk -v p="$1" '{ if ($1 ~ "^" p "-node[0-9]+$") print substr($1, length(p) + 6) " " $1 }' |
        sort -n | awk '{print $2}'
}
all_namespaces() {
    node_namespaces "$1"
    if ip netns list 2>/dev/null | awk '{print $1}' | grep -qx -- "$1-br"; then echo "$1-br"; fi
}

# Rate in tc syntax -> bytes per second (empty when the unit is unknown).
rate_bytes_per_sec() {
    awk -v r="$1" 'BEGIN {
        if (!match(r, /^[0-9]+(\.[0-9]+)?/)) exit
        n = substr(r, 1, RLENGTH); u = tolower(substr(r, RLENGTH + 1))
        m["bit"] = 1/8; m[""] = 1/8; m["kbit"] = 1e3/8; m["mbit"] = 1e6/8; m["gbit"] = 1e9/8; m["tbit"] = 1e12/8
        m["kibit"] = 1024/8; m["mibit"] = 1048576/8; m["gibit"] = 1073741824/8
        m["bps"] = 1; m["kbps"] = 1e3; m["mbps"] = 1e6; m["gbps"] = 1e9
        m["kibps"] = 1024; m["mibps"] = 1048576; m["gibps"] = 1073741824
        if (!(u in m)) exit
        printf "%d\n", n * m[u]
    }'
}

# Shapes egress of IFACE in namespace NS: tbf for the rate, netem for the delay
# (netem at the root with tbf as its child, as tc-netem(8) describes).
shape() {
    local ns=$1 dev=$2 rate=$3 delay=$4 burst=$5
    if [ -n "$delay" ] && [ -n "$rate" ]; then
        tc -n "$ns" qdisc add dev "$dev" root handle 1: netem delay "$delay" limit 100000
        tc -n "$ns" qdisc add dev "$dev" parent 1:1 handle 10: tbf rate "$rate" burst "$burst" latency 400ms
    elif [ -n "$delay" ]; then
        tc -n "$ns" qdisc add dev "$dev" root handle 1: netem delay "$delay" limit 100000
    elif [ -n "$rate" ]; then
        tc -n "$ns" qdisc add dev "$dev" root handle 1: tbf rate "$rate" burst "$burst" latency 400ms
    fi
}

# Whether the kernel has a qdisc: tries it on the loopback of namespace NS.
has_qdisc() {
    local ns=$1
    shift
    tc -n "$ns" qdisc add dev lo root "$@" 2>/dev/null || return 1
    tc -n "$ns" qdisc del dev lo root 2>/dev/null || true
}

# `check [netem|tbf]`: what this machine can do. With a qdisc name, only its
# exit status (0: available).
cmd_check() {
    local what=${1:-} ok=0 tbf netem t
    need_root
    need_tools ip tc
    # A throwaway namespace of our own (global: the trap runs outside).
    PROBE_NS="tbprobe$$"
    trap 'ip netns del "$PROBE_NS" 2>/dev/null || true' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    ip netns add "$PROBE_NS"
    ip -n "$PROBE_NS" link set lo up
    tbf=no netem=no
    has_qdisc "$PROBE_NS" tbf rate 100mbit burst 12500b latency 400ms && tbf=yes
    has_qdisc "$PROBE_NS" netem delay 1ms && netem=yes
    ip netns del "$PROBE_NS"
    trap - EXIT INT TERM
    case $what in
        tbf) [ "$tbf" = yes ]; return ;;
        netem) [ "$netem" = yes ]; return ;;
        "") ;;
        *) die "check: unknown feature '$what' (tbf, netem)" ;;
    esac
    echo "root: yes"
    for t in ip tc mpirun unshare; do
        if command -v "$t" >/dev/null 2>&1; then echo "$t: $(command -v "$t")"; else echo "$t: MISSING"; ok=1; fi
    done
    if [ -x "$AGENT" ]; then echo "rsh agent: $AGENT"; else echo "rsh agent: MISSING ($AGENT)"; ok=1; fi
    echo "tbf qdisc (--rate): $tbf"
    if [ "$netem" = yes ]; then
        echo "netem qdisc (--delay): yes"
    else
        echo "netem qdisc (--delay): no (kernel without CONFIG_NET_SCH_NETEM: --delay unavailable)"
    fi
    [ "$tbf" = yes ] || ok=1
    return $ok
}

teardown() {
    local prefix=$1 ns pids pid removed=0 i
    for ns in $(all_namespaces "$prefix"); do
        # Processes still inside (a stuck rank or daemon of a failed run) keep a
        # namespace alive after `ip netns del`: stop them first, by pid.
        pids=$(ip netns pids "$ns" 2>/dev/null || true)
        if [ -n "$pids" ]; then
            note "stopping processes left in $ns: $(echo "$pids" | tr '\n' ' ')"
            for pid in $pids; do kill -TERM "$pid" 2>/dev/null || true; done
            for i in 1 2 3 4 5 6 7 8 9 10; do
                pids=$(ip netns pids "$ns" 2>/dev/null || true)
                [ -z "$pids" ] && break
                sleep 0.2
            done
            for pid in $pids; do kill -KILL "$pid" 2>/dev/null || true; done
        fi
        ip netns del "$ns" 2>/dev/null || true
        if ip netns list 2>/dev/null | awk '{print $1}' | grep -qx -- "$ns"; then
            note "warning: could not remove namespace $ns"
        else
            removed=$((removed + 1))
        fi
    done
    rm -rf -- "${STATE_ROOT:?}/$prefix"
    rmdir -- "$STATE_ROOT" 2>/dev/null || true
    echo "$removed"
}

up_exit() {
    if [ "$UP_DONE" != 1 ]; then
        note "up failed; tearing down what was built"
        teardown "$UP_PREFIX" >/dev/null
    fi
    exit "$1"
}

cmd_up() {
    local n="" rate="" delay="" prefix=$DEFAULT_PREFIX subnet=$DEFAULT_SUBNET burst=""
    while [ $# -gt 0 ]; do
        case $1 in
            --rate) rate=${2:?--rate needs a value}; shift 2 ;;
            --delay) delay=${2:?--delay needs a value}; shift 2 ;;
            --prefix) prefix=${2:?--prefix needs a value}; shift 2 ;;
            --subnet) subnet=${2:?--subnet needs a value}; shift 2 ;;
            --burst) burst=${2:?--burst needs a value}; shift 2 ;;
            -h | --help) usage 0 ;;
            -*) die "up: unknown option '$1'" ;;
            *)
                [ -z "$n" ] || die "up: unexpected argument '$1'"
                n=$1; shift ;;
        esac
    done
    [ -n "$n" ] || die "up: how many nodes? (scripts/testbed.sh up N ...)"
    if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ] || [ "$n" -gt 253 ]; then die "up: N must be 1..253, got '$n'"; fi
    check_prefix "$prefix"
    # Private ranges only; the addresses exist only inside the testbed's namespaces.
    [[ $subnet =~ ^(10\.[0-9]{1,3}|192\.168|172\.(1[6-9]|2[0-9]|3[01]))\.[0-9]{1,3}$ ]] ||
        die "up: --subnet must be the first three octets of a private /24 (10.x.y, 172.16-31.y, 192.168.y), got '$subnet'"
    if [ -n "$delay" ]; then
        [[ $delay =~ ^[0-9]+(\.[0-9]+)?(s|sec|secs|ms|msec|msecs|us|usec|usecs)$ ]] ||
            die "up: cannot read --delay '$delay' (examples: 1ms, 500us, 0.2ms)"
    fi
    need_root
    need_tools ip tc awk
    command -v mpirun >/dev/null 2>&1 || note "warning: mpirun not found; 'run' will need Open MPI (apt-get install openmpi-bin)"
    if [ -n "$rate" ]; then
        local bps
        bps=$(rate_bytes_per_sec "$rate")
        if [ -z "$bps" ] || [ "$bps" -le 0 ]; then die "up: cannot read --rate '$rate' (examples: 100mbit, 330mbit, 1gbit, 12500kbps)"; fi
        if [ -z "$burst" ]; then
            # About 1 ms of traffic, at least 4000 bytes (32kbit).
            burst=$((bps / 1000))
            [ "$burst" -ge 4000 ] || burst=4000
            burst="${burst}b"
        fi
    fi
    if [ -n "$(all_namespaces "$prefix")" ]; then
        die "up: a testbed '$prefix' already exists ($(all_namespaces "$prefix" | tr '\n' ' ')); remove it with: $0 down --prefix $prefix"
    fi

    local state="$STATE_ROOT/$prefix"
    # A failure (or Ctrl-C) half-way removes whatever was built. The trap runs
    # outside this function, hence the globals.
    UP_PREFIX=$prefix
    UP_DONE=0
    trap 'up_exit $?' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM

    local br="$prefix-br" i ns addr
    ip netns add "$br"
    ip netns exec "$br" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip -n "$br" link set lo up
    if [ -n "$delay" ] && ! has_qdisc "$br" netem delay "$delay"; then
        die "up: --delay needs the netem qdisc, which this kernel lacks (CONFIG_NET_SCH_NETEM; 'modprobe sch_netem' if it is a module); run without --delay, or see: $0 check"
    fi
    if [ -n "$rate" ] && ! has_qdisc "$br" tbf rate "$rate" burst "$burst" latency 400ms; then
        die "up: --rate needs the tbf qdisc, which this kernel lacks (CONFIG_NET_SCH_TBF), or tc rejected rate '$rate' burst '$burst'"
    fi
    ip -n "$br" link add br0 type bridge stp_state 0 forward_delay 0
    ip -n "$br" link set br0 up
    for ((i = 0; i < n; i++)); do
        ns="$prefix-node$i"
        addr="$subnet.$((i + 1))"
        ip netns add "$ns"
        # IPv4 only: no IPv6 neighbour discovery in the byte counters.
        ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
        ip -n "$ns" link set lo up
        # The link: eth0 in the node, p$i on the bridge, created in place.
        ip -n "$br" link add "p$i" type veth peer name "$IFACE" netns "$ns"
        ip -n "$br" link set "p$i" master br0
        ip -n "$br" link set "p$i" up
        ip -n "$ns" addr add "$addr/24" dev "$IFACE"
        ip -n "$ns" link set "$IFACE" up
        # Rate on both directions of the link (node -> switch on eth0, switch ->
        # node on p$i, like a full-duplex switch port); the delay once, on the
        # node's side, so one way between two nodes takes DELAY more.
        shape "$ns" "$IFACE" "$rate" "$delay" "$burst"
        shape "$br" "p$i" "$rate" "" "$burst"
    done

    mkdir -p "$state"
    : >"$state/hostfile"
    : >"$state/map"
    for ((i = 0; i < n; i++)); do
        echo "$subnet.$((i + 1)) slots=1" >>"$state/hostfile"
        echo "$subnet.$((i + 1)) $prefix-node$i" >>"$state/map"
    done
    {
        echo "nodes=$n"
        echo "subnet=$subnet"
        echo "rate=$rate"
        echo "delay=$delay"
        echo "burst=$burst"
    } >"$state/config"

    # Every node must reach every other: a TCP connection attempt to a closed
    # port answers "refused" at once when the link works.
    local err
    for ((i = 1; i < n; i++)); do
        err=$(ip netns exec "$prefix-node0" timeout 5 bash -c "exec 3<>/dev/tcp/$subnet.$((i + 1))/9" 2>&1 || true)
        case $err in
            *refused*) ;;
            *) die "up: node0 cannot reach node$i ($subnet.$((i + 1))): ${err:-timed out}" ;;
        esac
    done

    UP_DONE=1
    trap - EXIT INT TERM
    echo "testbed '$prefix' is up: $n node(s) $subnet.1-$subnet.$n on bridge $br" \
        "(rate ${rate:-unshaped}${rate:+, burst $burst}, delay ${delay:-none})"
    echo "hostfile: $state/hostfile"
    local opt=""
    [ "$prefix" = "$DEFAULT_PREFIX" ] || opt=" --prefix $prefix"
    echo "run a job:  $0 run$opt -- PROGRAM ARGS...   (one rank per node)"
    echo "remove it:  $0 down$opt"
}

load_state() {
    local prefix=$1
    STATE="$STATE_ROOT/$prefix"
    if [ ! -f "$STATE/config" ] || [ ! -f "$STATE/hostfile" ]; then
        die "no testbed '$prefix' (missing $STATE); create one with: $0 up N --prefix $prefix"
    fi
    NODES=$(sed -n 's/^nodes=//p' "$STATE/config")
    SUBNET=$(sed -n 's/^subnet=//p' "$STATE/config")
    local have
    have=$(node_namespaces "$prefix" | wc -l)
    if [ "$have" != "$NODES" ] || ! ip netns list | awk '{print $1}' | grep -qx -- "$prefix-br"; then
        die "testbed '$prefix' is incomplete ($have of $NODES node namespaces); recreate it: $0 down --prefix $prefix; $0 up ..."
    fi
}

cmd_run() {
    local prefix=$DEFAULT_PREFIX
    while [ $# -gt 0 ]; do
        case $1 in
            --prefix) prefix=${2:?--prefix needs a value}; shift 2 ;;
            --) shift; break ;;
            *) break ;;
        esac
    done
    [ $# -gt 0 ] || die "run: what should mpirun start? ($0 run [--prefix NAME] -- PROGRAM ARGS...)"
    check_prefix "$prefix"
    need_root
    need_tools ip mpirun unshare
    [ -x "$AGENT" ] || die "run: the rsh agent $AGENT is missing or not executable"
    [[ $AGENT != *[[:space:]]* ]] || die "run: Open MPI cannot use an rsh agent whose path has spaces ($AGENT)"
    load_state "$prefix"
    # mpirun runs in node0, which is its local host (the hostfile's first
    # address is one of node0's); the other daemons start through the agent,
    # which enters the namespace holding the address. MPI traffic uses TCP over
    # the namespaces' interfaces only (ob1 + tcp BTL: no shared memory, no UCX),
    # so every byte between ranks crosses the simulated links.
    export CLUSTERCRYPT_TESTBED_MAP="$STATE/map"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    # mpirun (and so rank 0) gets node0's name as its host name, as the agent
    # gives each other node its own.
    # shellcheck disable=SC2016 # $1, $@: of the inner shell
    exec ip netns exec "$prefix-node0" unshare --uts /bin/sh -c 'hostname "$1" && shift && exec "$@"' testbed \
        "$prefix-node0" mpirun \
        --hostfile "$STATE/hostfile" \
        --mca plm_rsh_agent "$AGENT" \
        --mca plm_rsh_no_tree_spawn 1 \
        --mca pml ob1 \
        --mca btl tcp,self \
        --mca btl_tcp_if_include "$SUBNET.0/24" \
        --mca oob_tcp_if_include "$SUBNET.0/24" \
        --bind-to none \
        "$@"
}

# "node namespace address rx_bytes tx_bytes" of each node's eth0.
print_counters() {
    local prefix=$1 ns addr stats
    for ns in $(node_namespaces "$prefix"); do
        addr=$(ip -n "$ns" -4 -o addr show dev "$IFACE" 2>/dev/null | awk '{print $4}' | cut -d/ -f1)
        stats=$(ip netns exec "$ns" cat "/sys/class/net/$IFACE/statistics/rx_bytes" "/sys/class/net/$IFACE/statistics/tx_bytes" 2>/dev/null | tr '\n' ' ')
        echo "node${ns##*-node} $ns ${addr:--} ${stats:-- -}"
    done
}

cmd_counters() {
    local prefix=$DEFAULT_PREFIX
    while [ $# -gt 0 ]; do
        case $1 in
            --prefix) prefix=${2:?--prefix needs a value}; shift 2 ;;
            *) die "counters: unexpected argument '$1'" ;;
        esac
    done
    check_prefix "$prefix"
    need_root
    need_tools ip
    [ -n "$(node_namespaces "$prefix")" ] || die "no testbed '$prefix' is up"
    print_counters "$prefix"
}

# One line per qdisc of a device: kind and parameters, bytes sent, and how
# often it held packets back (overlimits: the shaping at work).
qdisc_summary() {
    tc -s -n "$1" qdisc show dev "$2" 2>/dev/null | awk '
        /^qdisc/ { sub(/ refcnt [0-9]+/, ""); q = $0 }
        /^ *Sent/ { gsub(/[(),]/, ""); printf "%s%s[sent %s bytes, dropped %s, overlimits %s]", sep, q, $2, $7, $9; sep = "; " }
        END { if (!sep) printf "?" }'
}

cmd_status() {
    local prefix=$DEFAULT_PREFIX
    while [ $# -gt 0 ]; do
        case $1 in
            --prefix) prefix=${2:?--prefix needs a value}; shift 2 ;;
            *) die "status: unexpected argument '$1'" ;;
        esac
    done
    check_prefix "$prefix"
    need_root
    need_tools ip tc
    local d others=""
    for d in "$STATE_ROOT"/*/; do
        [ -d "$d" ] || continue
        d=${d%/}
        d=${d##*/}
        [ "$d" = "$prefix" ] || others="$others$d "
    done
    if [ -z "$(all_namespaces "$prefix")" ]; then
        echo "testbed '$prefix': down (no namespaces)"
        [ -z "$others" ] || echo "other testbeds: $others"
        return 0
    fi
    if [ -f "$STATE_ROOT/$prefix/config" ]; then
        echo "testbed '$prefix': $(tr '\n' ' ' <"$STATE_ROOT/$prefix/config")"
        echo "hostfile: $STATE_ROOT/$prefix/hostfile"
    else
        echo "testbed '$prefix': namespaces exist but no state in $STATE_ROOT/$prefix (half-built? run: $0 down --prefix $prefix)"
    fi
    local node ns addr rx tx i
    printf '%-8s %-20s %-15s %14s %14s\n' NODE NAMESPACE ADDRESS RX_BYTES TX_BYTES
    while read -r node ns addr rx tx; do
        printf '%-8s %-20s %-15s %14s %14s\n' "$node" "$ns" "$addr" "$rx" "$tx"
    done < <(print_counters "$prefix")
    echo "qdiscs (node side: node -> switch; switch side: switch -> node):"
    for ns in $(node_namespaces "$prefix"); do
        i=${ns##*-node}
        echo "  node$i $IFACE:     $(qdisc_summary "$ns" "$IFACE")"
        echo "  node$i switch p$i: $(qdisc_summary "$prefix-br" "p$i")"
    done
    local stray=""
    for ns in $(all_namespaces "$prefix"); do
        [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] || stray="$stray $ns"
    done
    [ -z "$stray" ] || echo "processes running in:$stray"
    [ -z "$others" ] || echo "other testbeds: $others"
}

cmd_exec() {
    local prefix=$DEFAULT_PREFIX
    while [ $# -gt 0 ]; do
        case $1 in
            --prefix) prefix=${2:?--prefix needs a value}; shift 2 ;;
            --) shift; break ;;
            *) break ;;
        esac
    done
    [ $# -ge 2 ] || die "exec: usage: $0 exec [--prefix NAME] NODE COMMAND... (NODE: 0, node0 or an address)"
    check_prefix "$prefix"
    need_root
    need_tools ip
    load_state "$prefix"
    local node=$1 ns
    shift
    case $node in
        node[0-9]*) ns="$prefix-$node" ;;
        [0-9]*.*) ns=$(awk -v h="$node" '$1 == h {print $2}' "$STATE/map") ;;
        [0-9]*) ns="$prefix-node$node" ;;
        *) ns="" ;;
    esac
    node_namespaces "$prefix" | grep -qx -- "${ns:-/}" || die "exec: no node '$node' in testbed '$prefix'"
    exec ip netns exec "$ns" "$@"
}

cmd_down() {
    local prefix=$DEFAULT_PREFIX
    while [ $# -gt 0 ]; do
        case $1 in
            --prefix) prefix=${2:?--prefix needs a value}; shift 2 ;;
            *) die "down: unexpected argument '$1'" ;;
        esac
    done
    check_prefix "$prefix"
    need_root
    need_tools ip
    local removed
    removed=$(teardown "$prefix")
    if [ "$removed" = 0 ]; then
        echo "testbed '$prefix': nothing to remove"
    else
        echo "testbed '$prefix': removed $removed namespace(s)"
    fi
    [ -z "$(all_namespaces "$prefix")" ] || die "down: some namespaces of '$prefix' remain: $(all_namespaces "$prefix" | tr '\n' ' ')"
}

[ $# -gt 0 ] || usage
CMDLINE="$*"
cmd=$1
shift
case $cmd in
    up) cmd_up "$@" ;;
    run) cmd_run "$@" ;;
    status) cmd_status "$@" ;;
    counters) cmd_counters "$@" ;;
    exec) cmd_exec "$@" ;;
    down) cmd_down "$@" ;;
    check) cmd_check "$@" ;;
    -h | --help | help) usage 0 ;;
    *) die "unknown command '$cmd' (up, run, status, counters, exec, down, check)" ;;
esac
