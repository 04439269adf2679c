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
    page, figure, front = tmp_path / "results.md", tmp_path / "tradeoff_main_job.png", tmp_path / "frontier.png"
    page.write_text("# Results\n\nabove\n\n<!-- main_job:start -->\nstale\n<!-- main_job:end -->\n\nbelow\n")

    body = main_job_table.write(out, page, figure, front)

    text = page.read_text()
    assert text.startswith("# Results\n\nabove\n") and text.rstrip().endswith("below") and "stale" not in text
    assert f"Bundle `{cmp.bundle_id}`" in body and "seeds 0, 1" in body and body in text
    assert figure.read_bytes() == (out / "tradeoff.png").read_bytes()
    assert front.read_bytes() == (out / "frontier.png").read_bytes()
    tables = body.split("\n\n")
    main = next(t for t in tables if t.startswith("| policy | facility carbon kg"))
    rows = {ln.split(" | ")[0].lstrip("| "): ln.split(" | ") for ln in main.splitlines() if ln.startswith("| lo")}
    assert set(rows) == {"local_only", "lowest_carbon"}
    head = main.splitlines()[0].split(" | ")
    carbon = cmp.summary.filter((pl.col("policy") == "lowest_carbon") & (pl.col("metric") == "carbon_kg"))
    assert f"{carbon['mean'][0]:,.0f}" in rows["lowest_carbon"][1]
    # the share late stands beside the carbon incl. transfers and its saving, in % of the tasks started
    i = head.index("tasks late %")
    assert head[i - 2:i] == ["carbon incl. transfers kg", "saving %"]
    late = cmp.summary.filter((pl.col("policy") == "lowest_carbon") & (pl.col("metric") == "sla_violation_rate"))
    assert rows["lowest_carbon"][i].startswith(f"{100 * late['mean'][0]:.2f}".replace("-", "−"))
    # the matched-service column is the ranking's, and the ranking and the lateness rule follow the table
    assert "saving at matched service %" in head
    assert "| policy | tasks late % | carbon saving % | saving at matched service % | how |" in body
    assert "a task is late when it finishes after its deadline" in body
