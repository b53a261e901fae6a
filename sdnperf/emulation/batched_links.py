"""Mininet links that configure each interface in one shell round trip.

Mininet's TCLink configures an interface with five commands, each a round trip through
the node's shell (`ifconfig up`, `ethtool -K`, `tc qdisc show`, `tc qdisc add`, `tc class
add`), and deletes a link with two `ip link del` (the second for a veth end that went with
the first). On a 10-switch/28-host campus that was a third of the ~800 round trips of a
network's build, and most of its tear-down, run after run. These classes send the same
commands, in the same order and with the same conditions, as one shell script per
interface, and delete a veth pair once; the qdiscs, classes and offloads they leave are
Mininet's own (tests/e2e/test_batched_links.py compares them).
"""

from __future__ import annotations

import re
import secrets
import subprocess
import threading
from contextlib import contextmanager
from pathlib import Path

from mininet.link import Intf, Link, TCIntf, TCLink
from mininet.log import error

# printed between the commands of one script, to split its output per command again
SEPARATOR = "__sdnperf_next_command__"
_SPLIT = re.compile(re.escape(SEPARATOR) + r"\r?\n?")
# TCIntf.config's own keywords: anything else goes to Intf.config (mac, ip, up, ifconfig)
TC_KEYS = (
    "bw",
    "delay",
    "jitter",
    "loss",
    "gro",
    "txo",
    "rxo",
    "speedup",
    "use_hfsc",
    "use_tbf",
    "latency_ms",
    "enable_ecn",
    "enable_red",
    "max_queue_size",
    "disable_gro",
)


def script(commands: list[str]) -> str:
    """One shell line running `commands` in order, each output followed by SEPARATOR."""
    return "; ".join(f"{c}; echo {SEPARATOR}" for c in commands)


def split_outputs(output: str, count: int) -> list[str]:
    """The output of each of `count` commands run by script() (missing ones: "")."""
    parts = _SPLIT.split(output)
    parts = (parts + [""] * count)[:count]
    return [p.strip() for p in parts]


def on(flag) -> str:
    return "on" if flag else "off"


def clear_root_command(intf: str) -> str:
    """Delete the root qdisc, silently when there is none to delete. Mininet's TCIntf
    first asks `tc qdisc show` and deletes only a qdisc showing neither `priomap` nor
    `noqueue` (a fresh device's default), but a default root has handle 0, which the
    kernel refuses to delete: the result is the same without the question. The question
    was also wrong at times: a `show` while other shells change qdiscs in the same
    namespace (OVS's re-applied tc, switch by switch at once) can come back "Dump was
    interrupted"."""
    return f"tc qdisc del dev {intf} root 2>/dev/null || true"


class BatchedTCIntf(TCIntf):
    """A TCIntf whose config() runs its commands as one script in the node's shell."""

    def config(self, **params):
        if any(params.get(k) is not None for k in ("mac", "ip", "ifconfig")):
            return super().config(**params)  # rare (a host's address): Mininet's own path
        tc = {k: params.pop(k) for k in TC_KEYS if k in params}
        up = params.pop("up", True)
        gro = tc.pop("gro", False)
        if "disable_gro" in tc:
            gro = not tc.pop("disable_gro")
        txo, rxo = tc.pop("txo", True), tc.pop("rxo", True)
        bw, delay, jitter = tc.pop("bw", None), tc.pop("delay", None), tc.pop("jitter", None)
        loss, max_queue_size = tc.pop("loss", None), tc.pop("max_queue_size", None)
        commands = []
        if up:
            commands.append(f"ifconfig {self.name} up")
        commands.append(f"ethtool -K {self.name} gro {on(gro)} tx {on(txo)} rx {on(rxo)}")
        configures_tc = not (bw is None and not delay and not loss and max_queue_size is None)
        tc_commands: list[str] = []
        parent = None
        if configures_tc:
            bw_cmds, parent = self.bwCmds(bw=bw, **tc)
            delay_cmds, parent = self.delayCmds(
                parent, delay=delay, jitter=jitter, loss=loss, max_queue_size=max_queue_size
            )
            # A veth just made has the kernel's default root qdisc (noqueue), which
            # Mininet's check leaves in place: only a re-configuration (OVS re-applies tc
            # after adding a port) asks which qdisc is there.
            fresh = not getattr(self, "_configured", False)
            tc_commands = [] if fresh else [clear_root_command(self.name)]
            tc_commands += [c % ("tc", self) for c in bw_cmds + delay_cmds]
        self._configured = True
        plan = (commands, tc_commands, up, configures_tc, parent)
        link = self.link
        if isinstance(link, BatchedTCLink) and link.deferring:
            link.deferred.append((self, plan))  # the link runs both ends' scripts at once
            return None
        collected = getattr(_collecting, "configs", None)
        if collected is not None:
            collected.append((self, plan))  # collected_configs() runs it, with others
            return None
        return self.finish(self.cmd(script(commands + tc_commands)), plan)

    def finish(self, output: str, plan: tuple) -> dict | None:
        """config()'s result from its script's output (errors said as Mininet says them)."""
        commands, tc_commands, up, configures_tc, parent = plan
        outputs = split_outputs(output, len(commands) + len(tc_commands))
        result: dict = {}
        if up:
            result["up"] = not outputs[0]
            if outputs[0]:
                error(f"Error setting {self.name} up: {outputs[0]} ")
        if not configures_tc:
            return None
        tc_outputs = outputs[len(commands) :]
        for output in tc_outputs:
            if output:
                error(f"*** Error: {output}")
        result["tcoutputs"], result["parent"] = tc_outputs, parent
        return result


