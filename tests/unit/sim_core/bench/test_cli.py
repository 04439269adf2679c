"""``gridshift compare`` and ``run``: exit codes, clear errors, byte-identical outputs, warehouse reuse."""

from __future__ import annotations

import io
import json
import re

import polars as pl
import pytest
from typer.testing import CliRunner

from gridshift_cli import app
from sim_core.bench.metrics import METRIC_NAMES
from tests.cli_text import plain

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
FILES = ["compare.json", "frontier.png", "runs.parquet", "service.parquet", "summary.md", "summary.parquet",
         "timeseries.png", "tradeoff.png", "utilisation.png"]
ARGS = ["--policies", "local_only,lowest_carbon,lowest_price", "--seeds", "0,1", "--days", "1"]


def _invoke(*args):
    return CliRunner().invoke(app, ["compare", *map(str, args)])


@pytest.mark.parametrize(("args", "msg"), [
    (["--policies", "local_only,nope"], "unknown policy 'nope'; the policies: "),
    (["--policies", "lowest_carbn,local_only"], "unknown policy 'lowest_carbn': did you mean 'lowest_carbon'?"),
    (["--policies", "local_only,local_only"], "policy given twice"),
    (["--seeds", "0,x"], "seed 'x' is not an integer"),
    (["--seeds", "0,-3"], "not a non-negative integer"),
    (["--seeds", "1,1"], "seed given twice"),
    (["--seeds", ","], "no seed given"),
    (["--days", "30"], "does not fit the bundle"),
])
def test_bad_parameters_exit_2_with_a_clear_message(bundle, args, msg, tmp_path):
    res = _invoke(bundle, "--no-store", "--out", tmp_path / "o", *args)
    assert res.exit_code == 2, res.output
    assert msg in plain(res.output) and "Invalid value" in res.output
    assert not (tmp_path / "o").exists()


def test_a_results_url_with_a_credential_is_refused_without_quoting_it(bundle, tmp_path):
    """Given as --results or through GRIDSHIFT_RESULTS_URL (its default), the same refusal, credential hidden."""
    secret = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYzSECRET"
    given = {f"s3://AKIAIOSFODNN7EXAMPLE:{secret}@bucket/x": "'s3://***@bucket/x': no credentials in the URL",
             f"s3://bucket/x?X-Amz-Signature={secret}": "'s3://bucket/x?***': no query or fragment allowed"}
    for url, msg in given.items():
        for res in (_invoke(bundle, "--no-store", "--out", tmp_path / "o", "--results", url),
                    CliRunner().invoke(app, ["compare", str(bundle), "--no-store", "--out", str(tmp_path / "o")],
                                       env={"GRIDSHIFT_RESULTS_URL": url})):
            assert res.exit_code == 2 and msg in plain(res.output) and "--results" in res.output, res.output
            assert secret not in res.output and not (tmp_path / "o").exists()


def test_the_results_url_defaults_to_the_environments(bundle, tmp_path):
    shared = tmp_path / "shared"
    res = CliRunner().invoke(app, ["compare", str(bundle), *ARGS, "--no-store", "--out", str(tmp_path / "o")],
                             env={"GRIDSHIFT_RESULTS_URL": str(shared)})
    assert res.exit_code == 0, res.output
    assert len(list(shared.rglob("*.parquet"))) == 6  # one object per run, under the environment's URL


def test_missing_or_escaping_bundle_exits_2(tmp_path):
    res = _invoke(tmp_path / "nowhere", "--no-store")
    # (compared without spaces: Rich wraps a long temporary path anywhere, inserting a line break into it)
    assert res.exit_code == 2 and "".join(f"bundle not found: '{tmp_path / 'nowhere'}'".split()) in "".join(
        plain(res.output).split())
    res = _invoke("../../etc", "--home", tmp_path / "home")
    assert res.exit_code == 2 and "unsafe path component" in plain(res.output)


def test_outputs_are_deterministic_and_runs_are_reused(bundle, tmp_path):
    a = _invoke(bundle, *ARGS, "--no-store", "--out", tmp_path / "a")
    assert a.exit_code == 0, a.output
    assert "6 run(s) simulated, 0 reused" in a.output and "lowest_carbon" in a.output
    b = _invoke(bundle, *ARGS, "--no-store", "--out", tmp_path / "b")
    assert b.exit_code == 0, b.output
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == FILES
    for name in FILES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    # with a home (found through GRIDSHIFT_HOME): stored on the first run, reused on the second
    env = {"GRIDSHIFT_HOME": str(tmp_path / "home")}
    c = CliRunner().invoke(app, ["compare", str(bundle), *ARGS, "--out", str(tmp_path / "c")], env=env)
    assert c.exit_code == 0 and "6 run(s) simulated, 0 reused" in c.output, c.output
    d = CliRunner().invoke(app, ["compare", str(bundle), *ARGS, "--out", str(tmp_path / "d")], env=env)
    assert d.exit_code == 0 and "0 run(s) simulated, 6 reused" in d.output, d.output
    for name in FILES:  # stored runs give the very same files as fresh ones
        assert (tmp_path / "d" / name).read_bytes() == (tmp_path / "a" / name).read_bytes(), name
    # the bundle can be named by id under the home's bundles dir
    bid = bundle.name
    (tmp_path / "home" / "bundles").mkdir(parents=True, exist_ok=True)
    (tmp_path / "home" / "bundles" / bid).symlink_to(bundle)
    e = _invoke(bid, *ARGS, "--home", tmp_path / "home")
    assert e.exit_code == 0 and "0 run(s) simulated, 6 reused" in e.output, e.output


