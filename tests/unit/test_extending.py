"""docs/architecture.md "Extending gridshift": an option and a metric are each one declaration, and what the
page's examples declare shows up everywhere it should. Each fixture runs the page's own ``python`` block (so the
documented example is the tested one), then the tests look for the new option in the checks, the flags of
``run``/``compare``/``optimum``, the Dagster sweep's config and the docs table, and for the new metric in the
run object's columns and contract, ``compare``'s columns and summary, and the docs table."""

from __future__ import annotations

import inspect
import math
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import typer
from typer.testing import CliRunner

from benchmarks import docs_tables
from gridshift import metrics, run_options
from gridshift.errors import DataError
from gridshift.results import RunKey, decode_run, encode_run
from gridshift_cli import make_app
from gridshift_cli.run_flags import with_run_options
from tests.cli_text import plain

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture.md"
ENV = {"COLUMNS": "250", "NO_COLOR": "1"}


def _example(heading: str) -> str:
    """The ``python`` block under ``### <heading>`` of the page's "Extending gridshift" section."""
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index("## Extending gridshift"):]
    part = section[section.index(f"### {heading}\n"):]
    end = part.find("\n### ", 1)
    m = re.search(r"```python\n(.*?)```", part if end < 0 else part[:end], re.S)
    assert m, f"docs/architecture.md has no example under '### {heading}'"
    return m.group(1)


@pytest.fixture
def option():
    """The page's example option, declared for this test only."""
    exec(_example("A run option"), {})  # noqa: S102 - the page's own example, the point of the test
    o = run_options.declared()[-1]
    assert o.name == "example_headroom_frac"
    yield o
    run_options.undeclare(o.name)
    assert o.name not in run_options.defaults()


@pytest.fixture
def metric():
    """The page's example metric, declared for this test only."""
    exec(_example("A metric"), {})  # noqa: S102
    m = metrics.declared()[-1]
    assert m.name == "cost_usd_per_core_hour"
    yield m
    metrics.undeclare(m.name)
    assert metrics.get(m.name) is None


# ------------------------------------------------------------------------------------------------ options
def test_a_declared_option_is_checked(option):
    from sim_core.options import Options, RunOptionsError, make_options

    assert Options().example_headroom_frac == 0.1
    assert make_options(example_headroom_frac=0.25).public()["example_headroom_frac"] == 0.25
    for bad in (0.6, -0.1, math.nan, True, "0.2"):
        with pytest.raises(RunOptionsError, match=r"example_headroom_frac .*\[0, 0.5\]"):
            make_options(example_headroom_frac=bad)
    run_options.undeclare(option.name)
    with pytest.raises(TypeError, match="example_headroom_frac"):  # undeclared: an unknown option again
        make_options(example_headroom_frac=0.2)
    run_options.declare(option)


@pytest.mark.parametrize("command", ["run", "compare", "optimum"])
def test_a_declared_option_is_a_flag_of_every_run_command(option, command):
    res = CliRunner().invoke(make_app(), [command, "--help"], env=ENV)
    assert res.exit_code == 0, res.output
    text = plain(res.output)
    assert "--example-headroom-frac" in text and "share of each site's capacity" in text and "[default: 0.1]" in text


def test_a_flag_hands_its_value_to_the_command_as_an_option(option):
    seen = {}

    def probe(name: str = "x", options: dict | None = None) -> None:
        seen.update(options or {})

    app = typer.Typer()
    app.command()(with_run_options(probe, "run"))
    app.command("other")(lambda: None)  # (two commands: typer then keeps the command name)
    res = CliRunner().invoke(app, ["probe", "--example-headroom-frac", "0.3", "--no-locality",
                                   "--transfer-kwh-per-gb", "none"], env=ENV)
    assert res.exit_code == 0, res.output
    assert seen["example_headroom_frac"] == 0.3 and seen["locality"] is False
    assert seen["transfer_kwh_per_gb"] == "none"  # a preset name, as the run takes it
    assert set(seen) == {o.name for o in run_options.for_command("run")}
    assert "options" not in inspect.signature(with_run_options(probe, "run")).parameters