_collecting = threading.local()


@contextmanager
def collected_configs():
    """Inside: a BatchedTCIntf's config() is only noted (it returns None, as Mininet's
    does for an interface without tc settings). On leaving: every noted configuration
    runs, each node's in one script in its own shell, all nodes at once, and each
    interface reports its errors as config() would. For OVS's start, which re-applies tc
    to every port it added (one round trip each, 46 in turn on a campus)."""
    configs: list[tuple[BatchedTCIntf, tuple]] = []
    _collecting.configs = configs
    try:
        yield
    finally:
        _collecting.configs = None
    by_node: dict[int, list[tuple[BatchedTCIntf, tuple]]] = {}
    for intf, plan in configs:
        by_node.setdefault(id(intf.node), []).append((intf, plan))
    groups = list(by_node.values())
    for group in groups:
        group[0][0].node.sendCmd(script([c for _, plan in group for c in plan[0] + plan[1]]))
    for group in groups:
        output = group[0][0].node.waitOutput()
        counts = [len(plan[0]) + len(plan[1]) for _, plan in group]
        outputs = split_outputs(output, sum(counts))
        start = 0
        for (intf, plan), count in zip(group, counts):
            part = outputs[start : start + count]
            start += count
            intf.finish(script_output(part), plan)


def script_output(outputs: list[str]) -> str:
    """The output script() would have given for commands with these outputs (so finish()
    can split a slice of a longer script's output again)."""
    return "".join(f"{o}\n{SEPARATOR}\n" for o in outputs)


# first-end names of the veth pairs make_pairs() made and no link has taken yet
_premade: set[str] = set()


def pair_line(name1: str, addr1: str, ns1: int | None, name2: str, addr2: str, ns2: int | None):
    """`ip -batch` line making a veth pair as Mininet's makeIntfPair does (names, MACs),
    each end in the network namespace of process `ns1`/`ns2` (None: this one)."""
    where1 = f" netns {ns1}" if ns1 is not None else ""
    where2 = f" netns {ns2}" if ns2 is not None else ""
    return (
        f"link add name {name1} address {addr1}{where1} "
        f"type veth peer name {name2} address {addr2}{where2}\n"
    )


def make_pairs(lines: list[str], first_names: list[str]) -> None:
    """Make veth pairs (pair_line()s) in one `ip -batch` call; the links whose first ends
    are `first_names` then skip their own makeIntfPair (one process per link, in the first
    node's shell). Raises as Mininet does ("Error creating interface pair") on a failure."""
    out = subprocess.run(
        ["ip", "-batch", "-"], input="".join(lines), capture_output=True, text=True
    )
    if out.returncode != 0:
        raise Exception(f"Error creating interface pairs: {(out.stderr or out.stdout).strip()}")
    _premade.update(first_names)


def forget_pairs() -> None:
    """Links not made after make_pairs() (an error on the way) make their own again."""
    _premade.clear()


