"""The leaderboard end to end on a tiny protocol (two hand-made bundles, two registered policies and an external
policy file), its self-describing Parquet rows, its page, and its refusals (docs/leaderboard.md)."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import re

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import sim_core
from gridshift.errors import DataError
from gridshift_cli import app
from sim_core.bench import leaderboard as L
from sim_core.bench.entries import Entry, EntryError, external, registered, run_entry
from sim_core.bench.leaderboard_page import FIGURE, common_cells, page, ranking, write_page
from sim_core.bench.protocol import DEFAULT, Protocol
from sim_core.result import optimum_version
from sim_core.testing import synthetic_signals, synthetic_tasks, write_bundle
from tests.cli_text import plain

DAY = 96
SETS = (("L0", "L1", "L2"), ("L0", "L1"))
TZ = {"L0": "America/Los_Angeles", "L1": "Europe/Berlin", "L2": "Asia/Singapore"}
#: a user's policy module: every task at its origin, written as a Python callable (docs/simulation.md)
ORIGIN_POLICY = '''"""Every task at its origin (a Python policy: policy(obs) -> actions)."""
NAME = "ext_origin"


def policy(obs):
    return obs["origin"] + 1
'''


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny protocol of two cells (two region sets x one utilisation x ISO week 1 of 2023: Monday 2 January, one
    day of arrivals), each cell's bundle hand-made: 4 days from 1 January 2023, synthetic signals and tasks."""
    proto = Protocol(name="tiny", region_sets=SETS, utilisations=(0.5,), iso_weeks=(1,), days=1.0, seeds=(0,))
    root = tmp_path_factory.mktemp("lb")
    bundles = {}
    for k, regions in enumerate(SETS):
        n = 4 * DAY
        t = synthetic_tasks(360, n, seed=5 + k).with_columns(
            max_delay_s=pl.Series(np.random.default_rng(k).choice([0.0, 7200.0, 21600.0], 360)),
            bandwidth_gb=pl.lit(0.5))
        bundles[(regions, 0.5)] = str(write_bundle(
            root, locations=list(regions), timezones=[TZ[r] for r in regions], total_cores=256, total_gpus=16,
            total_mem_gb=2000, n_steps=n, signals=synthetic_signals(len(regions), n, 7 + k), tasks=t,
            usd_per_gb=0.02, throughput_mbps=400.0, rtt_ms=90.0))
    ext = root / "ext_origin.py"
    ext.write_text(ORIGIN_POLICY)
    entries = [*registered(["local_only", "lowest_carbon"]), external(ext)]
    rows = L.leaderboard(proto, bundles, entries)
    return proto, bundles, entries, rows


def test_every_row_names_its_protocol_bundle_and_version(tiny):
    proto, bundles, entries, rows = tiny
    assert rows.height == len(SETS) * len(entries)
    assert list(rows.columns) == list(L.COLUMNS)
    assert rows["protocol_sha256"].unique().to_list() == [proto.sha256]
    assert rows["gridshift_version"].unique().to_list() == [optimum_version()]
    for (regions, _u), path in bundles.items():
        got = rows.filter(pl.col("regions") == ",".join(regions))
        assert got["bundle_id"].unique().to_list() == [sim_core.load(path).bundle_id]
        assert sorted(got["entry"].to_list()) == ["ext_origin", "local_only", "lowest_carbon"]
    ext = rows.filter(pl.col("entry") == "ext_origin").row(0, named=True)
    assert ext["entry_kind"] == "external" and ext["entry_source"].endswith("ext_origin.py")
    assert len(ext["entry_sha256"]) == 64
    assert set(rows["window_start_utc"]) == {"2023-01-02T00:00:00+00:00"}


