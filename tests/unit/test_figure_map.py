"""Figure maps (sdnperf/studies/figure_map.py): every built-in study maps every result table
and figure of its seed paper, each plot/table id exists in the report's registry, the
count line is honest, and the paper's numbers are set beside ours with the right ratios."""

from __future__ import annotations

import pytest

from sdnperf.samples import RunResult, Summary
from sdnperf.store import Store
from sdnperf.studies import figure_map
from sdnperf.studies.builtin import STUDIES, find

# Issue 22 counts each paper's own result tables and figures: 55 in all.
EXPECTED = {
    "topologies-traffic": ["Fig. 3", *(f"Fig. {n}" for n in range(4, 13)), "Table 2"]
    + [f"Table {n}" for n in range(3, 7)],
    "workload-complexity": [f"Table {n}" for n in range(1, 5)],
    "controller-capacity": ["Fig. 4a", "Fig. 4b", "Fig. 4c", "Fig. 5", "Fig. 6a", "Fig. 6b"]
    + ["Fig. 7a", "Fig. 7b", "Fig. 7c", "Table I"],
    "recirculation": [f"Fig. 5.{n}" for n in [*range(5, 18), *range(19, 28)]],
    "architectures-campus": ["First ping (Figs 6-7)", "Table 1", "Table 2", "Table 3"],
}


@pytest.mark.parametrize("name", sorted(STUDIES))
def test_every_paper_item_is_mapped_once(name):
    fmap = figure_map.load(find(name))
    assert [i.number for i in fmap.item] == EXPECTED[name]
    assert fmap.paper.seed == find(name).seed


def test_fifty_five_items_in_all():
    assert sum(len(figure_map.load(s).item) for s in STUDIES.values()) == 55


@pytest.mark.parametrize("name", sorted(STUDIES))
def test_every_referenced_id_exists_in_the_report_registry(name):
    fmap = figure_map.load(find(name))
    assert figure_map.unknown_ids(fmap) == []
    registry = figure_map.report_kinds()
    for item in fmap.item:
        if item.kind_id:
            assert item.kind_id in registry, item.number


@pytest.mark.parametrize("name", sorted(STUDIES))
def test_parts_exist(name):
    study = find(name)
    for item in figure_map.load(study).item:
        for part in [item.part, *(r.part for r in item.reference)]:
            if part is not None:
                assert part in study.parts("paper"), f"{item.number}: no part {part!r}"


def test_unknown_plot_id_is_reported(tmp_path):
    fmap = figure_map.FigureMap.model_validate(
        {
            "paper": {"seed": "x", "title": "t"},
            "item": [
                {"number": "Fig. 1", "caption": "c", "status": "reproduced", "plot": "nope"},
                {
                    "number": "Fig. 2",
                    "caption": "c",
                    "status": "reproduced",
                    "plot": "sweep",
                    "args": {"workload": "w"},  # param and metric missing
                },
            ],
        }
    )
    bad = figure_map.unknown_ids(fmap)
    assert len(bad) == 2 and "no plot 'nope'" in bad[0] and "do not match" in bad[1]


@pytest.mark.parametrize(
    "item, why",
    [
        ({"status": "reproduced"}, "needs the `plot` or `table`"),
        ({"status": "outside"}, "needs a `note`"),
        ({"status": "missing", "note": "n", "plot": "a", "table": "b"}, "not both"),
        ({"status": "done"}, "status"),
    ],
)
def test_inconsistent_items_are_refused_with_the_file(tmp_path, monkeypatch, item, why):
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "figures.toml").write_text(
        '[paper]\nseed = "9"\ntitle = "t"\n[[item]]\nnumber = "Fig. 1"\ncaption = "c"\n'
        + "".join(f'{k} = "{v}"\n' for k, v in item.items())
    )
    study = find("workload-complexity")
    monkeypatch.setattr(type(study), "folder", property(lambda self: folder))
    with pytest.raises(figure_map.FigureMapError) as err:
        figure_map.load(study)
    assert str(folder / "figures.toml") in str(err.value) and why in str(err.value)


def test_lines_end_with_the_count():
    study = find("controller-capacity")
    fmap = figure_map.load(study)
    out = figure_map.lines(study, fmap)
    assert out[-1] == f"reproduced {fmap.reproduced()} of 10"
    assert fmap.reproduced() == sum(1 for i in fmap.item if i.status == "reproduced")
    assert any("Table I" in line for line in out)


def _store(tmp_path):
    store = Store(tmp_path / "s.db")
    sid = store.open_study("workload-complexity", "x.toml", {}, {})
    values = {
        ("p4-ipv4", 1454): [0.30, 0.50],
        ("kernel-ipv4", 1454): [0.20],
        ("p4-ipv4", 64): [9.0],
    }
    rep = 0
    for (arch, size), vals in values.items():
        for v in vals:
            rep += 1
            store.record_run(
                sid,
                RunResult(
                    f"k{rep}",
                    "t",
                    arch,
                    "owd",
                    rep,
                    {},
                    "ok",
                    summaries=[Summary("owd", "owd_ms", v, "ms")],
                    point={"workload.owd.packet_size": size},
                ),
            )
    return store, sid


def test_paper_value_beside_ours_in_our_unit(tmp_path):
    store, sid = _store(tmp_path)
    ref = figure_map.Reference(
        what="w",
        paper=46,
        unit="µs",
        source="Table 3",
        scale=0.001,
        ours=figure_map.Selector(
            metric="owd_ms", architecture="p4-ipv4", point={"workload.owd.packet_size": 1454}
        ),
    )
    c = figure_map.compare(store, sid, ref)
    store.close()
    assert c is not None and c.runs == 2
    assert c.paper == pytest.approx(0.046) and c.ours == pytest.approx(0.40)
    assert c.ratio == pytest.approx(0.40 / 0.046)


