"""One contract, every registered source: real inputs (the mirror, or the loopback fakes for live
routes) in; rows out that pass their table's Pandera schema, are UTC-aware, interval-start and in
order; and, where a publisher's file has both a mirror and a live route, equal rows for the same data.

Each source has its samples here (:data:`SAMPLES`); a registered source without samples fails
:meth:`TestSourceContract.test_every_registered_source_has_samples`, so a new source cannot skip
the contract.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from gridshift import locations
from gridshift import sources as source_info
from gridshift.home import Home
from pipelines.core.http import make_session
from pipelines.core.source import GridSource
from pipelines.sources import azure_latency, egress, network, persico, registry
from pipelines.workload import alibaba2023
from pipelines.workload.base import Inputs
from pipelines.workload.derive import REFERENCE, DeriveParams
from tests.integration.pipelines.workload.workload_fixture import write_trace
from warehouse.ingest_workload import prepare_workload
from warehouse.load import validate
from warehouse.schemas import TABLES


def utc(*a) -> datetime:
    return datetime(*a, tzinfo=UTC)


@dataclass(frozen=True)
class Sample:
    """One output of a source and what the real file says it must hold."""

    what: str
    load: Callable[..., pl.DataFrame]  # (ctx) -> frame
    rows: int
    first: datetime | None = None  # first / last interval start (timestamped tables)
    last: datetime | None = None


@dataclass
class Ctx:
    shared: object
    tmp_path: object

    @property
    def home(self) -> Home:
        return Home(self.tmp_path / "home")


def grid(name: str, code: str, year: int, route: str) -> Callable[[Ctx], pl.DataFrame]:
    """A grid source's rows for one partition, from the mirror or (``live``) from the fakes."""

    def load(ctx: Ctx) -> pl.DataFrame:
        src = registry.get(name)
        assert isinstance(src, GridSource)
        loc = locations.get(code)
        if route == "mirror":
            raw = src.read_mirror(ctx.shared, src.mirror_relpath(loc, year))
        else:
            with make_session(ctx.home) as s:
                raw = src.fetch(loc, year, home=ctx.home, session=s)
        assert raw.source == name
        return src.parse(raw, loc, year)

    return load


def egress_rows(input: str) -> Callable[[Ctx], pl.DataFrame]:
    def load(ctx: Ctx) -> pl.DataFrame:
        per_provider = sorted(egress.SOURCE.raws(input, ctx.shared), key=lambda pr: pr[0])
        return pl.concat([egress.SOURCE.parse(raw, p) for p, raw in per_provider])

    return load


def network_rows(source: str) -> Callable[[Ctx], pl.DataFrame]:
    """The ``network_path`` rows built from the Persico mirror file and the Azure RTT table that name
    ``source`` (inter-macro rows: persico2016; intra-macro rows: azure-rtt-p50)."""

    def load(ctx: Ctx) -> pl.DataFrame:
        p_raw = persico.SOURCE.read_mirror(ctx.shared, persico.SOURCE.mirror_relpath)
        model = network.build(p_raw, azure_latency.SOURCE.raw())
        return model.table.filter(pl.col("source") == source)

    return load


def trace_rows(name: str) -> Callable[[Ctx], pl.DataFrame]:
    def load(ctx: Ctx) -> pl.DataFrame:
        src = registry.workload(name)
        got = src.load(2023, src.default_params(), seed=0, load_factor=1.0, histograms=None,
                       inputs=Inputs(mirror=ctx.shared, trace_dir=write_trace(ctx.tmp_path / "trace")))
        return got.parsed.tasks

    return load


def derived_tasks(workload: str, **kw) -> Callable[[Ctx], pl.DataFrame]:
    def load(ctx: Ctx) -> pl.DataFrame:
        return prepare_workload(workload, 2023, mirror=ctx.shared, **kw).tasks

    return load


