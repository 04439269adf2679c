"""The data-movement flags of ``run``, ``compare`` and ``optimum`` (``--locality/--no-locality``,
``--locality-retention-days``, ``--transfer-kwh-per-gb``): each reaches the run and changes what it should,
a bad value is refused by the run options' own range (its name, value and range; exit 2, nothing written),
and ``compare`` names the setting in its printed assumptions and in compare.json."""

from __future__ import annotations

import json
import re
from dataclasses import asdict

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

import sim_core
from gridshift import run_options as declared
from gridshift_cli import make_app
from pipelines.workload import derive as wd
from sim_core import options as run_options
from sim_core.testing import write_bundle
from tests.cli_text import plain

P = wd.DeriveParams()
N_STEPS = 2 * 96
ENV = {"COLUMNS": "200", "NO_COLOR": "1"}


def _moved_gb(name: str) -> float:
    """The GB a task of catalogue entry ``name`` carries (its dataset + its checkpoint, the derivation's sum)."""
    data, params = next((d, m) for n, d, m in P.ai_workloads if n == name)
    return data + params * 1e6 * P.ai_checkpoint_bytes_per_param / 1e9


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """Two sites, every task from AA (400 g/kWh) and BB far greener (50 g/kWh): 40 one-core tasks an hour apart
    reading ImageNet or SQuAD in turn, so the same dataset is read again two hours later."""
    n = 40
    bw = np.where(np.arange(n) % 2 == 0, _moved_gb("imagenet1k-resnet50"), _moved_gb("squad11-bert-base"))
    tasks = {"task_id": np.arange(n, dtype=np.int64), "arrival_ts_utc": np.arange(n) * 3600.0 + 60.0,
             "duration_s": np.full(n, 1800.0), "cpu_cores": np.ones(n), "gpus": np.zeros(n),
             "mem_gb": np.ones(n), "gpu_mem_gb": np.zeros(n), "bandwidth_gb": bw}
    params = {"carbon_basis": "lca", "provider": "synthetic", "seed": 0,
              "workload_params": json.loads(json.dumps(asdict(P)))}
    return write_bundle(tmp_path_factory.mktemp("flags"), locations=["AA", "BB"], timezones=["UTC", "UTC"],
                        population_weight=[1.0, 0.0], n_steps=N_STEPS,
                        signals={"carbon_g_per_kwh": np.array([[400.0] * N_STEPS, [50.0] * N_STEPS])},
                        tasks=tasks, usd_per_gb=np.array([[0.0, 0.09], [0.09, 0.0]]), throughput_mbps=1000.0,
                        rtt_ms=50.0, parameters=params)


def _invoke(*args):
    return CliRunner().invoke(make_app(), [*map(str, args)], env=ENV)


def _run_transfers(bundle, out, *flags) -> pl.DataFrame:
    res = _invoke("run", bundle, "--policy", "lowest_carbon", "--out", out, *flags)
    assert res.exit_code == 0, res.output
    return pl.read_parquet(out / "transfers.parquet")


@pytest.mark.parametrize("command", ["run", "compare", "optimum"])
def test_the_command_lines_flags_are_the_run_options(command):
    """Every flag of a run option is generated from its declaration (gridshift.run_options): its default and
    presets are the options' own, and --help imports no kernel module."""
    res = CliRunner().invoke(make_app(), [command, "--help"], env=ENV)
    assert res.exit_code == 0, res.output
    text = plain(res.output)
    for o in declared.for_command(command):
        assert o.cli_flag.split("/")[0] in text, o.name
    assert "--locality-retention-days" in text and f"[default: {run_options.LOCALITY_RETENTION_DAYS}]" in text
    assert f"[default: {run_options.DEFAULT_TRANSFER_PRESET}]" in text
    assert all(p in text for p in run_options.TRANSFER_KWH_PER_GB_PRESETS)
    assert run_options.Options().locality is True


