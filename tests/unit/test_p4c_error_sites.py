"""bench/p4c/error_sites.py: finds every diagnostic lowering constructs and sorts it
into the family of what it checks (issue 23's before/after counts)."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location(
    "error_sites", ROOT / "bench" / "p4c" / "error_sites.py"
)
assert _spec and _spec.loader
error_sites = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(error_sites)


def test_families_by_message() -> None:
    assert error_sites.family("undeclared identifier '{}'") == "name"
    assert error_sites.family("expected a location (a variable, header or field)") == "direction"
    assert error_sites.family("operands of '{}' have different types: {} and {}") == "type"
    assert error_sites.family("a table can have at most one lpm key") == "unsupported"
    assert error_sites.family("verify is only allowed in parsers") == "placement"
    assert error_sites.family("internal compiler error: {}") == "internal"


def test_sites_skip_the_helpers_and_read_multiline_calls(tmp_path: Path) -> None:
    (tmp_path / "a.rs").write_text(
        "fn err(&mut self, span: Span, msg: String) { self.sink.err(span, msg); }\n"
        "fn f() {\n"
        "    self.err(s, format!(\"undeclared identifier '{}'\", n));\n"
        '    return Err(Error::new(\n        s,\n        "cannot cast {} to {}",\n    ));\n'
        '    self.internal(s, "state not resolved by sema");\n'
        "}\n"
    )
    found = error_sites.sites(tmp_path)
    # the helper's own body passes a message on: counted apart
    assert [(line, fam) for _, line, fam, _ in found] == [
        (1, "forward"),
        (3, "name"),
        (4, "type"),
        (8, "internal"),
    ]


def test_an_index_known_only_after_inlining_is_its_own_family() -> None:
    assert (
        error_sites.family("index {} is out of bounds for a stack of size {}") == "after inlining"
    )
    assert (
        error_sites.family("index {} is out of bounds for a header union stack of size {}")
        == "after inlining"
    )
    # the same check turned into a broken invariant stays internal
    assert (
        error_sites.family(
            "internal compiler error: index {} is out of bounds for a stack of size {}"
        )
        == "internal"
    )


def test_a_name_lowering_does_not_bind_is_its_limit(tmp_path: Path) -> None:
    (tmp_path / "a.rs").write_text(
        "fn unbound(&self, span: Span, n: &str) -> Error {\n"
        "    Error::new(span, format!(\"'{}' is not supported here\", n))\n"
        "}\n"
        "fn f() {\n"
        "    None => Err(self.unbound(e.span, n)),\n"
        "}\n"
    )
    found = error_sites.sites(tmp_path)
    assert [(line, fam) for _, line, fam, _ in found] == [(2, "unsupported"), (5, "unsupported")]