def test_values_are_the_engine_s_drained_runs(tiny):
    """Each row's carbon, cost, water and lateness are ``sim_core.run``'s totals of the same window exactly; the
    external file (every task at its origin, as a Python callable) scores what ``local_only`` scores."""
    proto, bundles, _entries, rows = tiny
    for (regions, _u), path in bundles.items():
        sc = sim_core.load(path)
        for pol in ("local_only", "lowest_carbon"):
            tot = sim_core.run(sc, pol, seed=0, start=proto.window_start(1), days=1.0).totals
            r = rows.filter((pl.col("regions") == ",".join(regions)) & (pl.col("entry") == pol)).row(0, named=True)
            assert r["carbon_incl_transfer_kg"] == tot["carbon_incl_transfer_kg"]
            assert r["cost_incl_transfer_usd"] == tot["cost_incl_transfer_usd"]
            assert r["water_l"] == tot["water_l"]
            assert r["sla_violations"] == tot["sla_violations"] and r["tasks"] == tot["tasks"] > 50
            assert tot["work_left_core_hours"] == 0.0  # drained: equal work
        cell = rows.filter(pl.col("regions") == ",".join(regions))
        by = {r["entry"]: r for r in cell.iter_rows(named=True)}
        assert by["ext_origin"]["carbon_incl_transfer_kg"] == by["local_only"]["carbon_incl_transfer_kg"]
        assert by["local_only"]["carbon_saving_frac"] == 0.0


def test_the_bracket_and_the_share_closed(tiny):
    """lower <= upper; no entry without a late task goes below the lower bound; the shares are (B - X) / (B - end)
    with B the baseline's carbon, the lower end's share never above the upper end's; the baseline closes 0."""
    _proto, _bundles, _entries, rows = tiny
    for r in rows.iter_rows(named=True):
        lo, up = r["bracket_lower_kg"], r["bracket_upper_kg"]
        assert 0 < lo <= up
        if r["sla_violations"] == 0:
            assert r["carbon_incl_transfer_kg"] >= lo
        base = rows.filter((pl.col("regions") == r["regions"]) & (pl.col("entry") == "local_only"))[
            "carbon_incl_transfer_kg"][0]
        x = r["carbon_incl_transfer_kg"]
        assert r["bracket_closed_min_frac"] == pytest.approx((base - x) / (base - lo), rel=1e-12)
        if base > up:
            assert r["bracket_closed_max_frac"] == pytest.approx((base - x) / (base - up), rel=1e-12)
            assert r["bracket_closed_min_frac"] <= r["bracket_closed_max_frac"] or x > base
    assert (rows.filter(pl.col("entry") == "local_only")["bracket_closed_min_frac"] == 0.0).all()
    best = rows.filter(pl.col("entry") == "lowest_carbon")
    assert (best["carbon_saving_frac"] > 0).all()  # the greener sites exist in both cells


def test_a_dask_style_executor_gives_the_same_rows(tiny):
    proto, bundles, entries, rows = tiny
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        again = L.leaderboard(proto, bundles, entries, executor=pool)
    assert again.equals(rows)


def test_the_rows_object_is_self_describing(tiny, tmp_path):
    proto, _bundles, _entries, rows = tiny
    url = L.write_rows(rows, proto, str(tmp_path / "results"))
    assert url.endswith(f"leaderboard/protocol={proto.sha256[:16]}/version={optimum_version()}/leaderboard.parquet")
    back, p = L.read_rows(url)
    assert back.equals(rows) and p == proto
    meta = json.loads(pq.read_schema(url).metadata[L.METADATA_KEY])
    assert meta["protocol"] == proto.to_dict() and meta["protocol_sha256"] == proto.sha256
    assert set(meta["columns"]) == set(rows.columns)
    # a footer that names another protocol is refused
    other = dataclasses.replace(proto, days=2.0)
    (tmp_path / "bad.parquet").write_bytes(L.encode(rows, other))
    with pytest.raises(DataError, match="different protocols"):
        L.read_rows(str(tmp_path / "bad.parquet"))