def test_a_declared_option_is_in_the_sweep_config(option):
    from dagster_project.assets.sweep import SweepBase, sweep_config

    cls = sweep_config(SweepBase, "ProbeConfig")
    assert cls.model_fields["example_headroom_frac"].default == 0.1
    assert cls().run_kwargs()["example_headroom_frac"] == 0.1
    assert {"example_headroom_frac": 0.4, "locality": False}.items() <= cls(
        example_headroom_frac=0.4, locality=False).run_kwargs().items()
    assert cls(transfer_kwh_per_gb="0.06").run_kwargs()["transfer_kwh_per_gb"] == 0.06


def test_the_sweep_config_sets_every_sweep_option():
    from dagster_project.assets.sweep import SummaryConfig, SweepConfig

    want = {o.name for o in run_options.declared() if o.sweep}
    assert {"locality", "transfer_kwh_per_gb", "power"} <= want  # (the sweep could not set these before)
    for cls in (SweepConfig, SummaryConfig):
        assert want <= set(cls.model_fields)
        assert {k: v for k, v in cls().run_kwargs().items() if k in want} == {
            o.name: o.default for o in run_options.declared() if o.sweep}


def test_a_declared_option_is_in_the_docs_table(option):
    row = next(r for r in docs_tables.options_table().splitlines() if r.startswith("| `example_headroom_frac` |"))
    assert "| float | `0.1` | finite number in [0, 0.5] | fraction |" in row and "an example: cite" in row
    assert "docs/simulation.md#options" in docs_tables.stale()  # the committed page lacks it: the test would fail


def test_every_option_is_declared_and_the_pages_tables_are_current():
    from sim_core.options import Options

    # every declared option, but those that are off by default (a feature left None: not in a run's key)
    assert list(Options().public()) == [o.name for o in run_options.declared()
                                        if not run_options.is_off(o, run_options.defaults())]
    assert list(Options(battery={"capacity_mwh": 1.0}).public()) == [o.name for o in run_options.declared()]
    assert docs_tables.stale() == []


# ------------------------------------------------------------------------------------------------ metrics
def _record(metric_values: dict[str, float]):
    from types import SimpleNamespace

    from gridshift.hashing import canonical_json, sha256_bytes

    options = canonical_json({"forecast": "calibrated"}).decode()
    series = pl.DataFrame({"location": ["AA"], "dc": [0], "step": [0]})
    return SimpleNamespace(key=RunKey("b" * 16, "local_only", 0, "0.1", sha256_bytes(options.encode())),
                           options_json=options, metrics=metric_values, series=series, n_steps=1, n_dc=1)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    from sim_core.testing import write_bundle

    n = 12
    tasks = {"task_id": np.arange(n, dtype=np.int64), "arrival_ts_utc": np.arange(n) * 3600.0 + 60.0,
             "duration_s": np.full(n, 5400.0), "cpu_cores": np.full(n, 8.0), "gpus": np.zeros(n),
             "mem_gb": np.ones(n), "gpu_mem_gb": np.zeros(n), "bandwidth_gb": np.ones(n)}
    return write_bundle(tmp_path_factory.mktemp("extending"), locations=["AA", "BB"], timezones=["UTC", "UTC"],
                        n_steps=96, tasks=tasks,
                        signals={"price_usd_per_mwh": np.array([[120.0] * 96, [40.0] * 96])})


def test_a_declared_metric_is_a_column_and_a_summary_row_of_compare(metric, bundle):
    import sim_core
    from sim_core.bench import compare

    sc = sim_core.load(bundle)
    cmp = compare(sc, ["local_only"], [0, 1], days=0.5)
    res = sim_core.run(sc, "local_only", seed=0, days=0.5)
    row = cmp.runs.filter(pl.col("seed") == 0).row(0, named=True)
    assert row["cost_usd_per_core_hour"] == res.totals["cost_usd_per_core_hour"] > 0
    assert row["cost_usd_per_core_hour"] == pytest.approx(row["cost_usd"] / row["work_core_hours"], rel=1e-12)
    summary = cmp.summary.filter(pl.col("metric") == "cost_usd_per_core_hour").row(0, named=True)
    assert summary["unit"] == "USD/core-h" and summary["n_seeds"] == 2
    assert {"name": "cost_usd_per_core_hour", "unit": "USD/core-h", "description": "cost_usd / work_core_hours"} \
        in cmp.params()["metrics"]


