"""Statistics, the comparison table, plots and the HTML report. Reads only the store.

metrics.py  registry of metric names: unit, better (lower|higher), definition
stats.py    mean ± 95 % CI, Welch / Mann–Whitney (one rule: compare_groups), Δ %, ECDF, fit
table.py    comparison(store, study_id, baseline) -> [Row]; render_table(rows, console);
            write_csv(rows, path); footnotes(rows)
series.py   samples shaped for figures (time series, per-run means, CPU per role)
plots.py    one PNG per figure; all_plots(store, study_id, out_dir) -> PlotSet
html.py     write_report(store, study_id, out_path) -> one self-contained HTML file
fmt.py      number formatting shared by all of them
"""
