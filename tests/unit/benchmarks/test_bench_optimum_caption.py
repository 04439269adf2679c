"""bench_optimum's page text says which search each row ran and lists its candidates least first (the page's
caption is generated, so a budgeted year beside a default week must not be described as the week's search)."""

from types import SimpleNamespace

from benchmarks import bench_optimum as B
from sim_core.optimum.refill import REFILL_ROUNDS, REFILL_SPARES
from sim_core.optimum.upper import PLAN_HOLD, PLAN_VARIANTS


def _row(name, search, candidates):
    return name, {"search": search, "b": SimpleNamespace(upper=SimpleNamespace(candidates=candidates))}


def test_search_words_follow_the_arguments():
    default = B.search_words({})
    assert f"{len(PLAN_VARIANTS)} tighter roundings" in default
    phases = ", ".join(f"{w:g}" for w in REFILL_SPARES)
    assert f"up to {REFILL_ROUNDS} refill rounds in phases of wake spare {phases}" in default
    assert f"an LP on each site's capacity / {PLAN_HOLD:g} (a plan, not a bound)" in default
    assert "capacity /" not in B.search_words({"hold": None})
    budgeted = B.search_words({"variants": (), "refill_rounds": 1, "heuristics": ("lowest_carbon",),
                               "refill_spares": (2.0,)})
    assert "tighter roundings" not in budgeted and "up to 1 refill round in phases of wake spare 2" in budgeted
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
    upper = SimpleNamespace(refill_from=878.6, refill_values=(850.5, 804.25), refill_spares=(2.0, 0.0))
    assert B.refill_words(upper) == " The refill rounds, kg (the round's wake spare): 878.6 → 850.5 (2) → 804.2 (0)."
    assert B.refill_words(SimpleNamespace(refill_from=878.6, refill_values=())) == ""  # none kept
    assert B.refill_words(SimpleNamespace(refill_from=float("nan"), refill_values=())) == ""  # none ran


def test_the_year_search_defaults_to_its_budget():
    """The year's refills are budgeted (six rounds at the plan's spare, as the page's year ran) unless the flags
    say otherwise, and the caption says so."""
    ap_args = SimpleNamespace(year_heuristics=None, year_variants=0, year_refill_rounds=B.YEAR_REFILL_ROUNDS,
                              year_refill_spares=list(B.YEAR_REFILL_SPARES))
    assert B.year_search(ap_args) == {"variants": (), "refill_rounds": 6, "refill_spares": (2.0,), "hold": None}
    words = B.search_words(B.year_search(ap_args))
    assert "up to 6 refill rounds in phases of wake spare 2" in words and "capacity /" not in words
