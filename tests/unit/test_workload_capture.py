"""Packet capture: reading pcap files and throughput over time from them."""

import struct

import pytest

from sdnperf.workloads.capture import pcap_throughput, read_pcap, throughput_series


def write_pcap(path, packets, nano=False, big_endian=False):
    e = ">" if big_endian else "<"
    magic = 0xA1B23C4D if nano else 0xA1B2C3D4
    data = struct.pack(e + "IHHiIII", magic, 2, 4, 0, 0, 65535, 1)
    for t, size in packets:
        sec = int(t)
        frac = round((t - sec) * (1e9 if nano else 1e6))
        cap = min(size, 64)
        data += struct.pack(e + "IIII", sec, frac, cap, size) + bytes(cap)
    path.write_bytes(data)


@pytest.mark.parametrize("nano,big", [(False, False), (True, False), (False, True)])
def test_read_pcap(tmp_path, nano, big):
    f = tmp_path / "x.pcap"
    write_pcap(f, [(100.25, 1000), (100.5, 60)], nano, big)
    assert read_pcap(f) == [(pytest.approx(100.25), 1000), (pytest.approx(100.5), 60)]


def test_throughput_from_capture(tmp_path):
    # 1250 B every 10 ms for 2 s = 1 Mbit/s, then a silent second, then one packet
    pkts = [(1000 + i * 0.01, 1250) for i in range(200)] + [(1003.5, 1250)]
    f = tmp_path / "c.pcap"
    write_pcap(f, pkts)
    series = pcap_throughput(f)
    assert [t for t, _ in series] == [1.0, 2.0, 3.0, 4.0]
    assert [v for _, v in series] == pytest.approx([1.0, 1.0, 0.0, 0.01])
    half = throughput_series(pkts, interval=0.5)
    assert half[0] == (0.5, pytest.approx(1.0))


def test_bad_files(tmp_path):
    f = tmp_path / "bad.pcap"
    f.write_bytes(b"\x0a\x0d\x0d\x0a" + bytes(40))  # pcapng
    with pytest.raises(ValueError, match="pcapng"):
        read_pcap(f)
    f.write_bytes(b"abc")
    with pytest.raises(ValueError, match="not a pcap"):
        read_pcap(f)
    assert throughput_series([]) == []
