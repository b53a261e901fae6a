#!/usr/bin/env bash
# Compiles every corpus program with sdnperf-p4c and runs its STF test on
# sdnperf-switch. Usage: rust/p4c/run_stf.sh [TARGET_DIR]  (builds both, release)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
rust="$(dirname "$here")"
target="${1:-${CARGO_TARGET_DIR:-$rust/target}}"
(cd "$rust" && CARGO_TARGET_DIR="$target" cargo build --release -q -p sdnperf-p4c -p sdnperf-switch)
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
pass=0; fail=0
for p in "$here"/tests/corpus/*.p4; do
    n="$(basename "$p" .p4)"
    if ! "$target/release/sdnperf-p4c" "$p" -o "$out" 2>"$out/err"; then
        echo "$n: COMPILE ERROR"; cat "$out/err"; fail=$((fail+1)); continue
    fi
    if r="$("$target/release/sdnperf-switch" stf "$out/$n.json" "$here/tests/corpus/$n.stf" 2>&1)"; then
        echo "$n: $(echo "$r" | tail -1)"; pass=$((pass+1))
    else
        echo "$n: FAILED"; echo "$r" | sed 's/^/    /'; fail=$((fail+1))
    fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
