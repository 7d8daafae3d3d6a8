#!/usr/bin/env bash
# Open MPI's "ssh" into a node of the simulated cluster (scripts/testbed.sh):
# called by mpirun as `testbed-rsh.sh [OPTIONS] HOST COMMAND...`, it runs
# COMMAND (an orted launch line meant for a remote shell) inside the network
# namespace that holds HOST's address, as `ssh HOST COMMAND...` would on a real
# cluster. `scripts/testbed.sh run` sets CLUSTERCRYPT_TESTBED_MAP (lines
# "ADDRESS NAMESPACE").
set -euo pipefail

die() {
    echo "testbed-rsh: error: $*" >&2
    exit 255 # what ssh returns when it cannot connect
}

map=${CLUSTERCRYPT_TESTBED_MAP:-}
[ -n "$map" ] || die "CLUSTERCRYPT_TESTBED_MAP is not set; start jobs with scripts/testbed.sh run"
[ -r "$map" ] || die "cannot read the testbed map $map (is the testbed up?)"
# Skip ssh-style options such as -x that a launcher may add.
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done
[ $# -ge 2 ] || die "usage: testbed-rsh.sh HOST COMMAND..."
host=$1
shift
ns=$(awk -v h="$host" '$1 == h { print $2; exit }' "$map")
[ -n "$ns" ] || die "host '$host' is not a node of this testbed ($map)"
# Like sshd: the command words joined, run by a shell; in a UTS namespace of
# its own named after the node, so that ranks report distinct host names.
# shellcheck disable=SC2016 # $1, $2: of the inner shell
exec ip netns exec "$ns" unshare --uts /bin/sh -c 'hostname "$1" && exec /bin/sh -c "$2"' testbed-rsh "$ns" "$*"
