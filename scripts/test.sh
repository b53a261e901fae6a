#!/usr/bin/env bash
# The whole test suite: Rust crates, then Python unit and end-to-end tests (root needed).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
echo "==> cargo test (rust/)"
cargo test --release --quiet --manifest-path rust/Cargo.toml
echo "==> pytest"
exec .venv/bin/python -m pytest -q -p no:cacheprovider tests "$@"