EM, SC, EN, ISO = "electricitymaps-csv", "sustaincluster-prices-usd", "entsoe-day-ahead", "gridstatus-iso-day-ahead"
OM, OMA, API = "open-meteo-archive", "open-meteo-archive-api", "electricitymaps-api-v3"
SAMPLES: dict[str, list[Sample]] = {
    EM: [Sample("DE-LU 2023 mirror", grid(EM, "DE-LU", 2023, "mirror"), 8760, utc(2023, 1, 1), utc(2023, 12, 31, 23)),
         Sample("DE-LU 2023 download", grid(EM, "DE-LU", 2023, "live"), 8760, utc(2023, 1, 1), utc(2023, 12, 31, 23)),
         Sample("BR-SP 2022 mirror", grid(EM, "BR-SP", 2022, "mirror"), 8760, utc(2022, 1, 1), utc(2022, 12, 31, 23))],
    API: [Sample("DE-LU 2023 API v3", grid(API, "DE-LU", 2023, "live"), 8760, utc(2023, 1, 1), utc(2023, 12, 31, 23))],
    SC: [Sample("DE-LU 2023 mirror", grid(SC, "DE-LU", 2023, "mirror"), 8760, utc(2023, 1, 1), utc(2023, 12, 31, 23)),
         Sample("IN-WE 2023 mirror (half-hour grid)", grid(SC, "IN-WE", 2023, "mirror"), 8760,
                utc(2023, 1, 1, 0, 30), utc(2023, 12, 31, 23, 30))],
    EN: [Sample("DE-LU 2023 API", grid(EN, "DE-LU", 2023, "live"), 8759, utc(2023, 1, 1), utc(2023, 12, 31, 22)),
         Sample("DE-LU 2023 mirror (EUR file, CET grid)", grid(EN, "DE-LU", 2023, "mirror"), 8760,
                utc(2022, 12, 31, 23), utc(2023, 12, 31, 22))],
    ISO: [Sample("US-CAL-CISO 2023 via the adapter", grid(ISO, "US-CAL-CISO", 2023, "live"), 8760,
                 utc(2023, 1, 1), utc(2023, 12, 31, 23))],
    OM: [Sample("DE-LU 2023 mirror (UTC+1)", grid(OM, "DE-LU", 2023, "mirror"), 8760,
                utc(2022, 12, 31, 23), utc(2023, 12, 31, 22)),
         Sample("US-CAL-CISO 2023 mirror (UTC-7)", grid(OM, "US-CAL-CISO", 2023, "mirror"), 8760,
                utc(2023, 1, 1, 7), utc(2024, 1, 1, 6))],
    OMA: [Sample("DE-LU 2023 FlatBuffers", grid(OMA, "DE-LU", 2023, "live"), 8759, utc(2023, 1, 1),
                 utc(2023, 12, 31, 22))],
    "cloud-egress-matrix": [Sample("rule table", egress_rows("repo"), 17 ** 2 + 12 ** 2 + 21 ** 2),
                            Sample("mirror matrices", egress_rows("mirror"), 400 + 169 + 484)],
    # 23 locations: 506 ordered pairs per provider, 378 across macro-regions and 128 inside one
    "persico2016": [Sample("mirror, pairs across macro-regions", network_rows("persico2016"), 3 * 378)],
    "azure-rtt-p50": [Sample("repository table, pairs inside a macro-region", network_rows("azure-rtt-p50"), 3 * 128)],
    "alibaba-2020": [Sample("fixture tables", trace_rows("alibaba-2020"), 17)],
    "alibaba-2023": [Sample("default pod list", trace_rows("alibaba-2023"), 8152)],
    "reference-alibaba2020-filtered": [Sample("bandwidth of the 2023 pods", derived_tasks("alibaba-2023"), 27_802,
                                              utc(2023, 1, 1, 0, 54, 41), utc(2023, 12, 31, 23, 53, 57))],
    "synthetic": [Sample("2 % of a year", derived_tasks("synthetic", load_factor=0.02), 25_318,
                         utc(2023, 1, 1, 0, 19, 44), utc(2023, 12, 31, 23, 39, 12))],
}
TIME_COLUMNS = ("ts_utc", "arrival_ts_utc")
ALL = [(name, i) for name, samples in SAMPLES.items() for i in range(len(samples))]