def test_run_flags_change_the_gb_moved_and_their_energy(bundle, tmp_path):
    bw = pl.read_parquet(bundle / "tasks.parquet")["bandwidth_gb"]
    on = _run_transfers(bundle, tmp_path / "on")
    off = _run_transfers(bundle, tmp_path / "off", "--no-locality")
    assert on.height == off.height == 40  # every task ran at the greener site: the same moves
    # without locality every move ships its dataset again: exactly the tasks' sizes
    assert off["bandwidth_gb"].sum() == pytest.approx(bw.sum(), rel=1e-12)
    # with it each dataset moves once (later reads of it within 30 days ship only their checkpoint)
    assert on["bandwidth_gb"].sum() < 0.1 * off["bandwidth_gb"].sum()
    # a retention (1 h) shorter than the two hours between two reads of a dataset: every move ships it again
    short = _run_transfers(bundle, tmp_path / "short", "--locality-retention-days", 1 / 24)
    np.testing.assert_array_equal(short.sort("task_id")["bandwidth_gb"].to_numpy(),
                                  off.sort("task_id")["bandwidth_gb"].to_numpy())
    # network energy per GB: a number, or a preset by name (the default: aslan2018-2023, 0.00375 kWh/GB)
    gb = on["bandwidth_gb"].to_numpy()
    np.testing.assert_array_equal(on["energy_kwh"].to_numpy(), gb * 0.06 * 0.5 ** 4)
    for flag, kwh in (("0.06", 0.06), ("aslan2018-2015", 0.06), ("none", 0.0), ("1.5", 1.5)):
        x = _run_transfers(bundle, tmp_path / flag, "--transfer-kwh-per-gb", flag)
        np.testing.assert_array_equal(x["energy_kwh"].to_numpy(), x["bandwidth_gb"].to_numpy() * kwh)
    res = _invoke("run", bundle, "--policy", "lowest_carbon", "--no-locality", "--transfer-kwh-per-gb", "0.06")
    assert res.exit_code == 0, res.output
    assert "data locality: off, every move ships its dataset; transfer energy: 0.06 kWh/GB" in plain(res.output)


def test_compare_records_the_flags_in_its_assumptions(bundle, tmp_path):
    args = ("compare", bundle, "--policies", "local_only,lowest_carbon", "--seeds", "0", "--no-store",
            "--no-figures")
    on = _invoke(*args, "--out", tmp_path / "on")
    off = _invoke(*args, "--out", tmp_path / "off", "--no-locality", "--transfer-kwh-per-gb", "aslan2018-2015")
    assert on.exit_code == 0 and off.exit_code == 0, on.output + off.output
    assert "data locality: on, replicas kept 30.0 days after last use" in plain(on.output)
    assert "data locality: off, every move ships its dataset" in plain(off.output)
    assert "transfer energy: 0.06 kWh/GB" in plain(off.output)
    saved = {k: json.loads((tmp_path / k / "compare.json").read_text()) for k in ("on", "off")}
    assert saved["on"]["assumptions"]["data locality"] == "on, replicas kept 30.0 days after last use"
    assert saved["off"]["assumptions"]["data locality"] == "off, every move ships its dataset"
    assert saved["off"]["assumptions"]["transfer energy"].startswith("0.06 kWh/GB")
    assert saved["off"]["options"]["locality"] is False and saved["off"]["options"]["transfer_kwh_per_gb"] == 0.06
    # the result moves with them: lowest_carbon's transfer energy, 16x the kWh/GB on more GB
    kwh = {k: pl.read_parquet(tmp_path / k / "runs.parquet").filter(pl.col("policy") == "lowest_carbon")
           ["transfer_kwh"][0] for k in ("on", "off")}
    assert kwh["off"] > 16 * kwh["on"] > 0


def test_optimum_takes_the_flags(bundle):
    """The bound is sim_core.optimum's under the same options, which it names."""
    res = _invoke("optimum", bundle, "--days", "1", "--no-locality", "--transfer-kwh-per-gb", "0.06")
    assert res.exit_code == 0, res.output
    assert "data locality: off, every move ships its dataset; transfer energy: 0.06 kWh/GB" in plain(res.output)
    want = sim_core.optimum.optimum(bundle, days=1, locality=False, transfer_kwh_per_gb=0.06)
    assert want.options["locality"] is False and want.options["transfer_kwh_per_gb"] == 0.06
    printed = float(re.search(r"^bound ([0-9.]+) ", res.output, flags=re.M).group(1))
    assert printed == pytest.approx(want.value, abs=5e-7) and want.value > 0
    res = _invoke("optimum", bundle, "--days", "1", "--locality-retention-days", "2")
    assert res.exit_code == 0 and "replicas kept 2.0 days after last use" in plain(res.output), res.output


