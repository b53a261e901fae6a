"""Segmented video for the `video` workload: a bitrate ladder of HLS renditions.

Two ways to make it, both cached under `$SDNPERF_CACHE` (default ~/.cache/sdnperf)/video/:
- "ffmpeg" (the real path): ffmpeg encodes its `testsrc2` test pattern with x264 at each
  ladder bitrate (VBV: maxrate 1.5x, buffer 2x the target, so segment sizes vary around
  the target like real VBR video), a key frame at every segment boundary, cut into HLS
  segments (`HEIGHTp/segNNNNN.ts` + `index.m3u8`, and a `master.m3u8` for real players).
  Encoding the default 5-step ladder (up to 1080p) for 20 s takes ~15 s, once.
- "synthetic" (no encoder): segment i of a rendition at bitrate b has
  b x segment_s / 8 x c_i bytes, where c_i = exp(0.25 z_i - 0.25^2/2), z_i standard normal
  drawn from a fixed seed, is the content's complexity, shared by all renditions of
  segment i (as real scenes are), mean 1. Files are sparse, filled with zeros.
Either way `manifest.json` lists every segment's URI and size; the player reads it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
import subprocess
import tempfile
from pathlib import Path

FPS = 25
ENCODE_TIMEOUT_S = 600
VERSION = 1  # bump when the generated content changes shape
COMPLEXITY_SIGMA = 0.25
SYNTHETIC_SEED = 7


def cache_root() -> Path:
    return Path(os.environ.get("SDNPERF_CACHE", Path.home() / ".cache" / "sdnperf")) / "video"


def width_for(height: int) -> int:
    return int(round(height * 16 / 9 / 2)) * 2  # 16:9, even


def content_dir(
    renditions: list[tuple[int, float]], segment_s: float, duration_s: float, kind: str
) -> Path:
    key = json.dumps([VERSION, kind, renditions, segment_s, duration_s]).encode()
    return cache_root() / f"{kind}-{hashlib.sha256(key).hexdigest()[:12]}"


def segment_count(segment_s: float, duration_s: float) -> int:
    return max(1, math.ceil(duration_s / segment_s - 1e-9))


def synthetic_sizes(
    renditions: list[tuple[int, float]], segment_s: float, n: int, seed: int = SYNTHETIC_SEED
) -> list[list[int]]:
    """sizes[r][i] in bytes, per the model in the module docstring."""
    rng = random.Random(seed)
    sigma = COMPLEXITY_SIGMA
    complexity = [math.exp(sigma * rng.gauss(0, 1) - sigma * sigma / 2) for _ in range(n)]
    return [[max(188, int(rate * segment_s / 8 * c)) for c in complexity] for _, rate in renditions]


def ensure_content(
    renditions: list[tuple[int, float]],
    segment_s: float,
    duration_s: float,
    kind: str,
    log=lambda msg: None,
) -> Path:
    """The folder holding manifest.json and the segments; generated on first use."""
    folder = content_dir(renditions, segment_s, duration_s, kind)
    if (folder / "manifest.json").exists():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    # a fresh name, not one after our PID: runs in separate PID namespaces (the parallel e2e
    # groups) share this cache and the same PIDs
    tmp = Path(tempfile.mkdtemp(prefix=folder.name + ".tmp", dir=folder.parent))
    try:
        n = segment_count(segment_s, duration_s)
        if kind == "ffmpeg":
            log(f"encoding the video ladder once with ffmpeg into {folder} ...")
            sizes = _encode(tmp, renditions, segment_s, n)
        else:
            sizes = _synthesize(tmp, renditions, segment_s, n)
        manifest = {
            "segment_s": segment_s,
            "content": kind,
            "renditions": [
                {
                    "height": h,
                    "bitrate": rate,
                    "segments": [
                        {"uri": f"{h}p/seg{i:05d}.ts", "bytes": b} for i, b in enumerate(sizes[r])
                    ],
                }
                for r, (h, rate) in enumerate(renditions)
            ],
        }
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1))
        (tmp / "master.m3u8").write_text(_master(renditions))
        try:
            tmp.rename(folder)
        except OSError:  # another run made it meanwhile
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder


def _master(renditions: list[tuple[int, float]]) -> str:
    lines = ["#EXTM3U"]
    for h, rate in renditions:
        lines += [
            f"#EXT-X-STREAM-INF:BANDWIDTH={int(rate)},RESOLUTION={width_for(h)}x{h}",
            f"{h}p/index.m3u8",
        ]
    return "\n".join(lines) + "\n"


def _synthesize(folder: Path, renditions, segment_s: float, n: int) -> list[list[int]]:
    sizes = synthetic_sizes(renditions, segment_s, n)
    for (h, _), row in zip(renditions, sizes):
        d = folder / f"{h}p"
        d.mkdir()
        for i, size in enumerate(row):
            with open(d / f"seg{i:05d}.ts", "wb") as f:
                f.truncate(size)  # sparse: no disk, same bytes on the wire
    return sizes


def _encode(folder: Path, renditions, segment_s: float, n: int) -> list[list[int]]:
    if not shutil.which("ffmpeg"):
        raise RuntimeError(
            'video content = "ffmpeg" needs ffmpeg (Debian package ffmpeg; '
            'scripts/install.sh installs it), or use content = "synthetic"'
        )
    gop = max(1, int(round(segment_s * FPS)))
    sizes = []
    for h, rate in renditions:
        d = folder / f"{h}p"
        d.mkdir()
        argv = [
            "ffmpeg",
            "-hide_banner",
            "-loglevel",
            "error",
            "-nostdin",
            "-y",
            "-f",
            "lavfi",
            "-i",
            f"testsrc2=s={width_for(h)}x{h}:r={FPS}:d={n * segment_s:g}",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-pix_fmt",
            "yuv420p",
            "-b:v",
            f"{int(rate)}",
            "-maxrate",
            f"{int(rate * 1.5)}",
            "-bufsize",
            f"{int(rate * 2)}",
            "-g",
            str(gop),
            "-keyint_min",
            str(gop),
            "-sc_threshold",
            "0",
            "-an",
            "-f",
            "hls",
            "-hls_time",
            f"{segment_s:g}",
            "-hls_playlist_type",
            "vod",
            "-hls_segment_filename",
            str(d / "seg%05d.ts"),
            str(d / "index.m3u8"),
        ]
        proc = subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=ENCODE_TIMEOUT_S
        )
        if proc.returncode != 0:
            raise RuntimeError(
                f"ffmpeg failed for {h}p: {proc.stderr.decode(errors='replace')[-400:]}"
            )
        segs = sorted(d.glob("seg*.ts"))
        if not segs:
            raise RuntimeError(f"ffmpeg wrote no segments for {h}p")
        sizes.append([s.stat().st_size for s in segs][:n])
    m = min(len(row) for row in sizes)  # renditions cut at the same key frames
    return [row[:m] for row in sizes]


def prepare(cfg, log=lambda msg: None) -> Path:
    """Content for a VideoConfig (generated now if not cached)."""
    return ensure_content(cfg.renditions, cfg.segment_s, cfg.duration, cfg.content, log)