class TestSourceContract:
    def test_every_registered_source_has_samples(self):
        assert set(registry.implementations()) == set(source_info.names())
        assert set(SAMPLES) == set(registry.implementations())
        for name, src in registry.implementations().items():
            assert src.name == name and src.info.name == name
        for kind, table in source_info.SIGNAL_TABLES.items():  # the grid sources feed their signal's table
            assert {s.table for s in registry.grid(kind)} == {table}

    @pytest.mark.parametrize("name,i", ALL, ids=[f"{n}[{SAMPLES[n][i].what}]" for n, i in ALL])
    def test_rows_pass_the_schema_utc_interval_start_in_order(self, name, i, fake, shared_data, tmp_path):
        sample = SAMPLES[name][i]
        src = registry.get(name)
        df = sample.load(Ctx(shared_data, tmp_path))
        assert validate(src.table, df, file=sample.what).height == df.height == sample.rows
        if src.table in ("grid_carbon", "grid_price", "weather", "egress_price", "network_path", "trace_tasks"):
            assert df["source"].unique().to_list() == [name]  # rows name the source that parsed them
        time_col = next((c for c in TIME_COLUMNS if c in df.columns), None)
        if time_col is None:  # untimed tables: in primary-key order
            key = [c for c in TABLES[src.table].primary_key if c not in ("source", "raw_sha256")]
            if src.table == "trace_tasks":
                key = ["line"]  # file order
            assert df.select(key).equals(df.select(key).sort(key)), "not in key order"
            return
        ts = df[time_col]
        assert ts.dtype == pl.Datetime("us", "UTC")
        assert ts.is_sorted(), "not in time order"
        # interval start: the first and last intervals are the file's real ones (an interval-end
        # reading would put every UTC-year file at 01:00 .. 00:00 of the next year)
        assert (ts.min(), ts.max()) == (sample.first, sample.last)
        if time_col == "ts_utc":  # one row per interval
            assert (ts.diff().drop_nulls() > timedelta(0)).all()

    # ------------------------------------------------------------------ live rows = mirror rows
    @pytest.mark.parametrize("name", [EM, EN, "open-meteo"])
    def test_live_rows_equal_mirror_rows_for_the_same_data(self, name, fake, shared_data, tmp_path):
        ctx = Ctx(shared_data, tmp_path)
        if name == EM:  # the same file: every column equal, raw_sha256 included
            live, mirror = grid(EM, "DE-LU", 2023, "live")(ctx), grid(EM, "DE-LU", 2023, "mirror")(ctx)
            assert live.height == 8760 and live.equals(mirror)
            return
        if name == EN:  # the same auction prices: XML from the API, the EUR CSV from the mirror
            live, mirror = grid(EN, "DE-LU", 2023, "live")(ctx), grid(EN, "DE-LU", 2023, "mirror")(ctx)
            differ = ["raw_sha256"]
        else:  # FlatBuffers (UTC year) against the archive JSON of 2022 and 2023 (local years)
            live = grid(OMA, "DE-LU", 2023, "live")(ctx)
            mirror = pl.concat([grid(OM, "DE-LU", y, "mirror")(ctx) for y in (2022, 2023)])
            differ = ["source", "raw_sha256"]
        same = mirror.filter(pl.col("ts_utc").is_in(live["ts_utc"].implode()))
        assert same.height == live.height > 8700
        assert live.drop(differ).equals(same.drop(differ))
        assert live["price_local_per_mwh" if name == EN else "temp_c"].n_unique() > 100  # real values, not a constant


def test_reference_source_sets_the_bandwidth_and_is_in_the_lineage(shared_data):
    hist_raw, hists = REFERENCE.histograms(shared_data)
    reference = prepare_workload("alibaba-2023", 2023, mirror=shared_data,
                                 params=alibaba2023.TRACE.default_params().with_(bandwidth_model="reference"))
    assert hist_raw.sha256 in reference.report.raw_sha256s
    assert reference.tasks["bandwidth_gb"].mean() == pytest.approx(hists["bandwidth"].mean, rel=0.1)
    # the default ``ai`` model draws the sizes of tasks that run no published AI workload (CPU-only
    # pods) from the same histogram, so the file is in its lineage too
    prep = prepare_workload("alibaba-2023", 2023, mirror=shared_data)
    assert hist_raw.sha256 in prep.report.raw_sha256s
    cpu = prep.tasks.filter(pl.col("gpus") == 0)["bandwidth_gb"]
    assert cpu.mean() == pytest.approx(hists["bandwidth"].mean, rel=0.15) and cpu.max() <= 0.755
    constant = prepare_workload("alibaba-2023", 2023, mirror=shared_data,
                                params=alibaba2023.TRACE.default_params().with_(bandwidth_model="constant"))
    assert hist_raw.sha256 not in constant.report.raw_sha256s
    assert constant.tasks["bandwidth_gb"].unique().to_list() == [DeriveParams().bandwidth_constant_gb]
