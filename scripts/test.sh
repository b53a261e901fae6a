#!/usr/bin/env bash
# The whole test suite: Rust crates, then Python unit and end-to-end tests (root needed).
# Every phase is timed; the table is printed at the end (also when a phase fails).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
PHASES=()
phase() {  # phase NAME CMD ARGS...: run CMD, remember how long it took
  local name=$1 start=$SECONDS rc=0
  shift
  "$@" || rc=$?
  PHASES+=("$(printf '%6d s  %s%s' $((SECONDS - start)) "$name" "$([ $rc = 0 ] || echo " (FAILED, exit $rc)")")")
  return $rc
}
report() {
  echo "==> phases (wall seconds)"
  printf '  %s\n' "${PHASES[@]}"
  echo "  $(printf '%6d' $SECONDS) s  total"
}
trap report EXIT
checks() {  # a chain: `set -e` does not reach into a function run as `phase`'s `cmd || rc=$?`
  .venv/bin/ruff check sdnperf tests bench scripts &&
    .venv/bin/ruff format --check sdnperf tests bench scripts &&
    .venv/bin/mypy &&
    cargo fmt --manifest-path rust/Cargo.toml --all --check
}
differential() {
  # the reference p4c/BMv2 as sdnperf.tools.find_bmv2 finds it ($SDNPERF_BMV2_DIR, PATH, ../shared/p4-reference)
  if .venv/bin/python -c 'import sys; from sdnperf import tools; sys.exit(tools.find_bmv2("p4c-bm2-ss", reference=True) is None)'; then
    .venv/bin/python bench/p4c/differential.py --corpus --generate 20 --seed 1 --bmv2-every 5
  else echo "skipped: reference p4c-bm2-ss not found (\$SDNPERF_BMV2_DIR, PATH or ../shared/p4-reference)"; fi
}
echo "==> checks: ruff (lint, format), mypy, cargo fmt, cargo clippy"
phase "checks: ruff, mypy, cargo fmt" checks
phase "cargo clippy --release --all-targets" \
  cargo clippy --release --all-targets --quiet --manifest-path rust/Cargo.toml -- -D warnings
echo "==> cargo test (rust/)"
phase "cargo test --release" cargo test --release --quiet --manifest-path rust/Cargo.toml
echo "==> differential: sdnperf-p4c vs p4c-bm2-ss (corpus + 20 generated programs; bench/p4c/README.md)"
phase "differential (p4c, BMv2)" differential
echo "==> pytest: unit tests, one worker per CPU (pytest-xdist; coverage floor: 72 %; 72.5 % when it was set)"
phase "pytest tests/unit (coverage)" .venv/bin/python -m pytest -q -p no:cacheprovider -n auto tests/unit \
  --cov=sdnperf --cov-report= --cov-fail-under=72 "$@"
echo "==> pytest: end-to-end, in parallel groups each in its own namespaces (scripts/e2e_parallel.py)"
phase "pytest tests/e2e (${SDNPERF_E2E_GROUPS:-2} groups)" \
  .venv/bin/python scripts/e2e_parallel.py --groups "${SDNPERF_E2E_GROUPS:-2}" -- "$@"
