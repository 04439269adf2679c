from __future__ import annotations

from pathlib import Path

from pipelines.workload.plots import plot_workload
from warehouse.ingest_workload import prepare_workload


def test_plots_are_png(trace_dir: Path, mirror: Path, tmp_path: Path) -> None:
    prep = prepare_workload("alibaba-2020", 2023, trace_dir=trace_dir, mirror=mirror)
    paths = plot_workload(prep.tasks, 2023, tmp_path / "fig", name="fixture")
    assert [p.name for p in paths] == ["fixture_weekday_hour.png", "fixture_distributions.png"]
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000
