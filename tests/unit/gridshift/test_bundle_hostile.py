"""Hostile bundles: each case the adversarial review found, refused by name before any kernel runs.

Every case is checked twice, through the two readers that share one code path: ``sim_core.load``
(raises the first problem) and ``gridshift.bundle.verify_bundle`` (lists them).
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
import pytest

import sim_core
from gridshift.bundle import BundleError, verify_bundle
from gridshift.errors import DataError
from tests.unit.gridshift.bundle_hostile import (
    nested,
    rewrite_datacenters,
    rewrite_file,
    rewrite_manifest,
    rewrite_parquet,
    set_value,
    valid_bundle,
)


def refused(bundle: Path, *, file: str, column: str | None = None, match: str = "") -> BundleError:
    """``sim_core.load`` and ``verify`` both refuse ``bundle``, naming ``file`` (and ``column``)."""
    with pytest.raises(BundleError) as info:
        sim_core.load(bundle)
    err = info.value
    assert isinstance(err, DataError) and Path(err.file).name == file, str(err)
    if column is not None:
        assert err.column == column, str(err)
    assert match in str(err), str(err)
    res = verify_bundle(bundle)
    assert not res.ok and any(Path(p.file).name == file for p in res.problems), res.problems
    return err


@pytest.fixture
def bundle(tmp_path):
    return valid_bundle(tmp_path / "b")


def test_the_valid_bundle_loads(bundle):
    assert verify_bundle(bundle).ok
    assert sim_core.load(bundle).n_tasks == 8


# ------------------------------------------------------------------ the loader is no looser than verify
def test_manifest_cannot_make_the_loader_hash_another_path(bundle):
    secret = Path("/etc/passwd")
    digest = hashlib.sha256(secret.read_bytes()).hexdigest() if secret.is_file() else "0" * 64
    for name in ("../../etc/passwd", str(secret)):
        rewrite_manifest(bundle, lambda m, n=name: m["files"].__setitem__(n, digest))
        err = refused(bundle, file="manifest.json", column="files", match="not a bundle file name")
        assert digest not in str(err)  # the other file was never hashed, so its hash cannot leak
        rewrite_manifest(bundle, lambda m, n=name: m["files"].pop(n))
    assert verify_bundle(bundle).ok


def test_symlinked_data_file_is_refused(bundle, tmp_path):
    target = tmp_path / "elsewhere.parquet"
    target.write_bytes((bundle / "tasks.parquet").read_bytes())
    (bundle / "tasks.parquet").unlink()
    (bundle / "tasks.parquet").symlink_to(target)
    refused(bundle, file="tasks.parquet", match="links are refused")


def test_extra_file_is_refused(bundle):
    (bundle / "evil.pkl").write_bytes(b"\x80\x04N.")
    refused(bundle, file="evil.pkl", match="unexpected entry")
    (bundle / "evil.pkl").unlink()
    (bundle / ".hidden").mkdir()
    refused(bundle, file=".hidden", match="unexpected entry")


@pytest.mark.parametrize("text, match", [
    ('{"format_version": NaN}', "non-finite"),
    ('{"format_version": 1, "format_version": 1}', "duplicated key"),
    ("[1, 2]", "not a JSON object"),
    ("\xff\xfe", "not valid JSON"),
    ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested deeper"),
    ('{"a": ' + "[" * 40 + "]" * 40 + "}", "nested deeper"),
])
def test_malformed_manifest_json_is_a_bundle_error(bundle, text, match):
    (bundle / "manifest.json").write_bytes(text.encode("latin-1"))
    refused(bundle, file="manifest.json", match=match)


@pytest.mark.parametrize("key", ["locations", "n_steps", "start_utc", "files", "bundle_id", "year"])
def test_missing_manifest_key_is_a_bundle_error(bundle, key):
    rewrite_manifest(bundle, lambda m: m.pop(key), resign=key != "bundle_id")
    with pytest.raises(BundleError):
        sim_core.load(bundle)
    assert not verify_bundle(bundle).ok


@pytest.mark.parametrize("key, value, match", [
    ("n_steps", 0, "n_steps"), ("n_steps", 10**9, "n_steps"), ("n_steps", 96.5, "n_steps"),
    ("n_steps", True, "n_steps"), ("step_s", 60, "step_s"), ("start_utc", "2023-01-01T00:07:00+00:00", "start_utc"),
    ("start_utc", "2023-01-01T00:00:00", "start_utc"), ("start_utc", "yesterday", "start_utc"),
    ("locations", ["AA", "AA", "CC"], "duplicated"), ("locations", ["../x", "BB", "CC"], "malformed"),
    ("locations", [], "locations"), ("year", 1e300, "year"), ("parameters", {"carbon_basis": 7}, "carbon_basis"),
])
def test_hash_valid_but_wrong_manifest_values(bundle, key, value, match):
    rewrite_manifest(bundle, lambda m: m.__setitem__(key, value))
    err = refused(bundle, file="manifest.json")
    assert match in str(err)


def test_a_nested_manifest_value_is_refused_by_depth_before_any_recursion(bundle):
    rewrite_manifest(bundle, lambda m: m["parameters"].__setitem__("x", nested(200)))
    refused(bundle, file="manifest.json", match="nested deeper")


# ------------------------------------------------------------------ tasks
@pytest.mark.parametrize("column, value", [
    ("duration_s", math.inf), ("duration_s", 0.0), ("duration_s", -5.0), ("duration_s", math.nan),
    ("duration_s", 1e300), ("cpu_cores", -1.0), ("gpus", math.inf), ("mem_gb", -0.5),
    ("gpu_mem_gb", math.nan), ("bandwidth_gb", -2.0), ("bandwidth_gb", 1e300),
])
def test_task_values_outside_the_contract(bundle, column, value):
    rewrite_parquet(bundle, "tasks.parquet", set_value(column, 3, value))
    err = refused(bundle, file="tasks.parquet", column=column)
    assert err.rows == [3]


def test_five_infinite_durations_name_their_rows(bundle):
    def f(df):
        d = df["duration_s"].to_numpy().copy()
        d[:5] = np.inf
        return df.with_columns(duration_s=d)

    rewrite_parquet(bundle, "tasks.parquet", f)
    err = refused(bundle, file="tasks.parquet", column="duration_s", match="5 missing or non-finite")
    assert err.rows == [0, 1, 2, 3, 4] and err.values == [math.inf] * 5


def test_task_order_ids_and_window(bundle):
    import polars as pl

    rewrite_parquet(bundle, "tasks.parquet", lambda df: df.reverse())
    refused(bundle, file="tasks.parquet", column="arrival_ts_utc", match="not sorted")
    rewrite_parquet(bundle, "tasks.parquet", lambda df: df.reverse().with_columns(task_id=pl.lit(7, pl.Int64)))
    assert refused(bundle, file="tasks.parquet", column="task_id", match="not unique").values == [7]
    with pytest.raises(BundleError, match="not unique") as info:  # (a chunked run's loader checks them in place)
        sim_core.load(bundle, lazy_tasks=True)
    assert info.value.column == "task_id" and info.value.values == [7]
    rewrite_parquet(bundle, "tasks.parquet", lambda df: df.with_columns(
        task_id=pl.int_range(0, df.height, dtype=pl.Int64),
        arrival_ts_utc=pl.col("arrival_ts_utc") + pl.duration(days=400)))
    refused(bundle, file="tasks.parquet", column="arrival_ts_utc", match="outside the bundle window")


def test_task_column_of_the_wrong_type_or_missing(bundle):
    import polars as pl

    rewrite_parquet(bundle, "tasks.parquet", lambda df: df.with_columns(pl.col("cpu_cores").cast(pl.Int32)))
    refused(bundle, file="tasks.parquet", column="cpu_cores", match="dtype")
    rewrite_parquet(bundle, "tasks.parquet", lambda df: df.drop("cpu_cores"))
    refused(bundle, file="tasks.parquet", column="cpu_cores", match="missing column")
    rewrite_file(bundle, "tasks.parquet", b"PAR1" + b"\0" * 64 + b"PAR1")
    refused(bundle, file="tasks.parquet", match="cannot read")


# ------------------------------------------------------------------ task flexibility (format 2)
@pytest.mark.parametrize("column, value", [
    ("max_delay_s", -1.0), ("max_delay_s", math.inf), ("max_delay_s", 2e9), ("checkpoint_s", -0.5),
    ("checkpoint_s", 1e5), ("checkpoint_s", math.nan), ("min_scale", 0.0), ("min_scale", 1.5), ("min_scale", -1.0),
    ("min_scale", 1e-17),  # (passed verify; carbonscaler then divided by its zero speed, 1 + 1 x (1e-17 - 1) = 0)
    ("max_scale", 0.5), ("max_scale", 1e4), ("max_scale", math.inf), ("marginal_throughput", 1.01),
    ("marginal_throughput", -0.1), ("marginal_throughput", math.nan),
])
def test_task_flexibility_outside_the_contract(bundle, column, value):
    rewrite_parquet(bundle, "tasks.parquet", set_value(column, 3, value))
    err = refused(bundle, file="tasks.parquet", column=column)
    assert err.rows == [3]
    assert err.values[0] == value or (math.isnan(value) and math.isnan(err.values[0]))


def test_task_flexibility_columns_typed_and_consistent(bundle):
    import polars as pl

    # a checkpoint overhead on a task that can be neither paused nor rescaled: a column mix-up
    rewrite_parquet(bundle, "tasks.parquet", set_value("checkpoint_s", 2, 30.0))
    err = refused(bundle, file="tasks.parquet", column="checkpoint_s", match="neither interruptible nor elastic")
    assert err.rows == [2] and err.values == [30.0]
    # ... which is fine on an interruptible or an elastic task
    rewrite_parquet(bundle, "tasks.parquet", set_value("interruptible", 2, True))
    assert verify_bundle(bundle).ok
    rewrite_parquet(bundle, "tasks.parquet", lambda df: df.with_columns(
        pl.Series("interruptible", [False] * df.height),
        pl.Series("max_scale", [1.0, 1.0, 2.0] + [1.0] * (df.height - 3))))
    assert verify_bundle(bundle).ok
    rewrite_parquet(bundle, "tasks.parquet", lambda df: df.with_columns(pl.col("interruptible").cast(pl.Int8)))
    refused(bundle, file="tasks.parquet", column="interruptible", match="dtype")
    rewrite_parquet(bundle, "tasks.parquet", lambda df: df.drop("interruptible"))
    refused(bundle, file="tasks.parquet", column="interruptible", match="missing column")


def test_task_flags_cannot_be_null(bundle):
    import polars as pl

    rewrite_parquet(bundle, "tasks.parquet", lambda df: df.with_columns(
        interruptible=pl.when(pl.int_range(pl.len()) == 4).then(None).otherwise(pl.col("interruptible"))))
    err = refused(bundle, file="tasks.parquet", column="interruptible", match="null")
    assert err.rows == [4]


# ------------------------------------------------------------------ signals
@pytest.mark.parametrize("column, value", [
    ("carbon_g_per_kwh", -1.0), ("carbon_g_per_kwh", math.nan), ("price_usd_per_mwh", 1e300),
    ("price_usd_per_mwh", -1e5), ("temp_c", math.inf), ("rh_pct", 101.0), ("wetbulb_c", 40.0),
])
def test_signal_values_outside_the_contract(bundle, column, value):
    rewrite_parquet(bundle, "signals.parquet", set_value(column, 10, value))
    refused(bundle, file="signals.parquet", column=column)


def test_signals_off_the_grid_or_out_of_order(bundle):
    import polars as pl

    rewrite_parquet(bundle, "signals.parquet", lambda df: df.with_columns(
        ts_utc=pl.col("ts_utc") + pl.duration(minutes=5)))
    refused(bundle, file="signals.parquet", column="ts_utc", match="grid")
    rewrite_parquet(bundle, "signals.parquet", lambda df: df.with_columns(
        ts_utc=pl.col("ts_utc") - pl.duration(minutes=5)).reverse())
    refused(bundle, file="signals.parquet", column="location", match="manifest order")
    rewrite_parquet(bundle, "signals.parquet", lambda df: df.head(10))
    refused(bundle, file="signals.parquet", match="rows, expected")


# ------------------------------------------------------------------ network
@pytest.mark.parametrize("column, value", [
    ("throughput_mbps", -5.0), ("throughput_mbps", 0.0), ("usd_per_gb", -0.1), ("usd_per_gb", math.nan),
    ("rtt_ms", -1.0), ("rtt_ms", math.inf),
])
def test_network_values_outside_the_contract(bundle, column, value):
    rewrite_parquet(bundle, "network.parquet", set_value(column, 1, value))
    refused(bundle, file="network.parquet", column=column)


def test_network_pairs_missing_or_repeated(bundle):
    import polars as pl

    rewrite_parquet(bundle, "network.parquet", lambda df: df.head(5))
    refused(bundle, file="network.parquet", match="appears 0 times")
    rewrite_parquet(bundle, "network.parquet", lambda df: pl.concat([df, df.head(1)]))
    refused(bundle, file="network.parquet", match="appears 2 times")


# ------------------------------------------------------------------ datacenters
@pytest.mark.parametrize("key, value", [
    ("population_weight", -1.0), ("population_weight", 1e300), ("total_cores", 0), ("total_cores", -64),
    ("total_mem_gb", 1e300), ("total_gpus", True), ("total_gpus", "16"), ("timezone", "Mars/Olympus"),
    ("timezone", ""), ("location", "ZZ"),
])
def test_datacenter_values_outside_the_contract(bundle, key, value):
    def f(dcs):
        dcs[1][key] = value
    rewrite_datacenters(bundle, f)
    refused(bundle, file="datacenters.json", column=key)


@pytest.mark.parametrize("mutate, column, match", [
    (lambda dcs: dcs[0]["physics"].__setitem__("chiller_cop_water", "fast"), "physics.chiller_cop_water",
     "chiller_cop_water must be a number in [1, 12.3]"),
    (lambda dcs: dcs[0]["physics"].__setitem__("warp_drive", 1), "physics", "unknown"),
    (lambda dcs: [d.__setitem__("population_weight", 0.0) for d in dcs], "population_weight", "sum to 0"),
    (lambda dcs: dcs.pop(), "datacenters", "must list"),
    (lambda dcs: dcs[0].__setitem__("rack_of_doom", 1), "rack_of_doom", "unknown keys"),
])
def test_datacenters_physics_and_weights(bundle, mutate, column, match):
    rewrite_datacenters(bundle, mutate)
    refused(bundle, file="datacenters.json", column=column, match=match)


@pytest.mark.parametrize("key, value, match", [
    # each of these exported, passed verify and ran to a traceback or to negative / NaN totals
    ("chw_pump_design_frac", -1.0, "chw_pump_design_frac = -1.0 is outside its range [0, 0.2]"),
    ("chiller_cop_water", 0.0, "chiller_cop_water = 0.0 is outside its range [1, 12.3]"),
    ("supply_air_c", 1e300, "supply_air_c = 1e+300 is outside its range [5, 45]"),
    ("air_density_kg_m3", 0.0, "air_density_kg_m3 = 0.0 is outside its range [0.5, 1.5]"),
    ("pump_min_flow_ratio", 1e300, "pump_min_flow_ratio = 1e+300 is outside its range [0.01, 1]"),
    # a joint rule names the curve by its first coefficient and lists every coefficient with its value
    ("chiller_cap_c2", 10.0, "chiller_cap_c2 = 10.0: CapRatio(dT) spans [0.9448, 1000]"),
])
def test_physics_outside_its_declared_range(bundle, key, value, match):
    """A hash-valid bundle whose physics break a declared range (gridshift.dc_params.PARAM_RANGES) is refused at
    verify and load, naming the file, the entry, the field, its value and its range."""
    rewrite_datacenters(bundle, lambda dcs: dcs[1]["physics"].__setitem__(key, value))
    column = "physics.chiller_cap_c0" if key.startswith("chiller_cap_") else f"physics.{key}"
    err = refused(bundle, file="datacenters.json", column=column, match=match)
    assert err.rows == [1]


@pytest.mark.parametrize("mutate", [
    lambda dcs: dcs[1].__setitem__("population_weight", float("nan")),
    lambda dcs: dcs[0]["physics"].__setitem__("chiller_cop_water", float("inf")),
])
def test_non_finite_numbers_in_datacenters_json_are_not_json(bundle, mutate):
    rewrite_datacenters(bundle, mutate)
    refused(bundle, file="datacenters.json", match="is not valid JSON (non-finite numbers are not allowed)")


def test_datacenters_json_nested(bundle):
    rewrite_file(bundle, "datacenters.json", b'{"datacenters": [' + b"[" * 50 + b"]" * 50 + b"]}")
    refused(bundle, file="datacenters.json", match="nested deeper")


@pytest.mark.parametrize("mutate", [
    lambda m: m.__setitem__("locations", "AA"), lambda m: m.__setitem__("locations", [1, 2, 3]),
    lambda m: m.__setitem__("files", []), lambda m: m["files"].__setitem__("tasks.parquet", 5),
    lambda m: m.__setitem__("format_version", "1"), lambda m: m.__setitem__("parameters", []),
    lambda m: m.__setitem__("n_steps", None),
])
def test_no_error_of_another_type_escapes(bundle, mutate):
    """Whatever is wrong, the readers raise or report a BundleError (never KeyError, ZeroDivisionError,
    RecursionError or a polars error): manifest edits of the kinds that used to escape as raw exceptions."""
    rewrite_manifest(bundle, mutate)
    with pytest.raises(BundleError):
        sim_core.load(bundle)
    assert not verify_bundle(bundle).ok


# ------------------------------------------------------------------ tasks read by row groups
def test_tasks_read_by_row_groups_equal_the_file_and_faults_name_global_rows(bundle):
    """``read_tasks`` fills its arrays one Parquet row group at a time: 300 k tasks (3 row groups of
    2^17) load exactly as the file holds them, and a fault in a later row group names its row in the file."""
    import polars as pl

    from gridshift.parquet import ROW_GROUP_ROWS

    n = 300_000
    rng = np.random.default_rng(3)

    def big(df: pl.DataFrame) -> pl.DataFrame:
        row = df.head(1)
        return pl.concat([row] * n).with_columns(
            task_id=pl.Series(rng.permutation(n).astype(np.int64)),
            arrival_ts_utc=pl.col("arrival_ts_utc") + pl.duration(microseconds=pl.int_range(0, n) * 7),
            duration_s=pl.Series(rng.uniform(60.0, 7200.0, n)),
            mem_gb=pl.Series(rng.uniform(0.5, 64.0, n)),
        )

    rewrite_parquet(bundle, "tasks.parquet", big)
    df = pl.read_parquet(bundle / "tasks.parquet")
    import pyarrow.parquet as pq

    assert pq.ParquetFile(bundle / "tasks.parquet").num_row_groups == -(-n // ROW_GROUP_ROWS) == 3
    s = sim_core.load(bundle)
    t0 = int(s.start_utc.timestamp()) * 1_000_000
    assert np.array_equal(s.arrival_s, (df["arrival_ts_utc"].dt.epoch("us").to_numpy() - t0).astype(np.float64) / 1e6)
    for c in ("task_id", "duration_s", "mem_gb", "max_scale", "interruptible"):
        assert np.array_equal(getattr(s, c), df[c].to_numpy()), c
        assert getattr(s, c).flags.c_contiguous and getattr(s, c).flags.writeable

    def nulls(d: pl.DataFrame) -> pl.DataFrame:
        i = pl.int_range(pl.len())
        return d.with_columns(mem_gb=pl.when(i.is_in([200_001, 299_999, 5])).then(None).otherwise(pl.col("mem_gb")))

    rewrite_parquet(bundle, "tasks.parquet", nulls)
    err = refused(bundle, file="tasks.parquet", column="mem_gb", match="3 null value(s)")
    assert err.rows == [5, 200_001, 299_999]
    rewrite_parquet(bundle, "tasks.parquet", lambda d: d.with_columns(
        mem_gb=pl.col("mem_gb").fill_null(1.0),
        arrival_ts_utc=pl.when(pl.int_range(pl.len()) == 2 * ROW_GROUP_ROWS).then(pl.col("arrival_ts_utc").first())
        .otherwise(pl.col("arrival_ts_utc"))))
    err = refused(bundle, file="tasks.parquet", column="arrival_ts_utc", match="not sorted")
    assert err.rows == [2 * ROW_GROUP_ROWS]
    rewrite_parquet(bundle, "tasks.parquet", lambda d: d.with_columns(
        arrival_ts_utc=pl.col("arrival_ts_utc").sort(),
        task_id=pl.when(pl.int_range(pl.len()) == 250_000).then(pl.col("task_id").first())
        .otherwise(pl.col("task_id"))))
    refused(bundle, file="tasks.parquet", column="task_id", match="not unique")


def test_tasks_footer_read_once_per_load_and_the_arrays_equal_the_file(bundle, monkeypatch):
    """``read_tasks`` opens tasks.parquet once (one footer read: schema and row groups) for both passes, and
    reads no separate schema; what it returns is the file's columns exactly."""
    import polars as pl
    import pyarrow.parquet as pq

    from gridshift.bundle import content
    from gridshift.bundle.integrity import read_manifest

    header = content.read_header(read_manifest(bundle), str(bundle / "manifest.json"))
    opened, schemas = [], []
    real_open, real_schema = pq.ParquetFile, pl.read_parquet_schema

    def counted_open(path, *a, **k):
        opened.append(Path(path).name)
        return real_open(path, *a, **k)

    def counted_schema(path, *a, **k):
        schemas.append(Path(path).name)
        return real_schema(path, *a, **k)

    monkeypatch.setattr(pq, "ParquetFile", counted_open)
    monkeypatch.setattr(pl, "read_parquet_schema", counted_schema)
    t = content.read_tasks(bundle, header)
    assert opened == ["tasks.parquet"] and schemas == []
    monkeypatch.undo()
    df = pl.read_parquet(bundle / "tasks.parquet")
    t0 = int(header.start_utc.timestamp()) * 1_000_000
    assert np.array_equal(t["arrival_s"], (df["arrival_ts_utc"].dt.epoch("us").to_numpy() - t0) / 1e6)
    assert set(t) == {"arrival_s", *(c for c in df.columns if c != "arrival_ts_utc")}
    for c in t:
        if c != "arrival_s":
            assert np.array_equal(t[c], df[c].to_numpy()), c