def test_a_declared_metric_is_stored_and_checked_by_its_declaration(metric):
    base = {"cost_usd": 12.0, "work_core_hours": 48.0}
    run = decode_run(encode_run(_record({**base, "cost_usd_per_core_hour": 0.25})), "mem://run")
    assert run.metrics["cost_usd_per_core_hour"] == 0.25
    with pytest.raises(DataError, match="cost_usd_per_core_hour breaks its identity with cost_usd, work_core_hours"):
        decode_run(encode_run(_record({**base, "cost_usd_per_core_hour": 0.2})), "mem://run")
    metrics.undeclare(metric.name)
    with pytest.raises(DataError, match="cost_usd_per_core_hour is not a metric of the run contract"):
        decode_run(encode_run(_record({**base, "cost_usd_per_core_hour": 0.25})), "mem://run")
    metrics.declare(metric)


def test_a_declared_metric_is_in_the_docs_table(metric):
    row = next(r for r in docs_tables.metrics_table().splitlines() if r.startswith("| `cost_usd_per_core_hour` |"))
    assert row == ("| `cost_usd_per_core_hour` | USD/core-h | ratio (`cost_usd` / `work_core_hours`) | lower | - "
                   "| cost_usd / work_core_hours |")
    assert "docs/benchmarks.md#metrics" in docs_tables.stale()


def test_the_run_contract_and_compare_take_every_metric_from_the_declarations():
    from gridshift.run_contract import METRIC_BOUNDS, NAN_ALLOWED
    from sim_core.bench.metrics import SAVINGS_METRICS

    assert list(METRIC_BOUNDS) == list(metrics.names()) and len(METRIC_BOUNDS) == 38
    assert {"pue", "idle_share_of_it", "mean_cpu_util_frac", "mean_gpu_util_frac",
                           "mean_mem_util_frac"} == NAN_ALLOWED
    assert SAVINGS_METRICS == ("total_kwh", "it_kwh", "cost_usd", "carbon_kg", "water_l", "transfer_cost_usd",
                               "cost_incl_transfer_usd", "carbon_incl_transfer_kg")


# ------------------------------------------------------------------------------------------------ physics terms
@pytest.fixture
def new_term(tmp_path, monkeypatch):
    """The page's example term, written as the module a term author adds (in a package of its own here)."""
    pkg = tmp_path / "extra_terms"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "water_supply.py").write_text(_example("A physics term"))
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    return importlib.import_module("extra_terms.water_supply")


def _files_to_touch(heading: str) -> list[str]:
    """The files the page's "Files:" sentence of ``### <heading>`` names (in bold)."""
    text = PAGE.read_text(encoding="utf-8")
    part = text[text.index(f"### {heading}\n"):]
    files = part[part.index("Files:"):part.index("```")]
    return re.findall(r"\*\*([^*]+)\*\*", files)


def test_a_physics_term_is_its_module_the_composition_and_its_parameters():
    from sim_core.physics import site

    files = _files_to_touch("A physics term")
    assert len(files) <= 3, files
    assert files[0].startswith("a term module in `sim_core/physics/`")
    for f in files[1:]:
        assert (ROOT / f.strip("`")).is_file(), f
    # the built-in terms are such modules: the output slots are their declared outputs, term by term
    assert [m.__name__ for m in site.MODULES] == [f"sim_core.physics.{n}" for n in ("it", "cooling", "water",
                                                                                       "power_chain")]
    assert list(site.SLOT) == [o for m in site.MODULES for o in m.TERM.outputs]
    # every site parameter (the registry's and the derived ones) is owned by exactly one of them
    from gridshift.dc_params import PARAM_RANGES
    from sim_core.physics.params import DERIVED_PARAMS

    owned = [p for m in site.MODULES for p in m.TERM.params]
    assert sorted(owned) == sorted((*PARAM_RANGES, *DERIVED_PARAMS))


