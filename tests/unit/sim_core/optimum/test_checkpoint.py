"""A bound solved in rolling horizons with a checkpoint folder resumes where an interrupted run stopped: the LP
solutions on disk are read, not solved again, and the result is that of one uninterrupted run, to the bit; a file
is keyed by the LP itself, so a code edit that leaves the LPs as they were keeps them and any change of an LP does
not (``optimum(..., checkpoint=...)``, ``sim_core.optimum.checkpoint``)."""

from __future__ import annotations

import numpy as np
import pytest

import sim_core
from sim_core.optimum import OptimumError, optimum
from sim_core.optimum import solve as solve_mod
from tests.unit.sim_core.optimum.test_optimum import _flexible_bundle

ARGS = dict(seed=1, horizon_days=1.0, profile=True)


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    return sim_core.load(_flexible_bundle(tmp_path_factory.mktemp("ckpt")))


@pytest.fixture(scope="module")
def whole(scenario):
    return optimum(scenario, **ARGS)


def _figures(res) -> dict:
    return {k: v for k, v in res.to_dict().items() if k not in ("solve_s", "build_s", "resumed_horizons")}


def _same_profile(a, b) -> None:
    for f in ("busy", "price", "site", "step"):
        np.testing.assert_array_equal(getattr(a.profile, f), getattr(b.profile, f), err_msg=f)


def test_an_interrupted_bound_resumes_and_equals_one_uninterrupted_run(scenario, whole, tmp_path, monkeypatch):
    assert whole.rolling and whole.n_horizons == 3
    real, calls = solve_mod._solve, []

    def dies_on_the_second(lp, threads, solver):
        calls.append(lp.n_col)
        if len(calls) == 2:
            raise RuntimeError("interrupted")  # (between horizons: the first one's file is written)
        return real(lp, threads, solver)

    monkeypatch.setattr(solve_mod, "_solve", dies_on_the_second)
    with pytest.raises(RuntimeError, match="interrupted"):
        optimum(scenario, checkpoint=tmp_path, **ARGS)
    files = list(tmp_path.glob("lp-*.npz"))
    assert len(files) == 1 and not list(tmp_path.glob("*.tmp*"))  # whole or absent

    calls.clear()
    monkeypatch.setattr(solve_mod, "_solve", lambda *a: (calls.append(1), real(*a))[1])
    resumed = optimum(scenario, checkpoint=tmp_path, **ARGS)
    assert len(calls) == 2 and resumed.resumed_horizons == 1  # only the two horizons not on disk were solved
    assert _figures(resumed) == _figures(whole)
    _same_profile(resumed, whole)

    calls.clear()
    again = optimum(scenario, checkpoint=tmp_path, **ARGS)
    assert calls == [] and again.resumed_horizons == 3 and _figures(again) == _figures(whole)
    _same_profile(again, whole)


def test_another_bound_never_reads_these_horizons(scenario, whole, tmp_path):
    optimum(scenario, checkpoint=tmp_path, **ARGS)
    other = optimum(scenario, checkpoint=tmp_path, **{**ARGS, "seed": 2})
    assert other.resumed_horizons == 0 and len(list(tmp_path.glob("lp-*.npz"))) == 6  # other tasks, other LPs
    fresh = optimum(scenario, **{**ARGS, "seed": 2})
    assert _figures(other) == _figures(fresh)
    tighter = optimum(scenario, checkpoint=tmp_path, **{**ARGS, "curve_steps": 1})  # the same tasks, another LP
    assert tighter.resumed_horizons == 0 and _figures(tighter) == _figures(optimum(scenario, **{**ARGS,
                                                                                              "curve_steps": 1}))


