"""One compile of a kernel serves every scenario's shape: the arrays a run hands the kernels have the same Numba
types (dtype, dimensions, layout) whether a scenario has one datacenter or several, so a one-site study after a
multi-site one compiles nothing and adds nothing to the cache (``engine.steps_major``)."""

from __future__ import annotations

import numba
import numpy as np
import pytest

import sim_core
from sim_core.engine.layout import steps_major
from sim_core.simulator import Prepared
from sim_core.testing import tiny_bundle


@pytest.mark.parametrize("lead", [(), (3,)])
@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_step_major_arrays_have_one_layout_whatever_the_datacenters(lead, dtype):
    types = {numba.typeof(steps_major((*lead, n_dc, 97), dtype)) for n_dc in (1, 2, 3, 40)}
    assert len(types) == 1 and next(iter(types)).layout == "A", types
    a = steps_major((*lead, 1, 97), dtype, fill=7)
    assert a.shape == (*lead, 1, 97) and (a == 7).all()  # the spare slot is not part of the view


@pytest.mark.parametrize("options", [{}, {"forecast": "seasonal_naive"}], ids=["default", "forecast"])
def test_a_one_site_run_hands_the_kernels_the_types_a_three_site_run_does(tmp_path, options):
    def arrays(n_dc):
        kw = {} if n_dc == 3 else dict(locations=["AA"], timezones=["UTC"], population_weight=[1.0])
        prep = Prepared(sim_core.load(tiny_bundle(tmp_path / str(n_dc), **kw)), 0, **options)
        return {name: getattr(prep, name) for name in ("tasks", "state", "ctx", "info")}

    one, three = arrays(1), arrays(3)
    for name, nt in one.items():
        differ = [f for f, a, b in zip(nt._fields, nt, three[name], strict=True) if numba.typeof(a) != numba.typeof(b)]
        assert not differ, (name, differ)
