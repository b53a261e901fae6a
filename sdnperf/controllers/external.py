"""Controllers a study brings itself ("bring your own"): a command sdnperf starts per run,
or one already running that sdnperf only points the switches at.

A command is a list of arguments, each with `{name}` placeholders filled in on its own
(never joined into a shell string, so a value with spaces or quotes stays one argument).
`{{` and `}}` stand for literal braces. The values a run offers (see `placeholders`) include
`{topology_json}`: a file sdnperf writes describing the built network, so a controller can
know hosts, switches and links without discovering them.
"""

from __future__ import annotations

import json
import string
from pathlib import Path

from sdnperf.controllers.process import ControllerError, ControllerProcess

TOPOLOGY_FILE = "topology.json"
# What an OpenFlow command may name: where to listen (sdnperf picks a free loopback port),
# the run's folder, the study file's folder and the network description.
OPENFLOW_PLACEHOLDERS = {"port", "host", "address", "run_dir", "study_dir", "topology_json"}
# What a P4Runtime command may name: the switches (gRPC addresses and device ids, comma
# separated in switch order, and {switches_json}: those with the pipeline files and CPU
# port), the program sdnperf compiled (`program`), the run's and study's folders, the network.
P4RUNTIME_PLACEHOLDERS = {
    "grpc_addresses",
    "device_ids",
    "p4info",
    "bmv2_json",
    "switches_json",
    "cpu_port",
    "run_dir",
    "study_dir",
    "topology_json",
}
SWITCHES_FILE = "switches.json"


class PlaceholderError(ValueError):
    """A command names a placeholder the run does not offer (or has a stray brace)."""


def placeholder_names(argv: list[str]) -> set[str]:
    """Every `{name}` used in `argv`; PlaceholderError for a malformed argument."""
    names = set()
    for arg in argv:
        try:
            parsed = list(string.Formatter().parse(arg))
        except ValueError as exc:
            raise PlaceholderError(
                f"command argument {arg!r}: {exc} (write {{{{ and }}}} for literal braces)"
            ) from None
        for _, name, spec, conversion in parsed:
            if name is None:
                continue
            if not name.isidentifier() or spec or conversion:
                raise PlaceholderError(
                    f"command argument {arg!r}: placeholder {{{name}...}} "
                    "must be a plain name such as {port}"
                )
            names.add(name)
    return names


def check_placeholders(argv: list[str], offered: set[str]) -> None:
    unknown = sorted(placeholder_names(argv) - offered)
    if unknown:
        raise PlaceholderError(
            f"command uses unknown placeholder(s) "
            f"{', '.join('{' + n + '}' for n in unknown)}; "
            f"known: {', '.join('{' + n + '}' for n in sorted(offered))}"
        )


def substitute(argv: list[str], values: dict[str, object]) -> list[str]:
    """`argv` with each argument's placeholders replaced by `values` (argument by argument)."""
    check_placeholders(argv, set(values))
    return [arg.format_map({k: str(v) for k, v in values.items()}) for arg in argv]


def _dpid(switch) -> str:
    """A switch's datapath id as 16 hex digits (Mininet derives it from the name)."""
    return str(getattr(switch, "dpid", "") or "").rjust(16, "0")


def topology_description(net, switch_extra=lambda sw: {}) -> dict:
    """The built network as plain data: hosts (IP, MAC, attachment), switches (dpid, ports
    by number) and switch-switch links with their port numbers. `switch_extra(sw)` adds
    architecture-specific keys (P4: gRPC address, device id)."""
    switch_names = {sw.name for sw in net.switches}
    hosts, links = [], []
    for link in net.links:
        a, b = link.intf1, link.intf2
        if a.node.name in switch_names and b.node.name in switch_names:
            links.append(
                {
                    "a": a.node.name,
                    "a_port": a.node.ports[a],
                    "b": b.node.name,
                    "b_port": b.node.ports[b],
                }
            )
    for host in net.hosts:
        entry = {
            "name": host.name,
            "ip": host.IP(),
            "mac": host.MAC(),
            "switch": None,
            "port": None,
        }
        for intf in host.intfList():
            peer = intf.link and (intf.link.intf2 if intf.link.intf1 is intf else intf.link.intf1)
            if peer is not None and peer.node.name in switch_names:
                entry["switch"], entry["port"] = peer.node.name, peer.node.ports[peer]
                break
        hosts.append(entry)
    switches = []
    for sw in net.switches:
        ports = {
            str(port): intf.name for port, intf in sorted(sw.intfs.items()) if intf.name != "lo"
        }
        dpid = _dpid(sw)
        switches.append(
            {
                "name": sw.name,
                "dpid": dpid,
                "dpid_int": int(dpid, 16) if dpid.strip("0") else 0,
                "ports": ports,
                **switch_extra(sw),
            }
        )
    return {"hosts": hosts, "switches": switches, "links": links}


def write_json(path: Path, data: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path


def command_controller(
    argv: list[str], values: dict[str, object], run_dir: Path, port: int | None
) -> ControllerProcess:
    """The user's command as a ControllerProcess (its own process group, the run's
    SDNPERF_TAG inherited, output to controller-command.log in the run dir)."""
    try:
        filled = substitute(argv, values)
    except PlaceholderError as exc:
        raise ControllerError(str(exc)) from None
    return ControllerProcess("command", filled, run_dir, port)
