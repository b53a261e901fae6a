"""Pre-encode the content of a study's video workloads, so the first run does not pay for
ffmpeg (it would be counted in that run's CPU use):

    python -m sdnperf.workloads.prepare_video STUDY.toml ...
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

from pydantic import TypeAdapter

from .config import WorkloadConfig
from .video_content import prepare


def main(paths: list[str]) -> int:
    for path in paths:
        for table in tomllib.loads(Path(path).read_text()).get("workload", []):
            cfg = TypeAdapter(WorkloadConfig).validate_python(table)
            for member in getattr(cfg, "members", None) or [cfg]:
                if member.kind == "video":
                    print(f"{path}: {member.name}: {prepare(member, print)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