def test_the_page_and_its_figure(tiny, tmp_path):
    proto, _bundles, _entries, rows = tiny
    text = page(rows, proto, "./run.sh gridshift leaderboard")
    assert proto.sha256 in text and "`ext_origin`" in text and "`lowest_carbon`" in text
    for bid in rows["bundle_id"].unique().to_list():
        assert f"`{bid}`" in text
    rk = ranking(rows)
    assert rk["entry"][0] == "lowest_carbon" and rk["cells"].to_list() == [2, 2, 2]
    out = write_page(rows, proto, tmp_path / "docs" / "leaderboard.md", "./run.sh gridshift leaderboard")
    assert out.read_text() == text
    assert (tmp_path / "docs" / FIGURE).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_protocol_is_declared_once_and_hashed():
    assert len(DEFAULT.cells()) == 2 * 2 * 4
    assert DEFAULT.train_year == 2022 and DEFAULT.score_year == 2023
    assert DEFAULT.for_year(2024).score_year == 2024 and DEFAULT.for_year(2024).sha256 != DEFAULT.sha256
    assert Protocol.from_dict(DEFAULT.to_dict()) == DEFAULT
    assert DEFAULT.window_start(8) == "2023-02-20T00:00:00+00:00"
    with pytest.raises(ValueError, match="held out"):
        DEFAULT.for_year(2022)


@pytest.mark.parametrize(("field", "value", "match"), [
    ("scale", "huge", "protocol scale must be a number .* got 'huge'"),
    ("scale", "1e9", "protocol scale = 1e\\+09 is outside its range"),
    ("gpu", "Z80", "gpu must be one of .* got 'Z80'"),
    ("gpu", ["V100"], "gpu must be one of .* got \\['V100'\\]"),
])
def test_a_bad_scale_or_gpu_is_refused_by_name(field, value, match):
    """The score bundles' size and GPUs (revision 2's fields) are checked like every other field: a ValueError that
    names the field and the value (so a leaderboard object's footer that holds one is refused naming its file)."""
    with pytest.raises(ValueError, match=match):
        Protocol.from_dict({**DEFAULT.to_dict(), field: value})


#: (file name, its content (None: a directory of that name), the refusal that names it)
BAD_ENTRIES = [
    ("missing.py", "", "does not exist"),
    ("folder.py", None, "does not exist \\(or is not a file\\)"),
    ("notes.txt", "x", "expected a Python policy module"),
    ("empty.py", "X = 1\n", "defines no callable 'policy'"),
    ("broken.py", "def policy(:\n", "importing it failed \\(SyntaxError"),
    ("raises.py", "raise RuntimeError('boom')\n", "importing it failed \\(RuntimeError: boom"),
    ("exits.py", "import sys\nsys.exit(3)\n", "importing it failed \\(SystemExit: 3"),
    ("clash.py", "NAME = 'local_only'\ndef policy(obs):\n    return obs['origin'] + 1\n", "is a registered policy's"),
]


@pytest.mark.parametrize(("name", "content", "match"), BAD_ENTRIES, ids=[b[0] for b in BAD_ENTRIES])
def test_a_bad_entry_file_is_refused_by_name(tmp_path, name, content, match):
    path = tmp_path / name
    if content is None:
        path.mkdir()
    elif name != "missing.py":
        path.write_text(content)
    with pytest.raises(EntryError, match=match):
        external(path)


