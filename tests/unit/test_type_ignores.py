"""mypy runs with every error code on (pyproject.toml); an exception is a
`# type: ignore[code]` on its line that names the code and says why in a comment after it
(issue 23: "a one-line reason per exception")."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IGNORE = re.compile(r"#\s*type:\s*ignore(?P<codes>\[[^\]]*\])?(?P<rest>.*)$")


def unexplained(text: str) -> list[int]:
    """Lines whose `# type: ignore` names no error code or gives no reason after it."""
    bad = []
    for number, line in enumerate(text.splitlines(), 1):
        found = IGNORE.search(line)
        if found is None:
            continue
        reason = found["rest"].strip().lstrip("#").strip()
        if not found["codes"] or not reason:
            bad.append(number)
    return bad


def test_the_check_sees_a_bare_ignore_and_one_without_a_reason():
    text = (
        "a = f()  # type: ignore\n"
        "b = g()  # type: ignore[arg-type]\n"
        "c = h()  # type: ignore[arg-type]  # a wrong type on purpose\n"
        "d = 1  # no ignore here\n"
    )
    assert unexplained(text) == [1, 2]


def test_every_type_ignore_names_its_code_and_says_why():
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for folder in ("sdnperf", "tests", "bench", "scripts")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for line in unexplained(path.read_text())
        if path != Path(__file__).resolve()
    ]
    assert not found, "type: ignore without an error code and a reason: " + ", ".join(found)
