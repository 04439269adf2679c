"""benchmarks/main_job_table.py: the results page's table is the sweep's summary, written between its markers."""

from __future__ import annotations

import polars as pl

from benchmarks import main_job_table
from sim_core.bench import compare
from sim_core.bench.report import write_outputs
from sim_core.testing import synthetic_tasks, write_bundle


def test_the_results_section_is_the_sweep_s_summary_and_the_text_around_it_stays(tmp_path):
    bundle = write_bundle(tmp_path, locations=["DE-LU", "SG"], timezones=["Europe/Berlin", "Asia/Singapore"],
                          n_steps=96, tasks=synthetic_tasks(300, 96, seed=0))
    cmp = compare(bundle, ["local_only", "lowest_carbon"], [0, 1])
    out = tmp_path / "results"
    write_outputs(cmp, out)
    page, figure = tmp_path / "results.md", tmp_path / "tradeoff_main_job.png"
    page.write_text("# Results\n\nabove\n\n<!-- main_job:start -->\nstale\n<!-- main_job:end -->\n\nbelow\n")

    body = main_job_table.write(out, page, figure)

    text = page.read_text()
    assert text.startswith("# Results\n\nabove\n") and text.rstrip().endswith("below") and "stale" not in text
    assert f"Bundle `{cmp.bundle_id}`" in body and "seeds 0, 1" in body and body in text
    assert figure.read_bytes() == (out / "tradeoff.png").read_bytes()
    rows = {line.split(" | ")[0].lstrip("| "): line for line in body.splitlines() if line.startswith("| lo")}
    assert set(rows) == {"local_only", "lowest_carbon"}
    carbon = cmp.summary.filter((pl.col("policy") == "lowest_carbon") & (pl.col("metric") == "carbon_kg"))
    assert f"{carbon['mean'][0]:,.0f}" in rows["lowest_carbon"]
