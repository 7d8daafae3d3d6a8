#!/usr/bin/env bash
# Debian packages of clustercrypt for every node of a cluster:
#   target/packages/clustercrypt_<version>_{amd64,arm64,armhf}.deb
# Each holds the binary for its architecture (built with the `release-small`
# profile, cross-compiled for ARM with Debian's gcc-aarch64-linux-gnu and
# gcc-arm-linux-gnueabihf, see .cargo/config.toml), the man page and bash, zsh and
# fish completions. The man page and completions are generated once, by the host's
# binary (`clustercrypt man`, `clustercrypt completions SHELL`), and shared.
# Packed with dpkg-deb, Debian's own tool: nothing to install beyond dpkg.
#
# usage: scripts/package.sh [ARCH...]      (default: amd64 arm64 armhf)
# env:   PROFILE (default release-small), CARGO_TARGET_DIR (default target)
set -euo pipefail
cd "$(dirname "$0")/.."

PROFILE=${PROFILE:-release-small}
TARGET_DIR=${CARGO_TARGET_DIR:-target}
OUT=$TARGET_DIR/packages
ARCHES=("$@")
[ ${#ARCHES[@]} -gt 0 ] || ARCHES=(amd64 arm64 armhf)

triple_of() {
    case $1 in
        amd64) echo x86_64-unknown-linux-gnu ;;
        arm64) echo aarch64-unknown-linux-gnu ;;
        armhf) echo armv7-unknown-linux-gnueabihf ;;
        *) echo "package.sh: unknown architecture '$1' (amd64, arm64, armhf)" >&2; exit 2 ;;
    esac
}

version=$(cargo pkgid -p clustercrypt | sed 's/.*[#@]//')
host_triple=$(rustc -vV | sed -n 's/^host: //p')

# The binary for one target triple; the host's too, through the same path.
build() {
    cargo build -q --locked --profile "$PROFILE" --target "$1" -p clustercrypt
    echo "$TARGET_DIR/$1/$PROFILE/clustercrypt"
}

# Man page and completions, from the host binary (they do not depend on the
# architecture).
share=$OUT/share
rm -rf "$share"
mkdir -p "$share"
host_bin=$(build "$host_triple")
"$host_bin" man | gzip -9n > "$share/clustercrypt.1.gz"
"$host_bin" completions bash > "$share/clustercrypt.bash"
"$host_bin" completions zsh > "$share/_clustercrypt"
"$host_bin" completions fish > "$share/clustercrypt.fish"

# Depends: from the binary's dynamic section, with the newest glibc symbol
# version it needs (readelf reads every architecture's ELF).
depends() {
    local bin=$1 deps=() glibc lib
    glibc=$(readelf -V --wide "$bin" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -1)
    for lib in $(readelf -d "$bin" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
        case $lib in
            libc.so.6 | libm.so.6 | libpthread.so.0 | libdl.so.2 | librt.so.1 | ld-linux*) ;;
            libgcc_s.so.1) deps+=("libgcc-s1") ;;
            *) echo "package.sh: $bin needs $lib, which this script cannot map to a package" >&2; exit 1 ;;
        esac
    done
    printf 'libc6 (>= %s)' "$glibc"
    for lib in "${deps[@]}"; do printf ', %s' "$lib"; done
}

for arch in "${ARCHES[@]}"; do
    triple=$(triple_of "$arch")
    bin=$(build "$triple")
    root=$OUT/root-$arch
    rm -rf "$root"
    install -D -m 0755 "$bin" "$root/usr/bin/clustercrypt"
    install -D -m 0644 "$share/clustercrypt.1.gz" "$root/usr/share/man/man1/clustercrypt.1.gz"
    install -D -m 0644 "$share/clustercrypt.bash" "$root/usr/share/bash-completion/completions/clustercrypt"
    install -D -m 0644 "$share/_clustercrypt" "$root/usr/share/zsh/vendor-completions/_clustercrypt"
    install -D -m 0644 "$share/clustercrypt.fish" "$root/usr/share/fish/vendor_completions.d/clustercrypt.fish"
    install -D -m 0644 README.md "$root/usr/share/doc/clustercrypt/README.md"
    printf 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\nFiles: *\nCopyright: the clustercrypt developers\nLicense: Apache-2.0 OR MIT\n' \
        > "$root/usr/share/doc/clustercrypt/copyright"
    mkdir -p "$root/DEBIAN"
    cat > "$root/DEBIAN/control" <<EOF
Package: clustercrypt
Version: $version
Architecture: $arch
Maintainer: clustercrypt developers <clustercrypt@example.invalid>
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $(depends "$bin")
Section: utils
Priority: optional
Homepage: https://example.invalid/clustercrypt
Description: cipher benchmark, parallel file encryption and cluster runs
 Measure and use the cryptographic speed of small clusters: a user-space
 cryptsetup benchmark for every cipher, authenticated parallel file
 encryption, an HTTP service and reports. Built without MPI: cluster mode
 (--cluster) needs a build with the mpi feature (see README.md).
EOF
    deb=$OUT/clustercrypt_${version}_$arch.deb
    dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" > /dev/null
    rm -rf "$root"
    echo "$deb"
done
