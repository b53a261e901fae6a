#!/usr/bin/env bash
# The closing table of issue 25, end to end: targets 1/5/20 ms x {one switch, chain of two}
# x {our switch (p4), BMv2 (p4-bmv2) when ../shared/p4-reference exists} x {N passes, hold by
# time}; writes each target's `recirc plan --verify --json` output and prints the markdown
# table (bench/recirc/table.py) with the load average before and after each step.
#
# Run inside /work/tools/nsrun (it builds Mininet networks), from the checkout:
#   bench/recirc/closing_table.sh [--from DIR/recirculation] [--out DIR] [--delay-only]
#                                 [--targets 1ms,5ms,20ms] [--cost-at 5ms]
#                                 [--cpu-priority normal|high|realtime] [--study-file F]
# Without --from it first runs `sdnperf recirc study` (pilot + bracketing study, quick
# scale, bracketing every target of --targets) into --out; --delay-only skips the TCP/UDP
# cost runs; --cost-at measures the cost (TCP/UDP throughput, UDP loss, switch CPU at the
# answer's N, the hold by time and N = 0, one study per curve) at these targets only, the
# others delay-only (a cost study is 6 runs per curve: ~2 min each with BMv2);
# --cpu-priority sets the switch processes' scheduling in the study and the verifying runs
# (the table says which); --study-file is the study's template and the plans' --file
# (default bench/recirc/thesis-rates.toml). Takes about 1.5 h with BMv2 at quick scale on
# 2 cores with every cost (less with --delay-only or --cost-at).
set -euo pipefail

here="$(cd "$(dirname "$0")/../.." && pwd)"
out="results/closing-$(date -u +%Y%m%dT%H%M%SZ)"
from=""
file=""
extra=()
prio=()
targets="1ms,5ms,20ms"
cost_at=""
delay_only=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --from) from="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --delay-only) delay_only=1; shift ;;
    --targets) targets="$2"; shift 2 ;;
    --cost-at) cost_at="$2"; shift 2 ;;
    --cpu-priority) prio=(--cpu-priority "$2"); shift 2 ;;
    --study-file) file="$2"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
IFS=, read -r -a list <<< "$targets"
if [[ -n "$delay_only" && -n "$cost_at" ]]; then
  echo "error: --delay-only and --cost-at contradict each other" >&2; exit 2
fi
mkdir -p "$out"
load() { echo "$(date -u +%H:%M:%S) load average $(cut -d' ' -f1-3 /proc/loadavg) ($1)" | tee -a "$out/load.txt" >&2; }

if [[ -z "$from" ]]; then
  load "study start"
  study_targets=()
  for t in "${list[@]}"; do study_targets+=(--target-delay "$t"); done
  "$sdnperf" recirc study "${study_targets[@]}" "${prio[@]}" \
    --scale quick --file "$file" --out "$out" >&2
  load "study end"
  from="$out/recirculation"
fi
files=()
for t in "${list[@]}"; do
  extra=()
  # the cost runs: every target unless --delay-only; with --cost-at only those named
  if [[ -n "$delay_only" || ( -n "$cost_at" && ",$cost_at," != *",$t,"* ) ]]; then
    extra=(--delay-only)
  fi
  load "plan $t start${extra[*]:+ (delay only)}"
  # plan refuses a curve with exit 2 but still prints the others' rows: keep going
  "$sdnperf" recirc plan --target-delay "$t" --from "$from" --verify --json \
    "${archs[@]}" "${prio[@]}" "${extra[@]}" --file "$file" \
    > "$out/plan-$t.json" || echo "note: plan $t exited $?" >&2
  load "plan $t end"
  files+=("$out/plan-$t.json")
done
"$python" "$here/bench/recirc/table.py" "${files[@]}" | tee "$out/table.md"
echo "load averages: $out/load.txt" >&2
