#!/usr/bin/env bash
# Install everything sdnperf needs on a Debian/Ubuntu machine. Idempotent: run it again at
# any time; it only does what is missing. Used by README, .ci/run and developers alike.
#   - Debian packages: Mininet, Open vSwitch, traffic tools
#   - .venv: a Python venv that sees Debian's Mininet (--system-site-packages) with sdnperf
#   - rust/target/release: the P4 compiler and switch (cargo)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
  echo "install.sh: run as root (apt-get, and Mininet needs root at run time)" >&2
  exit 1
fi

APT_PACKAGES=(
  mininet openvswitch-switch openvswitch-testcontroller
  iperf iperf3 iputils-ping tcpdump iproute2 ethtool bridge-utils procps psmisc kmod d-itg ffmpeg
  python3-venv python3-pip python3-dev build-essential pkg-config ca-certificates curl
)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "==> apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Debian's Mininet imports only under the system interpreter, so the venv is built from it.
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import mininet.net' 2>/dev/null; then
  echo "==> creating .venv (system site packages, for Mininet)"
  rm -rf .venv
  /usr/bin/python3 -m venv --system-site-packages .venv
fi
echo "==> pip install sdnperf (versions pinned by scripts/constraints.txt)"
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -c scripts/constraints.txt -e '.[test,cluster]'
# p4runtime-shell pins protobuf < 3.21; it runs with finsy's protobuf 6 under the pure-Python
# protobuf implementation (the interop test sets it), so its pins are skipped.
.venv/bin/python -m pip install -q -c scripts/constraints.txt --no-deps 'p4runtime-shell>=0.0.6'

# Rust tools (compiler, switch). rustup's cargo lives in ~/.cargo/bin.
export PATH="$HOME/.cargo/bin:$PATH"
if ! command -v cargo >/dev/null; then
  # Debian 12's own rustc (1.63) is too old for our crates (tonic, tokio); bookworm ships a
  # current one as rustc-web/cargo-web. Elsewhere (Ubuntu) the distribution's cargo.
  apt-get update -q
  rust_pkgs=(cargo rustc)
  if apt-cache show cargo-web >/dev/null 2>&1; then rust_pkgs=(cargo-web rustc-web); fi
  echo "==> cargo not found: installing ${rust_pkgs[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${rust_pkgs[@]}"
fi
# scripts/test.sh checks formatting and lints: cargo fmt and cargo clippy must exist too.
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
  if command -v rustup >/dev/null; then
    echo "==> rustup component add rustfmt clippy"
    rustup component add rustfmt clippy
  else
    check_pkgs=(rustfmt rust-clippy)
    if apt-cache show rust-web-clippy >/dev/null 2>&1; then check_pkgs=(rustfmt-web rust-web-clippy); fi
    echo "==> cargo fmt/clippy not found: installing ${check_pkgs[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${check_pkgs[@]}"
  fi
fi
echo "==> cargo build --release (rust/)"
cargo build --release --quiet --manifest-path rust/Cargo.toml

echo "==> installed. Try: .venv/bin/sdnperf doctor"
