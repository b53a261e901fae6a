"""The burst Mininet's htb has at a rate (sdnperf/links/htb.py), which our switch's port
shaper copies so bridge, OVS and p4 links are one token-bucket model."""

from sdnperf.links import htb

# /proc/net/psched of a kernel with high-resolution timers (this machine's)
HRTIMER_PSCHED = "000003e8 00000040 000f4240 3b9aca00\n"


def test_tc_reads_hz_as_get_hz_does():
    assert htb.psched_hz(HRTIMER_PSCHED) == 1_000_000_000
    # a clock_res other than 1 MHz, or nonsense: tc's fallback
    assert htb.psched_hz("000003e8 00000040 3b9aca00 3b9aca00") == htb.TC_DEFAULT_HZ
    assert htb.psched_hz("garbage") == htb.TC_DEFAULT_HZ
    assert htb.psched_hz("") == htb.TC_DEFAULT_HZ


def test_the_ceil_bucket_bounds_mininets_burst():
    # ceil = rate, cburst = rate / HZ + 1600 B: a few bytes over the mtu at 10^9 Hz, so
    # htb lets about 1600 B leave at once (tc -d class show: cburst 1600b), not 15k
    hz = 1_000_000_000
    assert htb.htb_burst_bytes(100, hz) == 1600
    assert htb.htb_burst_bytes(10, hz) == 1600
    assert htb.htb_burst_bytes(1000, hz) == 1600
    # with tc's old 100 Hz fallback the cburst grows with the rate, up to burst 15k
    assert htb.htb_burst_bytes(1, 100) == 1250 + 1600
    assert htb.htb_burst_bytes(100, 100) == 15 * 1024
    # the switch port's choice: htb's, or nothing (strict pacing)
    assert htb.port_burst_bytes(100, "htb", hz) == 1600
    assert htb.port_burst_bytes(100, "packet", hz) == 0
