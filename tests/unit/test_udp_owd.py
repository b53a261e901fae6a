"""One-way delay of iperf3 UDP datagrams from a receiver's pcap: worked examples on pcap
bytes built here (Ethernet / IPv4 / UDP / iperf3's send stamp)."""

import struct

import pytest

from sdnperf.workloads.udp_owd import datagram_delays, owd_output

PORT = 5701


def pcap(records, linktype=1) -> bytes:
    """A classic little-endian microsecond pcap of (arrival s, frame bytes)."""
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, linktype)
    for t, frame in records:
        sec, usec = int(t), round((t - int(t)) * 1e6)
        out += struct.pack("<IIII", sec, usec, len(frame), len(frame)) + frame
    return out


def frame(sent: float, port=PORT, proto=17, frag=0, vlan=False) -> bytes:
    sec, usec = int(sent), round((sent - int(sent)) * 1e6)
    payload = struct.pack("!III", sec, usec, 7)  # send stamp, then iperf3's counter
    udp = struct.pack("!HHHH", 40000, port, 8 + len(payload), 0) + payload
    ip = struct.pack(
        "!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, frag, 64, proto, 0, bytes(4), bytes(4)
    )
    eth = bytes(12) + (struct.pack("!HHH", 0x8100, 5, 0x0800) if vlan else b"\x08\x00")
    return eth + ip + udp


def test_delays_worked_example():
    # sent at 1000.000100 / 1000.500000, arriving 2.5 ms / 40 ms later
    data = pcap([(1000.0026, frame(1000.0001)), (1000.54, frame(1000.5, vlan=True))])
    got = datagram_delays(data, PORT)
    assert [a for a, _ in got] == [pytest.approx(1000.0026), pytest.approx(1000.54)]
    assert [d for _, d in got] == [pytest.approx(0.0025, abs=2e-6), pytest.approx(0.04, abs=2e-6)]


def test_other_packets_are_skipped():
    data = pcap(
        [
            (10.0, frame(9.9, port=PORT + 1)),  # another pair's port
            (10.1, frame(10.0, proto=6)),  # TCP
            (10.2, frame(10.1, frag=5)),  # a later fragment: no UDP header in it
            (10.3, frame(10.2)[:40]),  # truncated before the stamp
            (10.4, frame(10.39)),
        ]
    )
    got = datagram_delays(data, PORT)
    assert len(got) == 1 and got[0][1] == pytest.approx(0.01, abs=2e-6)


def test_not_a_pcap_or_not_ethernet():
    with pytest.raises(ValueError, match="not a pcap"):
        datagram_delays(b"short", PORT)
    with pytest.raises(ValueError, match="not Ethernet"):
        datagram_delays(pcap([], linktype=113), PORT)


def test_owd_output_means_over_flows():
    # flow a: 2 and 4 ms (mean 3); flow b: 10 ms. Each flow weighs the same: (3 + 10) / 2.
    out_samples, summaries = owd_output(
        "udp", {"a": [(1.0, 0.002), (2.0, 0.004)], "b": [(1.0, 0.010)], "c": []}
    )
    m = {s.metric: s.value for s in summaries}
    assert m["owd_ms"] == pytest.approx(6.5) and m["owd_max_ms"] == pytest.approx(10.0)
    assert sorted((s.flow, round(s.value, 6)) for s in out_samples) == [("a", 3.0), ("b", 10.0)]
    assert owd_output("udp", {}) == ([], [])


def test_monotonic_send_stamps_take_the_offset():
    # iperf3 3.x stamps CLOCK_MONOTONIC (here 5000.0 s since boot); the wall clock is that
    # plus 1.7e9 s, so a datagram captured at 1.7e9 + 5000.003 waited 3 ms
    offset = 1.7e9
    data = pcap([(offset + 5000.003, frame(5000.0))])
    ((arrival, delay),) = datagram_delays(data, PORT, offset)
    assert delay == pytest.approx(0.003, abs=2e-6)
    # a wall-clock stamp (older iperf3) is taken as it is
    ((_, delay),) = datagram_delays(pcap([(1.7e9 + 0.002, frame(1.7e9))]), PORT, offset)
    assert delay == pytest.approx(0.002, abs=2e-6)


def test_connect_datagram_padded_to_60_bytes_is_skipped():
    # iperf3's UDP "connect" datagram: 4 bytes, padded by Ethernet to a 60-byte frame
    udp = struct.pack("!HHHH", 40000, PORT, 12, 0) + b"6789"
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 32, 1, 0, 64, 17, 0, bytes(4), bytes(4))
    short = (bytes(12) + b"\x08\x00" + ip + udp).ljust(60, b"\0")
    assert datagram_delays(pcap([(10.0, short)]), PORT) == []