def test_output_files_are_what_they_claim(bundle, tmp_path):
    res = _invoke(bundle, *ARGS, "--no-store", "--out", tmp_path / "o")
    assert res.exit_code == 0, res.output
    runs = pl.read_parquet(tmp_path / "o" / "runs.parquet")
    assert runs.height == 6 and runs.columns[5:] == list(METRIC_NAMES)
    summary = pl.read_parquet(tmp_path / "o" / "summary.parquet")
    assert summary.height == 3 * len(METRIC_NAMES) and set(summary["n_seeds"]) == {2}
    import matplotlib.image as mpimg

    for name in ("tradeoff.png", "frontier.png", "timeseries.png", "utilisation.png"):
        data = (tmp_path / "o" / name).read_bytes()
        assert data[:8] == PNG_MAGIC
        img = mpimg.imread(io.BytesIO(data), format="png")
        assert img.shape[0] > 300 and img.shape[1] > 500 and img.std() > 0.05  # not a blank canvas


def test_printed_table_fits_120_columns_and_names_its_assumptions(bundle, tmp_path):
    """Every policy in one sweep, as a log would get it (no terminal): each line within 120 columns, a
    progress line per run, the parameters that decide the conclusions printed and in compare.json."""
    import json

    from sim_core.policies import registry

    POLICY_CODES = registry.names()
    pols = ",".join(sorted(POLICY_CODES))
    res = _invoke(bundle, "--policies", pols, "--seeds", "0,1", "--days", "1", "--no-store", "--out",
                  tmp_path / "o", "--no-figures", "--optimum")
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert max(map(len, lines)) <= 120, max(lines, key=len)
    assert sum(" seed " in ln and ln.endswith("simulated") for ln in lines) == 2 * len(POLICY_CODES)
    table = [ln for ln in lines if ln.strip().startswith(tuple(POLICY_CODES))]
    assert {ln.split()[0] for ln in table} >= set(POLICY_CODES)
    summary = pl.read_parquet(tmp_path / "o" / "summary.parquet")
    # the headers, two lines each (split at the first space); the cells in the order of compact_rows' header
    low = next(i for i, ln in enumerate(lines) if ln.strip().startswith("policy"))
    assert lines[low - 1].split() == ["carbon", "late", "GPU-h", "cost", "cost", "carbon", "gap"], lines[low - 1]
    assert lines[low].split() == ["policy", "kg", "%", "done", "USD", "saving", "%", "saving", "%", "to",
                                  "opt.", "%"], lines[low]
    head = ["policy", "carbon kg", "late %", "GPU-h done", "cost USD", "cost saving %", "carbon saving %",
            "gap to opt. %"]
    # under the table, the ranking at matched service: one line per policy, then its method
    ranked = [ln for ln in table if "% late;" in ln]
    assert {ln.split()[0] for ln in ranked} == set(POLICY_CODES)
    assert any(ln.startswith("at matched service (local_only: ") for ln in lines)
    table = [ln for ln in table if "% late;" not in ln]
    for ln in (ln for ln in table if " seed " not in ln):  # each savings column shows its own metric's saving
        cells = re.split(r"\s{2,}", ln.strip())
        for metric, label in (("cost_incl_transfer_usd", "cost saving %"),
                              ("carbon_incl_transfer_kg", "carbon saving %")):
            row = summary.filter((pl.col("policy") == cells[0]) & (pl.col("metric") == metric))
            shown = float(cells[head.index(label)].split(" ± ")[0])
            assert shown == pytest.approx(round(row["savings_vs_local_only_pct"][0], 1), abs=0.051), (ln, metric)
        # the absolute cost, and its saving's sign: positive when cheaper than local_only (same seeds)
        cost = summary.filter((pl.col("policy").is_in([cells[0], "local_only"]))
                              & (pl.col("metric") == "cost_incl_transfer_usd")).sort(pl.col("policy") == "local_only")
        assert float(cells[head.index("cost USD")].replace(",", "")) == round(cost["mean"][0])
        saving = float(cells[head.index("cost saving %")].split(" ± ")[0])
        if abs(saving) > 0.5:
            assert (saving > 0) == (cost["mean"][0] < cost["mean"][1]), ln
    text = plain(res.output)
    assert "assumptions: forecast:" in text and "transfer energy: 0.00375 kWh/GB" in text
    saved = json.loads((tmp_path / "o" / "compare.json").read_text())["assumptions"]
    assert saved["transfer energy"].startswith("0.00375 kWh/GB") and saved["power"] == "managed"
    md = (tmp_path / "o" / "summary.md").read_text()
    assert "water L" in md and "gap to optimum %" in md  # every headline column stays in the files


