"""ARP and LLDP frames per second from a client's capture (000 Fig. 4c-d): worked
examples on pcap bytes built here."""

import struct

import pytest

from sdnperf.workloads.control_frames import frame_times, per_second, samples


def pcap(records) -> bytes:
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    for t, frame in records:
        sec, usec = int(t), round((t - int(t)) * 1e6)
        out += struct.pack("<IIII", sec, usec, len(frame), len(frame)) + frame
    return out


def eth(ethertype: int, vlan: bool = False) -> bytes:
    tag = struct.pack("!HH", 0x8100, 7) if vlan else b""
    return bytes(12) + tag + struct.pack("!H", ethertype) + bytes(46)


def test_arp_and_lldp_are_told_apart_and_binned_per_second():
    t0 = 1000.0
    data = pcap(
        [
            (1000.2, eth(0x0806)),  # ARP request
            (1000.3, eth(0x0806)),  # its reply
            (1000.9, eth(0x0800)),  # IPv4: not control traffic
            (1002.5, eth(0x88CC)),  # LLDP
            (1002.6, eth(0x88CC, vlan=True)),  # LLDP behind a VLAN tag
            (999.0, eth(0x0806)),  # before the workload: outside every bin
        ]
    )
    frames = frame_times(data)
    assert [k for _, k in frames] == ["arp", "arp", "lldp", "lldp", "arp"]
    binned = per_second(frames, t0, t0 + 3.5)
    # four bins (3.5 s rounds up), empty seconds kept
    assert binned["arp"] == [(1.0, 2), (2.0, 0), (3.0, 0), (4.0, 0)]
    assert binned["lldp"] == [(1.0, 0), (2.0, 0), (3.0, 2), (4.0, 0)]
    out = samples("ping", "h1", binned)
    assert len(out) == 8 and {s.flow for s in out} == {"h1"}
    arp = [(s.t, s.value, s.seq) for s in out if s.metric == "arp_frames_per_s"]
    assert arp[0] == (1.0, 2.0, 0) and out[0].unit == "frames/s"


def test_not_a_pcap():
    with pytest.raises(ValueError, match="not a pcap"):
        frame_times(b"x")
    with pytest.raises(ValueError, match="not a classic pcap"):
        frame_times(bytes(24))
