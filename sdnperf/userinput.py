"""What every command reads from its user goes through here: text files (UTF-8, an error
naming the line of the first bad byte instead of a UnicodeDecodeError) and names that
become folders (one safe path component: never "..", never a slash, never too long)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, WithJsonSchema

# A name becomes results/<name>/: letters, digits, '_', '.', '-', starting with a letter or
# digit (so neither "." nor ".." nor a hidden folder), at most NAME_MAX_LENGTH characters
# (file systems allow 255 bytes per component; the store adds dated backups beside it).
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
NAME_MAX_LENGTH = 64
NAME_RULE = (
    f"letters, digits, '_', '.', '-', starting with a letter or digit, "
    f"at most {NAME_MAX_LENGTH} characters"
)


class InputError(ValueError):
    """A file or a value the user gave cannot be used; the message says why, in words
    (`file`, `line` and `reason` apart, for callers that format their own)."""

    def __init__(self, file: str, reason: str, line: int | None = None):
        self.file, self.reason, self.line = file, reason, line
        super().__init__(f"{file}:{line}: {reason}" if line else f"{file}: {reason}")


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a study's folder name, or None if it can."""
    if not isinstance(name, str) or not name:
        return f"a name is needed ({NAME_RULE})"
    if len(name) > NAME_MAX_LENGTH:
        return f"name is {len(name)} characters long; at most {NAME_MAX_LENGTH}"
    if not re.match(NAME_PATTERN, name):
        return f"name {_shown(name)} is not one safe folder name ({NAME_RULE})"
    return None


def _shown(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def read_text(path: str | Path) -> str:
    """A text file the user gave, as UTF-8; InputError naming the file (and the line of the
    first byte that is not UTF-8) when it cannot be read."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise InputError(str(path), "is a folder, not a file") from None
    except OSError as exc:
        raise InputError(str(path), f"cannot read: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            str(path),
            f"not UTF-8 text (byte 0x{data[exc.start]:02x}); save the file as UTF-8",
            line,
        ) from None


def _valid_name(name: str) -> str:
    problem = name_problem(name)
    if problem:
        raise ValueError(problem)
    return name


# A study-file field that becomes a folder name (pydantic checks it with name_problem's words).
SafeName = Annotated[
    str,
    AfterValidator(_valid_name),
    WithJsonSchema(
        {"type": "string", "pattern": NAME_PATTERN, "maxLength": NAME_MAX_LENGTH},
    ),
]