def test_run_command_takes_a_bundle_id_like_compare(bundle, tmp_path):
    (tmp_path / "home" / "bundles").mkdir(parents=True)
    (tmp_path / "home" / "bundles" / bundle.name).symlink_to(bundle)
    res = CliRunner().invoke(app, ["run", bundle.name, "--days", "1", "--home", str(tmp_path / "home")])
    assert res.exit_code == 0 and "carbon_kg" in res.output, res.output
    res = CliRunner().invoke(app, ["run", "../../etc", "--home", str(tmp_path / "home")])
    assert res.exit_code == 2 and "unsafe path component" in plain(res.output)
    res = CliRunner().invoke(app, ["run", "0123456789abcdef", "--home", str(tmp_path / "home")])
    text = plain(res.output)
    assert res.exit_code == 2 and "bundle not found: '0123456789abcdef'" in text
    assert f"holds 1 bundle(s): {bundle.name}" in text
    # the README's form, a path into a home that lacks it: not found (not "unsafe"), with the home's ids
    res = CliRunner().invoke(app, ["run", ".gridshift/bundles/7e5c801b5f8c14ed", "--home", str(tmp_path / "home")])
    text = plain(res.output)
    assert res.exit_code == 2 and "bundle not found: '.gridshift/bundles/7e5c801b5f8c14ed'" in text
    assert "unsafe" not in text


def test_verify_takes_a_bundle_id_like_the_other_commands(bundle, tmp_path):
    (tmp_path / "home" / "bundles").mkdir(parents=True)
    (tmp_path / "home" / "bundles" / bundle.name).symlink_to(bundle)
    res = CliRunner().invoke(app, ["verify", bundle.name, "--home", str(tmp_path / "home")])
    assert res.exit_code == 0 and "files intact and every value within the bundle contract" in plain(res.output)
    res = CliRunner().invoke(app, ["verify", "0123456789abcdef", "--home", str(tmp_path / "home")])
    assert res.exit_code == 2 and "bundle not found: '0123456789abcdef'" in plain(res.output)
    res = CliRunner().invoke(app, ["verify", "../../nowhere", "--home", str(tmp_path / "home")])
    assert res.exit_code == 2 and "unsafe path component '..'" in plain(res.output)


def test_run_command_is_unchanged(bundle):
    res = CliRunner().invoke(app, ["run", str(bundle), "--policy", "lowest_carbon", "--days", "1"])
    assert res.exit_code == 0 and "carbon_kg" in res.output


def test_run_command_chunk_steps_reaches_the_run_and_refuses_a_bad_value(bundle, tmp_path, monkeypatch):
    """--chunk-steps N|none|auto is what the run gets (N runs in chunks: sim_core.chunks, the same totals bit for
    bit); anything else is refused by name."""
    import sim_core

    seen, real = [], sim_core.run
    monkeypatch.setattr(sim_core, "run", lambda *a, **k: seen.append(k["chunk_steps"]) or real(*a, **k))
    out = {}
    for v in ("none", "auto", "7"):
        res = CliRunner().invoke(app, ["run", str(bundle), "--days", "1", "--chunk-steps", v, "--out", tmp_path / v])
        assert res.exit_code == 0, res.output
        out[v] = json.loads((tmp_path / v / "run.json").read_text())["totals"]
    assert seen == [None, "auto", 7]
    assert out["none"] == out["auto"] == out["7"]
    for bad in ("0", "-2", "week", "2.5"):
        res = CliRunner().invoke(app, ["run", str(bundle), "--days", "1", "--chunk-steps", bad])
        assert res.exit_code == 2 and "not a whole number of steps >= 1, 'none' or 'auto'" in plain(res.output), bad
    assert len(seen) == 3  # (a refused value never reaches a run)


def test_run_command_power_option(bundle, tmp_path):
    for power in ("always_on", "managed"):
        res = CliRunner().invoke(app, ["run", str(bundle), "--days", "1", "--power", power, "--out", tmp_path / power])
        assert res.exit_code == 0 and "idle_share_of_it" in plain(res.output), res.output
        assert f'"power": "{power}"' in (tmp_path / power / "run.json").read_text()


@pytest.mark.parametrize(("args", "msg"), [
    (["--policy", "nope"], "unknown policy 'nope'; the policies: "),
    (["--policy", "lowest_carbn"], "unknown policy 'lowest_carbn': did you mean 'lowest_carbon'?"),
    (["--days", "nan"], "days must be a finite number > 0, got nan"),
    (["--sla-multiplier", "-1"], "sla_multiplier must be a finite number > 0 and <= 1e+06, got -1.0"),
    (["--start", "2023-01-01T00:07:00"], "not on the 900-s step grid"),
    (["--power", "sometimes"], "power must be one of ('managed', 'always_on'), got 'sometimes'"),
])
def test_run_command_refuses_bad_options_with_exit_2(bundle, args, msg):
    res = CliRunner().invoke(app, ["run", str(bundle), *args])
    assert res.exit_code == 2, res.output
    assert msg in plain(res.output) and "Invalid value" in res.output
