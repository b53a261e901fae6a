#!/usr/bin/env bash
# The closing table of issue 25, end to end: targets 1/5/20 ms x {one switch, chain of two}
# x {our switch (p4), BMv2 (p4-bmv2) when ../shared/p4-reference exists} x {N passes, hold by
# time}; writes each target's `recirc plan --verify --json` output and prints the markdown
# table (bench/recirc/table.py) with the load average before and after each step.
#
# Run inside /work/tools/nsrun (it builds Mininet networks), from the checkout:
#   bench/recirc/closing_table.sh [--from DIR/recirculation] [--out DIR] [--delay-only]
#                                 [--cpu-priority normal|high|realtime] [--study-file F]
# Without --from it first runs `sdnperf recirc study` (pilot + bracketing study, quick
# scale) into --out; --delay-only skips the TCP/UDP cost runs; --cpu-priority sets the
# switch processes' scheduling in the verifying runs (the table says which); --study-file
# is the study's template and the plans' --file (default bench/recirc/thesis-rates.toml;
# thesis-rates-realtime.toml runs the study's switches realtime too). Takes about
# 1.5 h with BMv2 at quick scale on 2 cores (less with --delay-only).
set -euo pipefail

here="$(cd "$(dirname "$0")/../.." && pwd)"
out="results/closing-$(date -u +%Y%m%dT%H%M%SZ)"
from=""
file=""
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --from) from="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --delay-only) extra+=(--delay-only); shift ;;
    --cpu-priority) extra+=(--cpu-priority "$2"); shift 2 ;;
    --study-file) file="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

file="${file:-$here/bench/recirc/thesis-rates.toml}"
sdnperf="$here/.venv/bin/sdnperf"
python="$here/.venv/bin/python"
archs=(--architecture p4)
reference="${SDNPERF_BMV2_DIR:-$(dirname "$here")/shared/p4-reference}"
if [[ -x "$reference/bin/simple_switch_grpc" ]]; then
  export SDNPERF_BMV2_DIR="$reference"
  archs+=(--architecture p4-bmv2)
else
  echo "note: no BMv2 in $reference: our switch only" >&2
fi
mkdir -p "$out"
load() { echo "$(date -u +%H:%M:%S) load average $(cut -d' ' -f1-3 /proc/loadavg) ($1)" | tee -a "$out/load.txt" >&2; }

if [[ -z "$from" ]]; then
  load "study start"
  "$sdnperf" recirc study --target-delay 1ms --target-delay 5ms --target-delay 20ms \
    --scale quick --file "$file" --out "$out" >&2
  load "study end"
  from="$out/recirculation"
fi
files=()
for t in 1ms 5ms 20ms; do
  load "plan $t start"
  # plan refuses a curve with exit 2 but still prints the others' rows: keep going
  "$sdnperf" recirc plan --target-delay "$t" --from "$from" --verify --json \
    "${archs[@]}" "${extra[@]}" --file "$file" \
    > "$out/plan-$t.json" || echo "note: plan $t exited $?" >&2
  load "plan $t end"
  files+=("$out/plan-$t.json")
done
"$python" "$here/bench/recirc/table.py" "${files[@]}" | tee "$out/table.md"
echo "load averages: $out/load.txt" >&2
