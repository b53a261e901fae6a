"""Where a held UDP run's datagrams go: one network (our switch or BMv2, recirc.p4 at N
passes for packets to h2), one `iperf3 -u` run as the udp workload runs it (client with
--json --get-server-output, one-shot server), and its counts side by side: datagrams the
client sent, those that arrived (received bytes / datagram size), iperf3's lost count
(gaps below the highest sequence number its receiver saw) and what is left: datagrams
that neither arrived within the test nor were counted lost (still held in the switch when
the receiver stopped); those that arrived after the sender's end; iperf3's receiver rate
(over the receiver's window) beside the one the workload records (what arrived in the
sender's window); loss_pct, unreported_loss_pct and late_pct as the workload records them.

Run inside /work/tools/nsrun (it builds a Mininet network):
    python bench/recirc/udp_tail.py --n 0,8000 --rate 10M --time 3
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", default="0,8000", help="N values, comma separated")
    ap.add_argument("--rate", default="10M")
    ap.add_argument("--time", type=float, default=3.0)
    ap.add_argument("--target", choices=["sdnperf", "bmv2"], default="sdnperf")
    ap.add_argument("--json", help="write the counts here")
    args = ap.parse_args()

    from sdnperf.arch.config import P4Config
    from sdnperf.runner import started_network
    from sdnperf.topo.registry import build_topology
    from sdnperf.workloads.iperf import parse_iperf3, udp_output

    spec = build_topology("single", {"hosts": 2}, seed=1)
    ns = [int(x) for x in args.n.split(",")]
    rows = []
    for n in ns:
        config = P4Config(
            kind="p4",
            name="p4",
            app="proactive",
            program="recirc",
            params={"recirc_passes": n, "recirc_dst": "10.0.0.2"},
            target=args.target,
        )
        with (
            tempfile.TemporaryDirectory() as tmp,
            started_network(spec, config, Path(tmp) / "run", host_offloads=False) as started,
        ):
            h1, h2 = started.net.get("h1"), started.net.get("h2")
            h1.cmd(f"ping -c 3 -i 0.2 -W 2 {h2.IP()}")
            server = h2.popen(["iperf3", "-s", "-1", "-J", "-B", h2.IP(), "-p", "5701"])
            h1.cmd("sleep 0.5")
            out = h1.cmd(
                f"iperf3 -c {h2.IP()} -p 5701 -u -b {args.rate} -t {args.time:g} "
                "--json --get-server-output"
            )
            server.wait(timeout=30)
        doc = json.loads(out)
        res = parse_iperf3(out)
        seen = (doc.get("server_output_json") or {}).get("end", {}).get("streams", [{}])[0]
        highest = (seen.get("udp") or {}).get("packets")
        summary = {s.metric: s.value for s in udp_output("udp", {"h1->h2": res}, {}).summaries}
        row = {
            "N": n,
            "sent": res.sent_packets,
            "received": res.received_packets,
            "late": res.late_packets,
            "unreported": res.unreported_packets,
            "iperf_lost": res.lost_packets,
            "iperf_packets": res.packets,
            "receiver_highest_seq": highest,
            "unaccounted": (res.sent_packets or 0)
            - (res.received_packets or 0)
            - (res.lost_packets or 0),
            "iperf_receiver_mbps": (doc.get("end", {}).get("sum_received") or {}).get(
                "bits_per_second", 0.0
            )
            / 1e6,
            "received_mbps": res.mbps,
            "iperf_loss_pct": 100.0 * (res.lost_packets or 0) / max(1, res.packets or 0),
            "loss_pct": summary.get("loss_pct"),
            "unreported_loss_pct": summary.get("unreported_loss_pct"),
            "late_pct": summary.get("late_pct"),
            "receiver_seconds": (doc.get("end", {}).get("sum_received") or {}).get("seconds"),
            "load_average": os.getloadavg()[0],
            "sum_sent": doc.get("end", {}).get("sum_sent"),
            "sum_received": doc.get("end", {}).get("sum_received"),
        }
        rows.append(row)
        print(
            " ".join(
                f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                for k, v in row.items()
                if not k.startswith("sum_")
            )
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