class _DeletesPairOnce:
    """Deleting one end of a veth pair deletes the other: one `ip link del`, not two
    (none when delete_root_ends() deleted the pair already). A pair make_pairs() made
    is not made again."""

    intf1: Intf | None
    intf2: Intf | None
    deleted = False

    @classmethod
    def makeIntfPair(cls, intfname1, intfname2, *args, **kwargs):
        if intfname1 in _premade:
            _premade.discard(intfname1)
            return None
        return super().makeIntfPair(intfname1, intfname2, *args, **kwargs)  # type: ignore[misc]  # a mixin: the Mininet Link after it in the MRO has it

    def delete(self):
        intf1, intf2 = self.intf1, self.intf2
        if intf1 is None or intf2 is None:
            return  # deleted already
        if self.deleted:
            intf1.node.delIntf(intf1)
            intf1.link = None
        else:
            intf1.delete()
        self.intf1 = None
        # the peer went with it: only the node forgets it
        intf2.node.delIntf(intf2)
        intf2.link = None
        self.intf2 = None


class BatchedLink(_DeletesPairOnce, Link):
    """Mininet's Link (a veth pair), deleted with one command."""


class BatchedTCLink(_DeletesPairOnce, TCLink):
    """Mininet's TCLink with BatchedTCIntf ends, deleted with one command. The two ends'
    first configuration runs at once, each in its own node's shell (two nodes, two
    shells: nothing else is sent to either until both answered)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("cls1", BatchedTCIntf)
        kwargs.setdefault("cls2", BatchedTCIntf)
        self.deferring = True
        self.deferred: list[tuple[BatchedTCIntf, tuple]] = []
        try:
            super().__init__(*args, **kwargs)
        finally:
            self.deferring = False
        pending, self.deferred = self.deferred, []
        collected = getattr(_collecting, "configs", None)
        if collected is not None:  # collected_configs() runs them, with every other link's
            collected.extend(pending)
            return
        if len({id(intf.node) for intf, _ in pending}) < len(pending):  # a node to itself
            for intf, plan in pending:
                intf.finish(intf.cmd(script(plan[0] + plan[1])), plan)
            return
        for intf, plan in pending:
            intf.node.sendCmd(script(plan[0] + plan[1]))
        for intf, plan in pending:
            intf.finish(intf.node.waitOutput(), plan)


def root_end(link) -> str | None:
    """The name of an end of `link` in the root namespace (a switch's port), or None."""
    for intf in (link.intf1, link.intf2):
        if intf is not None and not intf.node.inNamespace:
            return intf.name
    return None


def free_group() -> int:
    """A network device group (a 31-bit number) no interface here is in: delete_root_ends
    puts the links it deletes there. Group 0 is every device's default."""
    taken = set()
    for path in Path("/sys/class/net").glob("*/netdev_group"):
        try:
            taken.add(int(path.read_text()))
        except (OSError, ValueError):
            pass  # an interface that went meanwhile
    while True:
        group = secrets.randbelow(2**31 - 1) + 1
        if group not in taken:
            return group


def delete_batch(names: list[str], group: int) -> str:
    """`ip -batch` input deleting the interfaces `names` in one kernel call: each is moved
    to device group `group`, then the group is deleted (`ip link del dev` one by one waits
    for the kernel to finish each deletion: ~20 ms a veth pair, 0.8 s for a campus)."""
    moves = "".join(f"link set dev {name} group {group}\n" for name in names)
    return moves + f"link del group {group}\n"


def delete_root_ends(links, devices: list[str] | tuple[str, ...] = ()) -> None:
    """Delete, in one `ip -batch` call, every batched link with an end in the root
    namespace (its veth peer goes with it); Mininet's stop then only forgets them. A link
    `ip` could not delete keeps its own delete. `devices`: root-namespace devices to delete
    in the same call (a Linux bridge switch: ~45 ms each deleted alone); whoever made them
    deletes any left."""
    ours = [
        (link, name)
        for link in links
        if isinstance(link, _DeletesPairOnce) and not link.deleted
        if (name := root_end(link)) is not None
    ]
    extra = [name for name in devices if Path(f"/sys/class/net/{name}").exists()]
    if not ours and not extra:
        return
    names = [name for _, name in ours] + extra
    batch = delete_batch(names, free_group())
    subprocess.run(["ip", "-force", "-batch", "-"], input=batch, capture_output=True, text=True)
    left = [name for name in names if Path(f"/sys/class/net/{name}").exists()]
    if left:  # a kernel without deletion by group: one by one
        batch = "".join(f"link del dev {name}\n" for name in left)
        subprocess.run(["ip", "-force", "-batch", "-"], input=batch, capture_output=True, text=True)
    for link, name in ours:
        link.deleted = not Path(f"/sys/class/net/{name}").exists()
