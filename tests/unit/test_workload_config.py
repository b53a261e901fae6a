"""Validation of [[workload]] entries and host-pair resolution."""

import pytest
from pydantic import TypeAdapter, ValidationError

from sdnperf.workloads.config import (
    AllToOne,
    IperfTcpConfig,
    IperfUdpConfig,
    Permutation,
    PingConfig,
    WorkloadConfig,
    parse_suffixed,
)
from sdnperf.workloads.pairs import resolve_pairs

ADAPTER = TypeAdapter(WorkloadConfig)
HOSTS = [f"h{i}" for i in range(1, 11)]


def validate(**entry):
    return ADAPTER.validate_python(entry)


def error_text(**entry) -> str:
    with pytest.raises(ValidationError) as info:
        validate(**entry)
    return str(info.value)


def test_defaults_per_kind():
    ping = validate(kind="ping", name="p", pairs=[["h1", "h2"]])
    assert isinstance(ping, PingConfig)
    assert (ping.count, ping.interval, ping.size, ping.cold) == (20, 0.2, 56, True)
    tcp = validate(kind="iperf-tcp", name="t", pairs=[["h1", "h2"]])
    assert isinstance(tcp, IperfTcpConfig) and tcp.duration == 5 and tcp.bytes is None
    udp = validate(kind="iperf-udp", name="u", pairs=[["h1", "h2"]])
    assert isinstance(udp, IperfUdpConfig) and udp.rate == "10M" and udp.rate_bps == 10e6


def test_pair_forms():
    assert validate(kind="ping", name="p", pairs={"all_to_one": "h1"}).pairs == AllToOne(
        all_to_one="h1"
    )
    assert validate(kind="ping", name="p", pairs={"permutation": 4}).pairs == Permutation(
        permutation=4
    )
    assert validate(kind="ping", name="p", pairs=[["h1", "h2"]]).pairs == [("h1", "h2")]


def test_tcp_bytes_mode_and_exclusivity():
    tcp = validate(kind="iperf-tcp", name="t", pairs=[["h1", "h2"]], bytes="20M")
    assert tcp.duration is None and tcp.byte_count == 20 * 1024 * 1024
    assert "either duration or bytes" in error_text(
        kind="iperf-tcp", name="t", pairs=[["h1", "h2"]], bytes="20M", duration=3
    )


@pytest.mark.parametrize(
    "entry, expected",
    [
        (
            dict(kind="ping", name="p", pairs=[["h1", "h2"]], cout=3),
            "cout",
        ),  # typo: extra forbidden
        (
            dict(kind="ping", name="p", pairs=[["h1", "h2"]], interval=0),
            "greater than or equal to 0.002",
        ),
        (dict(kind="ping", name="p", pairs=[["h1", "h1"]]), "sends to itself"),
        (dict(kind="ping", name="p", pairs=[]), "must not be empty"),
        (dict(kind="ping", name="p", pairs=[["h1", "h2"], ["h1", "h2"]]), "listed twice"),
        (dict(kind="ping", name="p", pairs="h1"), "pairs must be a list like"),
        (dict(kind="ping", name="p", pairs={"permutation": 0}), "greater than or equal to 1"),
        (dict(kind="ping", name="p", pairs={"all_to_one": "h1", "x": 1}), "Extra inputs"),
        (dict(kind="iperf-udp", name="u", pairs=[["h1", "h2"]], rate="fast"), "K/M/G/T suffix"),
        (dict(kind="iperf-udp", name="u", pairs=[["h1", "h2"]], rate="0"), "greater than 0"),
        (dict(kind="iperf-tcp", name="bad name", pairs=[["h1", "h2"]]), "name"),
        (dict(kind="iperf", name="x", pairs=[["h1", "h2"]]), "'ping', 'iperf-tcp', 'iperf-udp'"),
    ],
)
def test_bad_entries_name_the_problem(entry, expected):
    assert expected in error_text(**entry)


def test_parse_suffixed():
    assert parse_suffixed("10M", 1000) == 10e6
    assert parse_suffixed("1.5G", 1000) == 1.5e9
    assert parse_suffixed("20M", 1024) == 20 * 1024**2
    assert parse_suffixed("300", 1000) == 300
    with pytest.raises(ValueError):
        parse_suffixed("10X", 1000)


def test_resolve_explicit_and_all_to_one():
    assert resolve_pairs([("h1", "h2"), ("h3", "h2")], HOSTS, 1) == [("h1", "h2"), ("h3", "h2")]
    incast = resolve_pairs(AllToOne(all_to_one="h3"), HOSTS, 1)
    assert incast[0] == ("h1", "h3") and ("h10", "h3") == incast[-1]  # natural order
    assert len(incast) == 9 and all(dst == "h3" and src != "h3" for src, dst in incast)


def test_resolve_unknown_hosts_are_named():
    with pytest.raises(ValueError, match="h99, h100"):
        resolve_pairs([("h1", "h99"), ("h100", "h2")], HOSTS, 1)
    with pytest.raises(ValueError, match="h42"):
        resolve_pairs(AllToOne(all_to_one="h42"), HOSTS, 1)


def test_permutation_is_seeded_derangement():
    pairs = resolve_pairs(Permutation(permutation=6), HOSTS, seed=7)
    assert len(pairs) == 6
    assert all(src != dst for src, dst in pairs)
    assert len({s for s, _ in pairs}) == 6 and len({d for _, d in pairs}) == 6
    assert pairs == resolve_pairs(Permutation(permutation=6), list(reversed(HOSTS)), seed=7)
    seeds = {tuple(resolve_pairs(Permutation(permutation=6), HOSTS, seed=s)) for s in range(10)}
    assert len(seeds) > 1


def test_permutation_too_many_pairs():
    with pytest.raises(ValueError, match="more pairs than the 10 hosts"):
        resolve_pairs(Permutation(permutation=11), HOSTS, 1)
    full = resolve_pairs(Permutation(permutation=10), HOSTS, 1)
    assert sorted(d for _, d in full) == sorted(HOSTS)


@pytest.mark.parametrize(
    "pairs", [{"permutation": 0}, {"foo": 1}, [["h1"]], [["h1", "h2"], ["h2", "h2"]]]
)
def test_pair_mistakes_are_one_error_at_pairs(pairs):
    with pytest.raises(ValidationError) as info:
        validate(kind="iperf-udp", name="u", pairs=pairs)
    errors = info.value.errors()
    assert len(errors) == 1 and errors[0]["loc"] == ("iperf-udp", "pairs")
    assert not errors[0]["msg"].startswith("Value error")
