"""benchmarks/defer_delay_analysis.py on a window where ``defer_to_greener`` moves no task."""

import sys

from benchmarks import defer_delay_analysis
from sim_core.testing import synthetic_tasks, write_bundle


def test_no_task_moved_gives_a_row_not_a_crash(tmp_path, monkeypatch, capsys):
    # one datacenter: there is nowhere to move a task, so every allowed delay moves none
    bundle = write_bundle(tmp_path, locations=["DE-LU"], timezones=["Europe/Berlin"], n_steps=96,
                          tasks=synthetic_tasks(200, 96, seed=0))
    monkeypatch.setattr(sys, "argv", ["defer_delay_analysis.py", "--bundle", str(bundle), "--days", "1"])
    defer_delay_analysis.main()
    out = capsys.readouterr().out.splitlines()
    rows = [line for line in out if line.startswith("| ") and line[2].isdigit()]
    assert [int(r.split("|")[1]) for r in rows] == list(defer_delay_analysis.DELAYS_H)
    for r in rows:
        cells = [c.strip() for c in r.strip("|").split("|")]
        assert cells[5] == "0" and cells[6] == "0.0" and cells[4] == "0"  # tasks moved, TB moved, transfer kg
        assert cells[7] == defer_delay_analysis.NONE_MOVED
