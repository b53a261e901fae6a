"""The SQLite result store (one file per study) and its CSV export."""
from sdnperf.store.rows import RunRow, SampleRow, StudyRow, SummaryRow
from sdnperf.store.sqlite import Store

__all__ = ["Store", "StudyRow", "RunRow", "SampleRow", "SummaryRow"]