def test_a_pt_that_is_not_an_agent_is_refused_by_name(tmp_path):
    torch = pytest.importorskip("torch")
    from sim_core.rl.agent import FORMAT

    (tmp_path / "garbage.pt").write_text("not torch")
    torch.save({"format": FORMAT}, tmp_path / "fieldless.pt")  # the right tag, no layers
    torch.save([1, 2], tmp_path / "list.pt")
    fields = {"format": FORMAT, "algo": "PPO", "bundle_id": "b", "recipe": "r", "hyperparameters": "{}", "seed": 0,
              "timesteps": 0, "feature_names": ["x", "y"]}
    two_by_three = [torch.zeros(2, 3), torch.zeros(2)]  # a first layer of 3 inputs for 2 features
    torch.save({**fields, "activation": "Tanh", "layers": two_by_three}, tmp_path / "shapes.pt")
    torch.save({**fields, "activation": "GELU", "layers": [torch.zeros(2, 2), torch.zeros(2)]}, tmp_path / "act.pt")
    for name, match in (("garbage.pt", "not a gridshift agent file \\(UnpicklingError"),
                        ("shapes.pt", "layer 0: weight \\(2, 3\\) and bias \\(2,\\) do not take 2 inputs"),
                        ("act.pt", "activation 'GELU' is not one of"),
                        ("fieldless.pt", "a field is missing or of the wrong type: KeyError: 'layers'"),
                        ("list.pt", "not a gridshift agent file \\(format None")):
        with pytest.raises(EntryError, match=match):
            external(tmp_path / name)


def test_entry_refusals():
    with pytest.raises(EntryError, match="did you mean 'lowest_carbon'"):
        registered(["lowest_carbn"])
    assert Entry("x", "agent", regions=("A", "B")).applies_to(("A", "B"))
    assert not Entry("x", "agent", regions=("A", "B")).applies_to(("A", "B", "C"))


def _cli(*args):
    return CliRunner().invoke(app, ["leaderboard", *map(str, args)])


def test_cli_refuses_an_unknown_entry_and_a_bad_path(tmp_path):
    res = _cli("--home", tmp_path / "h", "--entries", "local_only,nope")
    assert res.exit_code == 2 and "unknown policy 'nope'" in plain(res.output)
    res = _cli("--home", tmp_path / "h", "--entry", tmp_path / "nowhere.py")
    assert res.exit_code == 2 and "does not exist" in plain(res.output)
    res = _cli("--home", tmp_path / "h", "--entries", "local_only", "--results", "ftp://host/x")
    assert res.exit_code == 2 and "scheme 'ftp' is not supported" in plain(res.output)
    assert not (tmp_path / "h" / "results").exists()


