"""One SLA rule in code and words (``sim_core.sla``): the engine counts a task late exactly when the words say,
and every output and page that defines lateness uses those words."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from sim_core.bench.report import assumptions
from sim_core.sla import late_rule, task_deadline
from tests.unit.sim_core.test_baselines import HOUR, one_dc, run

ROOT = Path(__file__).resolve().parents[3]


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_the_rule_in_words_names_finish_not_start_and_the_deadline_formula():
    words = late_rule(1.5)
    assert "finishes after its deadline" in words and "starts" not in words
    assert "max(1.5 × duration, allowed delay + duration)" in words
    assert "max(2 × duration" in late_rule(2.0) and "its own multiplier" in late_rule("per task")


def test_the_engine_counts_late_exactly_as_the_words_say(tmp_path):
    """Four cores, three 4-core 1-h tasks arriving together, run FCFS at their origin. A: 0-1 h, on time. B: no
    allowed delay, deadline 1.5 h; it STARTS at 1 h, before its deadline, and finishes at 2 h, after it: late
    (a start-based rule would call it on time). C: 2 h of allowed delay, deadline max(1.5 h, 2 h + 1 h) = 3 h;
    it finishes at 3 h, exactly its deadline: on time."""
    tasks = {"arrival_ts_utc": [0.0, 0.0, 0.0], "duration_s": [HOUR] * 3, "cpu_cores": [4.0] * 3,
             "max_delay_s": [0.0, 0.0, 2 * HOUR]}
    r = run(one_dc(tmp_path, tasks, np.full(32, 300.0), cores=4), "local_only")
    t = r.tasks.sort("task_id")
    secs = [[(v - a).total_seconds() for v, a in zip(t[c], t["arrival_ts_utc"], strict=True)]
            for c in ("start_ts_utc", "finish_ts_utc", "deadline_ts_utc")]
    assert secs == [[0.0, HOUR, 2 * HOUR], [HOUR, 2 * HOUR, 3 * HOUR], [1.5 * HOUR, 1.5 * HOUR, 3 * HOUR]]
    assert t["violated"].to_list() == [False, True, False] and r.totals["sla_violations"] == 1
    # the deadlines are task_deadline's, the formula the words state
    dl = task_deadline(np.zeros(3), np.full(3, HOUR), np.array([0.0, 0.0, 2 * HOUR]), 1.5)
    assert dl.tolist() == [1.5 * HOUR, 1.5 * HOUR, 3 * HOUR]


def test_compare_and_the_pages_use_the_one_wording():
    cmp = SimpleNamespace(options={"sla_multiplier": 1.5}, scenario=None)
    assert assumptions(cmp)["deadlines"] == late_rule(1.5)
    assert assumptions(SimpleNamespace(options={"sla_multiplier": "per task"}, scenario=None))["deadlines"] == \
        late_rule("per task")
    for page in ("docs/results.md", "docs/model.md"):
        assert late_rule(1.5) in _flat((ROOT / page).read_text()), page
    # and no page still defines lateness by the start
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert "late when it starts" not in _flat(page.read_text()), page.name