def test_ratio_of_ratios_where_testbeds_differ(tmp_path):
    store, sid = _store(tmp_path)
    ref = figure_map.Reference(
        what="w",
        paper=88,
        paper_over=46,
        over="kernel-ipv4",
        unit="µs",
        source="Table 3",
        ours=figure_map.Selector(
            metric="owd_ms", architecture="p4-ipv4", point={"workload.owd.packet_size": 1454}
        ),
    )
    c = figure_map.compare(store, sid, ref)
    lines = figure_map.comparison_lines(
        store,
        sid,
        figure_map.FigureMap.model_validate(
            {
                "paper": {"seed": "001", "title": "t"},
                "item": [
                    {
                        "number": "Table 3",
                        "caption": "c",
                        "status": "missing",
                        "note": "n",
                        "reference": [ref.model_dump()],
                    }
                ],
            }
        ),
    )
    store.close()
    assert c is not None
    assert c.paper == pytest.approx(88 / 46)  # the paper's ProGFE / kernel
    assert c.ours == pytest.approx(0.40 / 0.20)  # ours p4-ipv4 / kernel-ipv4
    assert c.ratio == pytest.approx((0.40 / 0.20) / (88 / 46))
    assert "paper 1.91, ours 2 (n=2), ratio 1.05" in lines[1]


def test_no_matching_run_is_shown_as_missing(tmp_path):
    store, sid = _store(tmp_path)
    ref = figure_map.Reference(
        what="w",
        paper=1,
        unit="ms",
        source="s",
        ours=figure_map.Selector(metric="owd_ms", architecture="ovs-ipv4"),
    )
    c = figure_map.compare(store, sid, ref)
    store.close()
    assert c is not None and c.ours is None and c.ratio is None and c.runs == 0


def test_ratio_needs_both_halves():
    with pytest.raises(ValueError, match="go together"):
        figure_map.Reference(what="w", paper=1, unit="u", source="s", over="x")


def test_report_opens_with_the_map(tmp_path):
    from sdnperf.report.html import write_report

    store, sid = _store(tmp_path)
    page = write_report(store, sid, tmp_path / "r.html").read_text()
    store.close()
    opening = page.index("The paper, figure by figure")
    assert opening < page.index("<h2>Comparison</h2>")
    fmap = figure_map.load(find("workload-complexity"))
    assert f"reproduced {fmap.reproduced()} of 4" in page
    assert "NP2 ProGFE bridging time" in page  # Table 1's caption
    assert "<h3>The paper's numbers beside ours</h3>" in page
    assert "<td class=num>1.91</td><td class=num>2</td><td class=num>2</td>" in page


def test_workload_names_with_a_slash_and_mixed_members(tmp_path):
    """ctlbench workloads contain "/" ("ctlbench rate 10 pps/switch"); a mixed run's
    members are stored as "mix/tcp" under the run's workload "mix": both are found."""
    store = Store(tmp_path / "s.db")
    sid = store.open_study("controller-capacity-x", "x.toml", {}, {})
    for i, (workload, member) in enumerate(
        [("ctlbench rate 10 pps/switch", "ctlbench rate 10 pps/switch"), ("mix", "mix/tcp")]
    ):
        store.record_run(
            sid,
            RunResult(
                f"k{i}", "t", "a", workload, 1, {}, "ok", summaries=[Summary(member, "m", 2.0, "")]
            ),
        )
    for workload in ("ctlbench rate 10 pps/switch", "mix/tcp"):
        ref = figure_map.Reference(
            what="w",
            paper=4,
            unit="",
            source="s",
            ours=figure_map.Selector(metric="m", architecture="a", workload=workload),
        )
        c = figure_map.compare(store, sid, ref)
        assert c is not None and c.ours == 2.0 and c.runs == 1 and c.ratio == 0.5, workload
    store.close()


def test_an_item_drawn_by_several_figures():
    """000 Fig. 10: members' throughput (a, b) plus two jitter figures (c, d); every one is
    checked against the registry and named in the map's line."""
    item = {
        "number": "Fig. 10",
        "caption": "c",
        "status": "reproduced",
        "plot": "members-over-time",
        "args": {"workload": "mix", "topology": "grid"},
        "also": [
            {"plot": "metric-over-time", "args": {"metric": "jitter_ms", "workload": "mix/udp"}},
            {"plot": "nope"},
        ],
    }
    fmap = figure_map.FigureMap.model_validate(
        {"paper": {"seed": "x", "title": "t"}, "item": [item]}
    )
    assert figure_map.unknown_ids(fmap) == ["Fig. 10: no plot 'nope'"]
    item["also"] = item["also"][:1]
    fmap = figure_map.FigureMap.model_validate(
        {"paper": {"seed": "x", "title": "t"}, "item": [item]}
    )
    assert figure_map.unknown_ids(fmap) == []
    text = figure_map._target(fmap.item[0])
    assert "members_mix_grid" in text and "jitter_ms_over_time_mix_udp" in text
    with pytest.raises(ValueError, match="adds figures to an item's `plot`"):
        figure_map.Item.model_validate(
            {
                "number": "T",
                "caption": "c",
                "status": "reproduced",
                "table": "comparison",
                "args": {"workload": "w", "metric": "m"},
                "also": [{"plot": "rtt-bars"}],
            }
        )