def test_cli_refuses_a_year_the_mirror_lacks_before_building_anything(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    res = _cli("--home", tmp_path / "h", "--mirror", mirror, "--score-year", "2024", "--entries", "local_only")
    assert res.exit_code == 2
    text = plain(res.output)
    assert "the score year 2024 is not in the mirror" in text and "--live" in text
    assert "15 partition(s) missing, first grid_carbon AU-NSW 2024" in text  # 5 regions x 3 signals
    assert not (tmp_path / "h" / "bundles").exists() or not any((tmp_path / "h" / "bundles").iterdir())


def test_a_saved_agent_is_scored_on_its_own_region_set_only(tiny, tmp_path):
    """An agent file (``save_agent``: no pickle) given as an external entry: its sites are read from its observation
    layout, so it is scored on the three-site cell and left out of the two-site one; its row names its training
    bundle and the file's sha256, and its values are those of its greedy episode (``play``), drained."""
    pytest.importorskip("torch")
    from sim_core.rl.agent import Agent, load_agent, play, save_agent
    from sim_core.rl.decision import TaskDecisionEnv, decision_feature_names

    proto, bundles, entries, _rows = tiny
    names = tuple(decision_feature_names(list(SETS[0])))
    rng = np.random.default_rng(0)
    layer = (rng.normal(size=(len(SETS[0]) + 1, len(names))).astype(np.float32), np.zeros(len(SETS[0]) + 1, np.float32))
    agent = Agent("PPO", "Tanh", (layer,), "0123456789abcdef", "ppo", {}, 0, 0, names)
    path = save_agent(agent, tmp_path / "ppo-0123456789abcdef-s0.pt")
    e = external(path)
    assert e.kind == "agent" and e.regions == SETS[0] and e.train_bundle_id == "0123456789abcdef"
    rows = L.leaderboard(proto, bundles, [registered(["local_only"])[0], e])
    mine = rows.filter(pl.col("entry") == e.name)
    assert mine.height == 1 and mine["regions"][0] == ",".join(SETS[0])
    assert mine["train_bundle_id"][0] == "0123456789abcdef" and mine["entry_sha256"][0] == e.sha256
    sc = sim_core.load(bundles[(SETS[0], 0.5)])
    tot = play(load_agent(path), TaskDecisionEnv(sc, start=proto.window_start(1), days=1.0), 0)
    assert mine["carbon_incl_transfer_kg"][0] == tot["carbon_incl_transfer_kg"]
    assert tot["work_left_core_hours"] == 0.0
    shared = common_cells(rows)  # the ranking on the cells both entries were scored on: the agent's one
    assert shared.height == 2 and set(shared["regions"]) == {",".join(SETS[0])}
    assert "On the 1 cells every entry was scored on" in page(rows, proto, "./run.sh gridshift leaderboard")
    # an agent of the same sites but another observation layout (one feature more) is refused naming its file
    wide = (rng.normal(size=(len(SETS[0]) + 1, len(names) + 1)).astype(np.float32), layer[1])
    other = save_agent(Agent("PPO", "Tanh", (wide,), "0123456789abcdef", "ppo", {}, 0, 0, (*names, "extra")),
                       tmp_path / "ppo-0123456789abcdef-s1.pt")
    with pytest.raises(EntryError, match=f"{re.escape(str(other))} observes {len(names) + 1} features"):
        run_entry(external(other), sc, seed=0, start=proto.window_start(1), days=1.0)


def test_run_metric_columns_are_the_declared_metrics():
    """A row's run metrics are declared metrics (gridshift.metrics): their type and meaning come from there, and
    every metric the default protocol ranks is a column of the row."""
    from gridshift import metrics
    from sim_core.bench import leaderboard as L
    from sim_core.bench.protocol import DEFAULT

    for name in L.RUN_METRICS:
        m = metrics.get(name)
        dtype, meaning = L.COLUMNS[name]
        assert meaning.startswith(m.doc) and m.unit in meaning
        assert dtype == (pl.Int64 if m.aggregate == metrics.COUNT else pl.Float64)
    assert set(DEFAULT.metrics) <= set(L.COLUMNS)


@pytest.mark.parametrize(("footer", "match"), [
    (None, "no 'gridshift.leaderboard' footer entry"),
    (b"{", "holds no valid protocol \\(JSONDecodeError"),
    (b"[1]", "holds no valid protocol \\(TypeError"),
    (b"{}", "holds no valid protocol \\(KeyError"),
    (json.dumps({"protocol": {**DEFAULT.to_dict(), "days": -1.0}}).encode(), "days must be in \\(0, 7\\]"),
    (json.dumps({"protocol": {**DEFAULT.to_dict(), "scale": "huge"}}).encode(), "protocol scale must be a number"),
    (json.dumps({"protocol": DEFAULT.to_dict(), "protocol_sha256": DEFAULT.sha256}).encode(),
     "no protocol_sha256 column"),
])
def test_a_hostile_rows_object_is_refused_by_name(tmp_path, footer, match):
    """An object that is not a leaderboard, or whose footer is broken, is a DataError naming the file."""
    path = tmp_path / "x.parquet"
    table = pl.DataFrame({"a": [1]}).to_arrow()
    pq.write_table(table if footer is None else table.replace_schema_metadata({L.METADATA_KEY: footer}), path)
    with pytest.raises(DataError, match=match) as err:
        L.read_rows(str(path))
    assert err.value.file == str(path)
    path.write_text("not parquet")
    with pytest.raises(DataError, match="not a Parquet object"):
        L.read_rows(str(path))
