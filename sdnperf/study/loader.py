"""Load a study file: TOML -> validated StudyFile + built topology, or StudyError(s).

Every error names the file, the line and the field path, e.g.
    examples/campus.toml:23: workload[0].count: Input should be greater than or equal to 1
and a file with several mistakes gets all of them at once (the schema's, the topology
generator's; host names in pairs once both are right). Paths in a study file (runtime_dir,
GraphML files, custom Topo modules) are relative to the file's folder; absolute ones stay.
"""

from __future__ import annotations

import re
import tomllib
from importlib import resources
from pathlib import Path

from sdnperf.study.sweep import check_sweeps
from sdnperf.study.validate import LoadedStudy, Problem, StudyError, validate_raw
from sdnperf.userinput import InputError, read_text

__all__ = ["LoadedStudy", "Problem", "StudyError", "load_study", "load_study_text"]

DEFAULT_STUDY = "default.toml"


def default_study_text() -> str:
    return resources.files("sdnperf.study").joinpath(DEFAULT_STUDY).read_text()


def load_study(path: str | Path | None) -> LoadedStudy:
    if path is None:
        return load_study_text(default_study_text(), "<default study>", base_dir=Path.cwd())
    path = Path(path)
    try:
        text = read_text(path)
    except InputError as exc:
        raise StudyError([Problem(exc.file, exc.line, "", exc.reason)]) from None
    return load_study_text(text, str(path), base_dir=path.parent)


def load_study_text(text: str, source: str, base_dir: Path) -> LoadedStudy:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"at line (\d+)", str(exc))  # 3.11's error has no lineno attribute
        line = int(found.group(1)) if found else None
        raise StudyError([Problem(source, line, "", f"not valid TOML: {exc}")]) from None
    config, topologies = validate_raw(raw, text, source, base_dir)
    study = LoadedStudy(
        source, text, config, next(iter(topologies.values())), raw, topologies, base_dir
    )
    problems = check_sweeps(study)
    if problems:
        raise StudyError(problems)
    return study