def test_a_code_edit_that_leaves_the_lps_keeps_them(scenario, whole, tmp_path, monkeypatch):
    """The key is the LP, not the code version: the search, the profile's reading or any other code may change
    and a year's LPs are read again; what is derived from them is computed by the code that runs."""
    import sim_core.result

    optimum(scenario, checkpoint=tmp_path, **ARGS)
    monkeypatch.setattr(sim_core.result, "gridshift_version", lambda: "0.0.0+sim.edited")
    again = optimum(scenario, checkpoint=tmp_path, **ARGS)
    assert again.resumed_horizons == 3 and _figures(again) == _figures(whole)
    _same_profile(again, whole)
    without = optimum(scenario, checkpoint=tmp_path, **{**ARGS, "profile": False})  # the same LPs
    assert without.resumed_horizons == 3 and without.value == whole.value


def test_an_unreadable_checkpoint_is_named_with_the_remedy(scenario, tmp_path):
    optimum(scenario, checkpoint=tmp_path, **ARGS)
    files = sorted(tmp_path.glob("lp-*.npz"))
    bad = files[-1]
    bad.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(OptimumError, match=rf"checkpoint {bad} is unreadable .*delete it"):
        optimum(scenario, checkpoint=tmp_path, **ARGS)
    # a whole file that lacks a field (written by hand, or by other code) is refused by name too
    with np.load(files[0]) as z:
        kept = {k: z[k] for k in z.files if k != "row_dual"}
    with open(bad, "wb") as f:
        np.savez(f, **kept)
    with pytest.raises(OptimumError, match=rf"checkpoint {bad} lacks row_dual; delete it"):
        optimum(scenario, checkpoint=tmp_path, **ARGS)
    # another LP's solution under this LP's name is refused by its sizes
    with np.load(files[0]) as z:
        other = {k: z[k] for k in z.files}
    with open(bad, "wb") as f:
        np.savez(f, **{**other, "x": other["x"][:-1]})
    with pytest.raises(OptimumError, match=rf"checkpoint {bad} holds \({other['x'].size - 1},\) column values .*"
                                           "delete it"):
        optimum(scenario, checkpoint=tmp_path, **ARGS)


def test_a_key_must_be_a_digest(tmp_path):
    from sim_core.optimum.checkpoint import Checkpoints

    with pytest.raises(OptimumError, match="32 hex digits"):
        Checkpoints(tmp_path, error=OptimumError).path("../../etc/passwd")


def test_the_key_is_the_digest_of_what_highs_receives():
    """The key is sha256 over HiGHS's settings, the sizes and each array's dtype, shape and bytes, as the module
    declares, so a folder written before stays readable while the LPs are the same; any array changed, even by
    one value or by its dtype alone, gives another key."""
    import hashlib
    import types

    import highspy

    from gridshift.hashing import canonical_json
    from sim_core.optimum.checkpoint import LP_ARRAYS, lp_key

    lp = types.SimpleNamespace(
        n_col=3, n_row=2, col_cost=np.array([1.0, 2.0, 3.0]), col_lower=np.zeros(3), col_upper=np.full(3, np.inf),
        row_lower=np.array([1.0, 0.0]), row_upper=np.array([np.inf, 4.0]), start=np.array([0, 2, 3], np.int32),
        index=np.array([0, 1, 0], np.int32), value=np.array([1.0, 1.0, 2.0]))
    h = hashlib.sha256(canonical_json({"highs": highspy.Highs().version(), "solver": "choose", "threads": 1,
                                       "n_col": 3, "n_row": 2}))
    for name in LP_ARRAYS:
        a = getattr(lp, name)
        h.update(f"{name}:{a.dtype.str}:{a.shape}".encode())
        h.update(a.tobytes())
    assert lp_key(lp, "choose", 1) == h.hexdigest()[:32]
    assert lp_key(lp, "ipm", 1) != lp_key(lp, "choose", 1)
    other = types.SimpleNamespace(**{**vars(lp), "value": np.array([1.0, 1.0, 2.5])})
    assert lp_key(other, "choose", 1) != lp_key(lp, "choose", 1)
    retyped = types.SimpleNamespace(**{**vars(lp), "start": lp.start.astype(np.int64)})
    assert lp_key(retyped, "choose", 1) != lp_key(lp, "choose", 1)
