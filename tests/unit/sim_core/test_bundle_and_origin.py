import datetime as dt
import json

import numpy as np
import pytest

import sim_core
from gridshift.hashing import compute_bundle_id
from sim_core import origin as O
from sim_core.scenario import BundleError
from sim_core.testing import LOC3, TZ3, tiny_bundle


def test_load_roundtrip(tmp_path):
    p = tiny_bundle(tmp_path)
    sc = sim_core.load(p)
    assert sc.bundle_id == p.name and len(sc.bundle_id) == 16
    assert sc.locations == LOC3 and sc.n_steps == 96 and sc.n_tasks == 8
    assert sc.carbon_g_per_kwh.shape == (3, 96)
    assert sc.arrival_s[-1] == pytest.approx(6 * 3600)
    # local hours from the IANA zone: Bogota UTC-5, Lagos UTC+1, Singapore UTC+8 at 00:00 UTC
    assert list(sc.local_hour[:, 0]) == [19, 1, 8]


def test_local_hour_follows_dst(tmp_path):
    p = sim_core.testing.write_bundle(tmp_path, locations=["DE"], timezones=["Europe/Berlin"], n_steps=35040)
    sc = sim_core.load(p)
    k_winter = int((dt.datetime(2023, 1, 15, 12) - dt.datetime(2023, 1, 1)).total_seconds() // 900)
    k_summer = int((dt.datetime(2023, 7, 15, 12) - dt.datetime(2023, 1, 1)).total_seconds() // 900)
    assert sc.local_hour[0, k_winter] == 13 and sc.local_hour[0, k_summer] == 14


def test_flipped_byte_names_file(tmp_path):
    p = tiny_bundle(tmp_path)
    f = p / "tasks.parquet"
    b = bytearray(f.read_bytes())
    b[len(b) // 2] ^= 0xFF
    f.write_bytes(bytes(b))
    with pytest.raises(BundleError, match="tasks.parquet"):
        sim_core.load(p)


def test_missing_file_names_file(tmp_path):
    p = tiny_bundle(tmp_path)
    (p / "network.parquet").unlink()
    with pytest.raises(BundleError, match="network.parquet"):
        sim_core.load(p)


def test_wrong_format_version(tmp_path):
    p = tiny_bundle(tmp_path)
    m = json.loads((p / "manifest.json").read_text())
    m["format_version"] = 3  # (the current version is 2)
    m["bundle_id"] = compute_bundle_id(m)
    (p / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(BundleError, match=r"(?s)format_version 3 is not supported.*manifest\.json"):
        sim_core.load(p)


def test_version_1_bundle_is_refused_with_rebuild_advice(tmp_path):
    """A version-1 bundle (no task flexibility columns) is refused, saying to rebuild it."""
    p = tiny_bundle(tmp_path)
    m = json.loads((p / "manifest.json").read_text())
    m["format_version"] = 1
    m["bundle_id"] = compute_bundle_id(m)
    (p / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(BundleError, match=r"(?s)format_version 1 is not supported \(expected 2\): a version-1 "
                                          r"bundle has no task flexibility columns; rebuild it.*manifest\.json"):
        sim_core.load(p)


def test_tampered_manifest(tmp_path):
    p = tiny_bundle(tmp_path)
    m = json.loads((p / "manifest.json").read_text())
    m["year"] = 2024
    (p / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(BundleError, match="bundle_id"):
        sim_core.load(p)


def test_worked_example_probabilities_exact():
    # 14:00 UTC: local hours 9 (UTC-5), 15 (UTC+1), 22 (UTC+8)
    p = O.probabilities([0.4, 0.5, 0.3], np.array([9, 15, 22]))
    assert p[0] == 0.4 / 0.99 and p[1] == 0.5 / 0.99 and p[2] == pytest.approx(0.09 / 0.99, abs=1e-15)
    assert np.round(p, 3).tolist() == [0.404, 0.505, 0.091]


def test_worked_example_from_bundle_time_zones(tmp_path):
    sc = sim_core.load(tiny_bundle(tmp_path))
    k = 14 * 4  # 14:00 UTC
    p = O.probabilities(sc.population_weight, sc.local_hour[:, k])
    np.testing.assert_allclose(p, [0.4 / 0.99, 0.5 / 0.99, 0.09 / 0.99], rtol=0, atol=1e-15)


def test_sampled_frequencies_converge():
    probs = O.probabilities([0.4, 0.5, 0.3], np.array([[9], [15], [22]]))
    n = 400_000
    o = O.sample_origins(np.random.default_rng(1), np.zeros(n, dtype=np.int64), probs)
    freq = np.bincount(o, minlength=3) / n
    np.testing.assert_allclose(freq, [0.4 / 0.99, 0.5 / 0.99, 0.09 / 0.99], atol=3e-3)


def test_activity_configurable():
    a = O.activity(np.arange(24), start_h=9, end_h=17, on=1.0, off=0.1)
    assert a[8] == 0.1 and a[9] == 1.0 and a[16] == 1.0 and a[17] == 0.1


def test_run_origins_follow_local_time(tmp_path):
    n = 20000
    arr = np.full(n, 14 * 3600.0)
    p = tiny_bundle(tmp_path, tasks={"arrival_ts_utc": arr, "duration_s": np.full(n, 900.0),
                                     "cpu_cores": np.full(n, 0.001), "mem_gb": np.full(n, 0.001)},
                    total_cores=1e6, total_mem_gb=1e6)
    r = sim_core.run(p, "local_only", seed=3)
    freq = r.tasks["origin"].value_counts().sort("origin")["count"].to_numpy() / n
    np.testing.assert_allclose(freq, [0.4 / 0.99, 0.5 / 0.99, 0.09 / 0.99], atol=0.012)
    _ = TZ3


def _origins_reference(rng, step_index, probs, first=0):
    """The inverse CDF written out in numpy (the definition the kernel must reproduce exactly)."""
    u = rng.random(first + step_index.shape[0])[first:]
    cum = np.cumsum(probs, axis=0)
    cum[-1] = 1.0
    return sum((u >= cum[d, step_index]).astype(np.int32) for d in range(probs.shape[0] - 1))


@pytest.mark.parametrize("n_dc", [1, 2, 7, 131])
def test_sample_origins_equal_the_inverse_cdf(n_dc):
    # many sites, uneven probabilities (some zero), tasks spread over a window of steps, skipped draws
    g = np.random.default_rng(n_dc)
    w = g.random((n_dc, 300)) * (g.random((n_dc, 300)) > 0.2)
    w[0] += 1e-3
    probs = w / w.sum(axis=0)
    steps = np.sort(g.integers(40, 260, 20_000))
    for first in (0, 12_345):
        got = O.sample_origins(np.random.default_rng(9), steps, probs, first=first)
        want = _origins_reference(np.random.default_rng(9), steps, probs, first=first)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, want)
        assert got.min() >= 0 and got.max() <= n_dc - 1
