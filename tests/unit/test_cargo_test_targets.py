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


def module_files(root: Path) -> list[Path]:
    """`root` and every file its `mod x;` declarations reach, by Rust's rules: a module of
    main.rs, lib.rs or mod.rs is x.rs or x/mod.rs beside it; of any other file f.rs, in
    f/; `#[path]` is relative to the declaring file's folder."""
    files, todo = [], [root]
    while todo:
        f = todo.pop()
        if f in files or not f.exists():
            continue
        files.append(f)
        home = f.parent if f.name in ("main.rs", "lib.rs", "mod.rs") else f.parent / f.stem
        for path, name in MOD_DECL.findall(f.read_text()):
            if path:
                todo.append(f.parent / path)
            else:
                todo += [home / f"{name}.rs", home / name / "mod.rs"]
    return files


def bin_sources(crate: Path, target: dict) -> list[Path]:
    """The .rs files a bin compiles itself: its root and the modules it declares; the
    library's files are the library's."""
    return module_files(crate / target["path"])


def lib_sources(crate: Path, target: dict, manifest: dict) -> list[Path]:
    """Every .rs file under the library's folder that none of the crate's bins compiles
    (the default bin src/main.rs and src/bin/ included): whatever is not provably a bin's
    counts as the library's."""
    bins = manifest.get("bin", [])
    roots = [crate / b["path"] for b in bins if "path" in b]
    roots += [crate / "src" / "main.rs", *sorted((crate / "src" / "bin").glob("*.rs"))]
    of_bins = {f for r in roots for f in module_files(r)}
    return [f for f in sorted((crate / target["path"]).parent.rglob("*.rs")) if f not in of_bins]


def targets_without(flag: str) -> list[tuple[Path, dict, str, dict]]:
    out = []
    for crate in crates():
        manifest = tomllib.loads((crate / "Cargo.toml").read_text())
        for kind in ("lib", "bin"):
            entries = manifest.get(kind, [])
            for t in [entries] if isinstance(entries, dict) else entries:
                if t.get(flag) is False:
                    out.append((crate, t, kind, manifest))
    return out


def test_targets_left_out_of_cargo_test_have_no_tests():
    left_out = targets_without("test")
    assert left_out, "no target is marked test = false: drop this check or the markings"
    for crate, target, kind, manifest in left_out:
        if kind == "bin":
            files = bin_sources(crate, target)
        else:  # a library left out: none of its own files may hold a test
            files = lib_sources(crate, target, manifest)
        for f in files:
            assert not TEST_ATTR.search(f.read_text()), (
                f"{f.relative_to(RUST)} has a #[test] but {crate.name}'s {kind} target "
                f"{target.get('name', '')!r} is marked test = false in Cargo.toml: it would never run"
            )


def test_libraries_without_doc_tests_have_no_rust_examples():
    left_out = targets_without("doctest")
    assert left_out, "no library is marked doctest = false: drop this check or the markings"
    for crate, target, _, _ in left_out:
        for f in sorted((crate / target["path"]).parent.rglob("*.rs")):
            examples = rust_examples(f.read_text())
            assert not examples, (
                f"{f.relative_to(RUST)}: a Rust example in a doc comment ({examples[0]!r}) "
                f"but {crate.name} is marked doctest = false in Cargo.toml: it would never run "
                "(mark it ```text, or drop doctest = false)"
            )


def test_a_librarys_files_are_told_from_its_bins(tmp_path):
    """p4c's library is left out, its bins are not: their tests (src/main.rs and the fuzz
    bin's module src/bin/fuzz/gen.rs) are theirs; a test anywhere else in src/ is the
    library's and fails the check above."""
    src = tmp_path / "src"
    (src / "bin" / "fuzz").mkdir(parents=True)
    (src / "lib.rs").write_text("pub mod sema;\n")
    (src / "sema").mkdir()
    (src / "sema" / "mod.rs").write_text("mod names;\n")
    (src / "sema" / "names.rs").write_text("#[test]\nfn t() {}\n")
    (src / "main.rs").write_text("#[cfg(test)]\nmod tests {}\n")
    (src / "bin" / "fuzz.rs").write_text("mod gen;\n")
    (src / "bin" / "fuzz" / "gen.rs").write_text("#[test]\nfn g() {}\n")
    manifest = {"bin": [{"name": "fuzz", "path": "src/bin/fuzz.rs"}]}
    lib = lib_sources(tmp_path, {"path": "src/lib.rs"}, manifest)
    assert {f.relative_to(src).as_posix() for f in lib} == {
        "lib.rs",
        "sema/mod.rs",
        "sema/names.rs",
    }
    assert module_files(src / "bin" / "fuzz.rs") == [
        src / "bin" / "fuzz.rs",
        src / "bin" / "fuzz" / "gen.rs",
    ]


def test_the_checks_see_a_rust_example_and_a_test():
    assert rust_examples("/// ```\n/// let x = 1;\n/// ```\n") == ["/// ```"]
    assert rust_examples("//! ```rust,no_run\n//! f();\n//! ```\n") == ["//! ```rust,no_run"]
    assert rust_examples("//! ```text\n//! a=1\n//! ```\n") == []
    assert TEST_ATTR.search("    #[test]\n    fn f() {}") and TEST_ATTR.search("#[tokio::test]")