@pytest.fixture(scope="module")
def wet_bundle(tmp_path_factory):
    """Two sites a warm day, one with a wet cooling tower, one a hybrid dry cooler (its pads wetted): both use
    water."""
    from gridshift.dc_params import DatacenterParams
    from sim_core.testing import write_bundle

    n = 12
    tasks = {"task_id": np.arange(n, dtype=np.int64), "arrival_ts_utc": np.arange(n) * 3600.0 + 60.0,
             "duration_s": np.full(n, 5400.0), "cpu_cores": np.full(n, 8.0), "gpus": np.zeros(n),
             "mem_gb": np.ones(n), "gpu_mem_gb": np.zeros(n), "bandwidth_gb": np.ones(n)}
    return write_bundle(tmp_path_factory.mktemp("terms"), locations=["AA", "BB"], timezones=["UTC", "UTC"],
                        n_steps=96, tasks=tasks, physics=[DatacenterParams(condenser="water"), DatacenterParams()],
                        signals={"temp_c": 30.0, "wetbulb_c": 22.0})


def test_a_new_terms_output_enters_its_identity_and_is_checked_on_a_run(new_term, wet_bundle):
    import sim_core
    from sim_core import terms
    from sim_core.physics import site

    found, identities = terms.collect(terms.MODULES + (new_term,))
    t = next(x for x in found if x.name == "water_supply")
    assert t.module == "extra_terms.water_supply" and list(t.ranges()) == ["water_supply_kwh_per_m3"]
    power = next(i for i in identities if i.name == "facility_power")
    assert power.parts[-1] == (1.0, "water_supply_kw") and len(power.parts) == 10
    # its output takes the next slot; the built-in terms' slots stay where they were
    slots = site.layout(site.MODULES + (new_term,))
    assert slots["water_supply_kw"] == site.N_OUT and {k: slots[k] for k in site.SLOT} == site.SLOT

    steps = sim_core.run(sim_core.load(wet_bundle), "local_only", seed=0, days=0.5).steps
    water_l = steps["water_l"].to_numpy()
    kw = np.array([new_term.water_supply_kw(0.5, w) for w in water_l])
    assert (kw > 0.0).all()  # (every step of both sites uses water: the check below can fail)
    # a facility whose total carries the new term's power keeps every identity ...
    with_term = steps.with_columns(pl.Series("water_supply_kw", kw), pl.col("total_kw") + kw)
    res = terms.residuals(with_term, identities=identities)
    assert set(res) == {"facility_power", "white_space_heat", "water", "grid_energy", "carbon", "cost"}
    assert max(res.values()) < 1e-12, res
    # ... and one whose total leaves it out breaks facility power (the identity really holds the new output)
    res = terms.residuals(steps.with_columns(pl.Series("water_supply_kw", kw)), identities=identities)
    assert res["facility_power"] > 1e-6 and res["water"] < 1e-12
    # without the new term the built-in identities hold on the run as it is
    assert max(terms.residuals(steps).values()) < 1e-12


def test_collecting_terms_refuses_what_would_break_the_seam(new_term):
    from dataclasses import replace
    from types import SimpleNamespace

    from sim_core import terms

    def with_term(**changes):
        return terms.collect(terms.MODULES + (SimpleNamespace(__name__="extra", TERM=replace(new_term.TERM,
                                                                                             **changes)),))

    with pytest.raises(ValueError, match="'water_supply': output 'water_l' is already declared by term 'water'"):
        with_term(outputs=("water_l",))
    with pytest.raises(ValueError, match="parameter 'supply_kwh' is in neither its registry"):
        with_term(params=("supply_kwh",))
    with pytest.raises(ValueError, match="'water_supply': parameter 'lighting_frac' is already declared "
                                         "by term 'electrical_losses'"):
        with_term(params=("lighting_frac",), registry=terms.term("it").registry)
    with pytest.raises(ValueError, match="enters identities nobody declares: \\['pue'\\]"):
        with_term(enters={"pue": ((1.0, "water_supply_kw"),)})
    with pytest.raises(ValueError, match="two physics terms named 'water'"):
        with_term(name="water")
    with pytest.raises(ValueError, match="an identity declared twice: \\['water'\\]"):
        with_term(identities=terms.term("water").identities)
