"""bench_optimum's page text says which search each row ran and lists its candidates least first (the page's
caption is generated, so a budgeted year beside a default week must not be described as the week's search)."""

from types import SimpleNamespace

from benchmarks import bench_optimum as B
from sim_core.optimum.refill import REFILL_ROUNDS
from sim_core.optimum.upper import PLAN_VARIANTS


def _row(name, search, candidates):
    return name, {"search": search, "b": SimpleNamespace(upper=SimpleNamespace(candidates=candidates))}


def test_search_words_follow_the_arguments():
    default = B.search_words({})
    assert f"{len(PLAN_VARIANTS)} tighter roundings" in default
    assert f"up to {REFILL_ROUNDS} refill rounds" in default
    budgeted = B.search_words({"variants": (), "refill_rounds": 1, "heuristics": ("lowest_carbon",)})
    assert "tighter roundings" not in budgeted and "up to 1 refill round" in budgeted
    assert "`lowest_carbon`" in budgeted and "`lowest_price`" not in budgeted


def test_rows_with_different_searches_are_named():
    week = _row("7 days, one LP", {}, {})
    year = _row("365 days", {"variants": (), "refill_rounds": 2}, {})
    assert B.searches_words([week]) == B.search_words({})
    both = B.searches_words([week, year])
    assert both.startswith("7 days, one LP: ") and "; 365 days: " in both
    assert both.endswith(B.search_words({"variants": (), "refill_rounds": 2}))


def test_candidates_least_first_deadline_meeting_before_late():
    row = _row("w", {}, {"a": (120.0, 0), "b": (90.0, 5), "c": (100.0, 0)})
    assert B.candidate_rows([row]) == ["| w | c | 100.0 | 0 |", "| w | a | 120.0 | 0 |", "| w | b | 90.0 | 5 |"]


def test_refill_rounds_listed_from_the_run_they_started_from():
    upper = SimpleNamespace(refill_from=878.6, refill_values=(850.5, 804.25))
    assert B.refill_words(upper) == " The refill rounds, kg: 878.6 → 850.5 → 804.2."
    assert B.refill_words(SimpleNamespace(refill_from=878.6, refill_values=())) == ""  # none kept
    assert B.refill_words(SimpleNamespace(refill_from=float("nan"), refill_values=())) == ""  # none ran
