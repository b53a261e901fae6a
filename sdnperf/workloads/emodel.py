"""MOS estimate of a voice call from the ITU-T G.107 E-model (pure functions).

    R   = R0 - Is - Idd(Ta) - Ie_eff + A
    MOS = 1                                             if R <= 0
          1 + 0.035 R + R (R - 60)(100 - R) 7e-6        if 0 < R < 100
          4.5                                           if R >= 100

Parameters and simplifications (all G.107 defaults except what the network changes):
- R0 - Is = 93.2: the G.107 default-parameter rating (no echo, default loudness, room
  noise and sidetone). Talker/listener echo terms (Idte, Idle) are kept at their default
  values, i.e. the only delay impairment that varies is Idd.
- Idd(Ta) (G.107 §7.3, absolute delay impairment): 0 for Ta <= 100 ms, otherwise
      X = log2(Ta / 100);  Idd = 25 [ (1 + X^6)^(1/6) - 3 (1 + (X/3)^6)^(1/6) + 2 ].
- Ta, the mouth-to-ear delay in ms = mean one-way network delay + packetization delay
  (codec frame time x frames per packet) + codec look-ahead + a jitter buffer of
  2 x the call's RFC 3550 jitter.
- Ie_eff = Ie + (95 - Ie) Ppl / (Ppl / BurstR + Bpl), with Ppl the packet loss in %,
  BurstR = 1 (random loss), and the codec's Ie/Bpl from ITU-T G.113 Appendix I:
  G.711 with packet-loss concealment: Ie = 0, Bpl = 25.1; G.729(A): Ie = 11, Bpl = 19.0.
- A (advantage factor) = 0: a wired call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

R_DEFAULT = 93.2  # R0 - Is with all G.107 default parameters


@dataclass(frozen=True)
class Codec:
    name: str
    ie: float  # equipment impairment factor (G.113 App. I)
    bpl: float  # packet-loss robustness factor (G.113 App. I)
    frame_ms: float  # duration of one codec frame
    lookahead_ms: float  # algorithmic look-ahead


CODECS = {
    "G.711": Codec("G.711", ie=0.0, bpl=25.1, frame_ms=10.0, lookahead_ms=0.0),
    "G.729": Codec("G.729", ie=11.0, bpl=19.0, frame_ms=10.0, lookahead_ms=5.0),
}


def delay_impairment(ta_ms: float) -> float:
    """Idd of G.107 for an absolute (mouth-to-ear) delay Ta in ms."""
    if ta_ms <= 100.0:
        return 0.0
    x = math.log2(ta_ms / 100.0)
    return 25.0 * ((1 + x**6) ** (1 / 6) - 3 * (1 + (x / 3) ** 6) ** (1 / 6) + 2)


def effective_equipment_impairment(codec: Codec, loss_pct: float, burst_r: float = 1.0) -> float:
    """Ie_eff: the codec's impairment grown by random (burst_r = 1) packet loss."""
    ppl = max(0.0, loss_pct)
    return codec.ie + (95.0 - codec.ie) * ppl / (ppl / burst_r + codec.bpl)


def mouth_to_ear_ms(codec: Codec, frames_per_packet: int, owd_ms: float, jitter_ms: float) -> float:
    return owd_ms + codec.frame_ms * frames_per_packet + codec.lookahead_ms + 2.0 * jitter_ms


def r_factor(codec: Codec, ta_ms: float, loss_pct: float, advantage: float = 0.0) -> float:
    return (
        R_DEFAULT
        - delay_impairment(ta_ms)
        - effective_equipment_impairment(codec, loss_pct)
        + advantage
    )


def mos_from_r(r: float) -> float:
    if r <= 0:
        return 1.0
    if r >= 100:
        return 4.5
    return 1 + 0.035 * r + r * (r - 60) * (100 - r) * 7e-6


def call_mos(
    codec_name: str, frames_per_packet: int, owd_ms: float, jitter_ms: float, loss_pct: float
) -> tuple[float, float]:
    """(R, MOS) of one call."""
    codec = CODECS[codec_name]
    r = r_factor(codec, mouth_to_ear_ms(codec, frames_per_packet, owd_ms, jitter_ms), loss_pct)
    return r, mos_from_r(r)
