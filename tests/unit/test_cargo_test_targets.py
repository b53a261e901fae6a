"""`cargo test --release` builds only the test binaries that have tests in them: a target
marked `test = false` or `doctest = false` in rust/*/Cargo.toml (to keep scripts/test.sh
under its time budget) must not hide a test. A `#[test]` added to such a binary, or a
Rust example in such a library's doc comments, fails here instead of silently not running."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

RUST = Path(__file__).resolve().parents[2] / "rust"
TEST_ATTR = re.compile(r"#\[(?:tokio::)?test\b")
DOC_FENCE = re.compile(r"^\s*//[/!]\s*```(.*)$")  # a fence in a doc comment (/// or //!)
MOD_DECL = re.compile(r'(?:#\[path\s*=\s*"([^"]+)"\]\s*)?\bmod\s+(\w+)\s*;')


def rust_examples(text: str) -> list[str]:
    """The opening fences of the doc-comment code blocks rustdoc would compile and run:
    no language, or `rust` with its options (```text and the like are not code)."""
    found, inside = [], False
    for line in text.splitlines():
        m = DOC_FENCE.match(line)
        if not m:
            continue
        if not inside and m.group(1).strip().split(",")[0] in ("", "rust"):
            found.append(line.strip())
        inside = not inside
    return found


def crates() -> list[Path]:
    members = tomllib.loads((RUST / "Cargo.toml").read_text())["workspace"]["members"]
    return [RUST / m for m in members]


def bin_sources(crate: Path, target: dict) -> list[Path]:
    """The .rs files a bin compiles itself: its root and the modules the root declares
    (`mod x;` beside it, or where `#[path]` says); the library's files are the library's."""
    root = crate / target["path"]
    files = [root]
    for path, name in MOD_DECL.findall(root.read_text()):
        files.append(root.parent / path if path else root.parent / f"{name}.rs")
    return [f for f in files if f.exists()]


def targets_without(flag: str) -> list[tuple[Path, dict, str]]:
    out = []
    for crate in crates():
        manifest = tomllib.loads((crate / "Cargo.toml").read_text())
        for kind in ("lib", "bin"):
            entries = manifest.get(kind, [])
            for t in [entries] if isinstance(entries, dict) else entries:
                if t.get(flag) is False:
                    out.append((crate, t, kind))
    return out


def test_targets_left_out_of_cargo_test_have_no_tests():
    left_out = targets_without("test")
    assert left_out, "no target is marked test = false: drop this check or the markings"
    for crate, target, kind in left_out:
        if kind == "bin":
            files = bin_sources(crate, target)
        else:  # a library left out: nothing of its source may hold a test
            files = sorted((crate / target["path"]).parent.rglob("*.rs"))
        for f in files:
            assert not TEST_ATTR.search(f.read_text()), (
                f"{f.relative_to(RUST)} has a #[test] but {crate.name}'s {kind} target "
                f"{target.get('name', '')!r} is marked test = false in Cargo.toml: it would never run"
            )


def test_libraries_without_doc_tests_have_no_rust_examples():
    left_out = targets_without("doctest")
    assert left_out, "no library is marked doctest = false: drop this check or the markings"
    for crate, target, _ in left_out:
        for f in sorted((crate / target["path"]).parent.rglob("*.rs")):
            examples = rust_examples(f.read_text())
            assert not examples, (
                f"{f.relative_to(RUST)}: a Rust example in a doc comment ({examples[0]!r}) "
                f"but {crate.name} is marked doctest = false in Cargo.toml: it would never run "
                "(mark it ```text, or drop doctest = false)"
            )


def test_the_checks_see_a_rust_example_and_a_test():
    assert rust_examples("/// ```\n/// let x = 1;\n/// ```\n") == ["/// ```"]
    assert rust_examples("//! ```rust,no_run\n//! f();\n//! ```\n") == ["//! ```rust,no_run"]
    assert rust_examples("//! ```text\n//! a=1\n//! ```\n") == []
    assert TEST_ATTR.search("    #[test]\n    fn f() {}") and TEST_ATTR.search("#[tokio::test]")