@pytest.mark.parametrize("command", ["run", "compare", "optimum"])
@pytest.mark.parametrize(("flags", "msg"), [
    (["--locality-retention-days", "-1"],
     "locality_retention_days must be a finite number >= 0 and <= 3660, got -1.0 (its range [0, 3660]"),
    (["--locality-retention-days", "nan"], "locality_retention_days must be a finite number >= 0"),
    (["--transfer-kwh-per-gb", "250"], "transfer_kwh_per_gb must be a finite number >= 0 and <= 100, got 250.0 "
                                       "(its range [0, 100]"),
    (["--transfer-kwh-per-gb", "aslan2030"], "transfer_kwh_per_gb must be a finite number in [0, 100] or one of "
                                             "['aslan2018-2015', 'aslan2018-2023', 'none'], got 'aslan2030'"),
])
def test_a_bad_value_is_refused_with_its_range(bundle, tmp_path, command, flags, msg):
    extra = {"run": ["--out", tmp_path / "o"], "compare": ["--no-store", "--out", tmp_path / "o"],
             "optimum": []}[command]
    res = _invoke(command, bundle, "--days", "1", *extra, *flags)
    assert res.exit_code == 2, res.output
    assert "Invalid value" in res.output and msg in plain(res.output), res.output
    assert not (tmp_path / "o").exists()


def test_the_battery_is_a_declared_option_every_command_and_the_sweep_take(bundle, tmp_path):
    """A parameter set (``PARAMS``) declared once: a flag of run / compare / optimum as name=value pairs, a field
    of the sweep's config, a row of the docs table; off (None) it is left out of a run's options and key."""
    from benchmarks.docs_tables import options_table
    from dagster_project.assets.sweep import SweepConfig
    from sim_core.policies.registry import BATTERY_RULES

    o = declared.get("battery")
    assert o.kind == declared.PARAMS and o.default is None
    assert declared.get("battery_policy").choices == tuple(r.name for r in BATTERY_RULES)
    for command in ("run", "compare", "optimum"):
        assert "--battery" in plain(CliRunner().invoke(make_app(), [command, "--help"], env=ENV).output)
    assert "battery" in SweepConfig.model_fields and "| `battery` | params | `None` |" in options_table()
    assert not {"battery", "battery_policy"} & set(run_options.Options().public())  # run keys as before batteries
    out = tmp_path / "bat"
    res = _invoke("run", bundle, "--policy", "lowest_carbon", "--battery", "capacity_mwh=0.01,round_trip_eff=0.9",
                  "--battery-policy", "idle", "--out", out)
    assert res.exit_code == 0, res.output
    meta = json.loads((out / "run.json").read_text())
    assert meta["options"]["battery"]["capacity_mwh"] == 0.01 and meta["options"]["battery_policy"] == "idle"
    assert meta["options"]["battery"]["power_mw"] == 0.01 / 4  # a field left out takes its default (4-hour device)
    want = sim_core.run(sim_core.load(bundle), "lowest_carbon",
                        battery={"capacity_mwh": 0.01, "round_trip_eff": 0.9}, battery_policy="idle").totals
    assert meta["totals"] == pytest.approx(want, rel=0, abs=0)
    assert "battery_charge_kwh" in meta["totals"]


@pytest.mark.parametrize(("value", "msg"), [
    ("capacity_mwh", "is not name=value"),
    ("capacity_mwh=-1", r"battery.capacity_mwh = -1.0 is outside \[0, 100000\]"),
    ("volts=3", r"unknown battery parameter\(s\) \['volts'\]"),
])
def test_a_bad_battery_flag_is_refused_by_name(bundle, tmp_path, value, msg):
    res = _invoke("run", bundle, "--policy", "local_only", "--battery", value, "--out", tmp_path / "x")
    assert res.exit_code == 2 and re.search(msg, plain(res.output)), res.output
    assert not (tmp_path / "x").exists()
