"""The SQLite result store (one file per study, one transaction per run) and CSV export.

Store(path); open_study(name, source, spec, environment) -> id; record_run(id, RunResult);
done_keys(id); runs(id); samples(run_id=None, **filters); sample_metrics(id);
summaries(id); study(id); studies(); export_csv(id, out_dir); close()
"""

from sdnperf.store.rows import RunRow, SampleRow, StudyRow, SummaryRow
from sdnperf.store.schema import SchemaError
from sdnperf.store.sqlite import Store

__all__ = ["Store", "SchemaError", "StudyRow", "RunRow", "SampleRow", "SummaryRow"]
