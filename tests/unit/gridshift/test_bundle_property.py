"""Property: any bundle, however hostile its values, is refused cleanly or simulated to a finite,
energy-conserving result — never a crash, never a NaN total.

Hypothesis writes small bundles whose task, network and datacenter values are drawn from
strategies that include NaN, ±inf, negatives, zeros and 1e300. CI runs the suite with
``NUMBA_BOUNDSCHECK=1``, where any out-of-range index in a kernel becomes an IndexError (a failure
here) instead of silent memory corruption.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sim_core
from gridshift.bundle import BundleError
from sim_core.testing import LOC3, TZ3, write_bundle

HOSTILE = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from([0.0, -0.0, -1.0, 1e-300, 1e300, -1e300, math.inf, -math.inf, math.nan, 1e9, 5e8]),
)
SANE = {
    "duration_s": st.floats(60.0, 3e5), "cpu_cores": st.floats(0.0, 96.0), "gpus": st.floats(0.0, 8.0),
    "mem_gb": st.floats(0.0, 512.0), "gpu_mem_gb": st.floats(0.0, 80.0), "bandwidth_gb": st.floats(0.0, 5e3),
}
N = 12


@st.composite
def task_columns(draw):
    """Mostly sane columns, with a few cells replaced by hostile values."""
    cols = {c: np.array(draw(st.lists(s, min_size=N, max_size=N))) for c, s in SANE.items()}
    for _ in range(draw(st.integers(0, 4))):
        c = draw(st.sampled_from(sorted(SANE)))
        cols[c][draw(st.integers(0, N - 1))] = draw(HOSTILE)
    cols["arrival_ts_utc"] = np.sort(np.array(draw(st.lists(st.floats(0.0, 95 * 900.0), min_size=N, max_size=N))))
    return cols


def run_or_refuse(path) -> None:
    try:
        sc = sim_core.load(path)
    except BundleError:
        return
    for policy in ("local_only", "lowest_carbon", "round_robin", "defer_to_greener"):
        r = sim_core.run(sc, policy, seed=0)
        for k, v in r.totals.items():
            if isinstance(v, float) and k not in ("pue", "wue_l_per_kwh"):
                assert math.isfinite(v), (policy, k, v)
        s = r.steps
        np.testing.assert_allclose(s["cooling_load_kw"].to_numpy(),
                                   (s["it_kw"] + s["crac_fan_kw"] + s["lighting_kw"]).to_numpy(), rtol=1e-12, atol=1e-9)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tasks=task_columns(), thr=st.one_of(st.floats(1.0, 1e4), HOSTILE), usd=st.one_of(st.floats(0.0, 0.2), HOSTILE),
       rtt=st.one_of(st.floats(0.0, 300.0), HOSTILE), weight=st.one_of(st.floats(0.0, 1.0), HOSTILE),
       cores=st.one_of(st.floats(1.0, 1e5), HOSTILE))
def test_hostile_bundles_are_refused_or_run_clean(tmp_path_factory, tasks, thr, usd, rtt, weight, cores):
    root = tmp_path_factory.mktemp("hostile")
    try:
        path = write_bundle(root, locations=LOC3, timezones=TZ3, population_weight=[0.4, weight, 0.3],
                            total_cores=[64.0, cores, 64.0], tasks=tasks, throughput_mbps=thr, usd_per_gb=usd,
                            rtt_ms=rtt)
    except ValueError:
        return  # JSON cannot even carry the value (NaN/inf weight or capacity): nothing to load
    run_or_refuse(path)
