"""Assemble a scenario bundle from the warehouse and write it (format: ``gridshift.bundle``).

``assemble`` reads the warehouse (read-only) and computes every file's bytes in memory, but the tasks file's,
which it streams to a spool file (``scenario_builder.tasks``: a year of tasks is never held whole);
``write`` hands them to the one bundle writer (``gridshift.bundle.publish``), which hashes them,
derives the bundle id from the content and publishes the directory atomically. Nothing depends on
the time of the build or on absolute paths, and the Parquet writer settings are fixed, so the same
inputs and parameters give the same id and byte-identical files anywhere (same gridshift + pyarrow
versions).
"""

from __future__ import annotations

import dataclasses
import json
import numbers
import shutil
import tempfile
import weakref
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

from gridshift import __version__, locations, sources
from gridshift import export_defaults as D
from gridshift import scale as scale_mod
from gridshift.bundle import (
    FORMAT_VERSION,
    NETWORK_SCHEMA,
    SIGNALS_SCHEMA,
    STEP_S,
    pretty_json,
    publish,
)
from gridshift.bundle.writer import FileContent
from gridshift.dc_params import FACILITY_PRESETS, GPU_GENERATIONS
from gridshift.errors import GridshiftError
from gridshift.home import Home
from gridshift.parquet import PARQUET_OPTIONS, parquet_bytes
from pipelines.core.redact import redact_uri
from pipelines.sources.network import PER_FLOW_CAP_MBPS
from pipelines.workload import flexibility as flex_mod
from scenario_builder import datacenters as dc_mod
from scenario_builder import sites as sites_mod
from scenario_builder import tasks as tasks_mod
from scenario_builder.resample import RULES, GapError, Resampled, resample_continuous, resample_hold, year_grid
from warehouse.db import query, read_connection, table_exists

WORKLOADS = ("synthetic", "alibaba-2020", "alibaba-2023", "none")
CARBON_BASES = ("direct", "lca")
#: what a manifest's ``parameters`` hold besides the build parameters: the stored workload's run (``_workload_run``)
WORKLOAD_RUN_KEYS = ("workload_params_sha256", "workload_seed", "workload_params")
_MIRROR_ROOTS = ("electricitymaps", "prices", "open-meteo", "egress", "reference", "alibaba", "moer-5min")


@dataclass(frozen=True)
class BuildParams:
    """Everything that determines a bundle's content (besides the warehouse rows)."""

    regions: tuple[str, ...]
    year: int
    workload: str = D.WORKLOAD
    provider: str = D.PROVIDER
    carbon_basis: str = D.CARBON_BASIS
    seed: int = D.SEED
    max_gap_hours: float = D.MAX_GAP_HOURS
    max_edge_fill_hours: float = D.MAX_EDGE_FILL_HOURS
    datacenters: str = D.DATACENTERS  # "sized" | "reference" | path of an override file (scenario_builder.datacenters)
    target_utilization: float = D.TARGET_UTILIZATION
    physics: str = D.PHYSICS  # a facility preset of gridshift.dc_params.FACILITY_PRESETS, for every site
    flexibility: str = D.FLEXIBILITY  # task flexibility model (pipelines.workload.flexibility.PROFILES)
    #: × the source cluster (gridshift.scale): workload and sites. None: the workload's own default, the
    #: source cluster's size for the synthetic workload (export_defaults.SCALE), a trace's own size for a trace
    scale: float | None = None
    gpu: str = D.GPU  # GPU generation of every site (gridshift.dc_params.GPU_GENERATIONS)

    def __post_init__(self) -> None:
        if isinstance(self.regions, str) or not isinstance(self.regions, tuple | list):
            raise GridshiftError(f"regions must be a list of region codes, got {self.regions!r}")
        for name in ("year", "seed"):  # (bool is an int to Python, never a year or a seed)
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or (name == "seed" and v < 0):
                raise GridshiftError(f"--{name} must be a{' non-negative' if name == 'seed' else 'n'} integer, "
                                     f"got {v!r}")
        for name in ("max_gap_hours", "max_edge_fill_hours", "target_utilization"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise GridshiftError(f"--{name.replace('_', '-')} must be a number, got {v!r}")
        for name in ("workload", "provider", "carbon_basis", "datacenters", "physics", "flexibility", "gpu"):
            if not isinstance(getattr(self, name), str):
                flag = "carbon" if name == "carbon_basis" else name.replace("_", "-")  # (the export's option)
                raise GridshiftError(f"--{flag} must be a string, got {getattr(self, name)!r}")
        if not self.regions:
            raise GridshiftError("no regions given")
        for r in self.regions:
            locations.get(r)  # validates the code (no path tricks can pass the pattern)
        if len(set(self.regions)) != len(self.regions):
            raise GridshiftError(f"duplicated regions in {list(self.regions)}")
        if self.workload not in WORKLOADS:
            raise GridshiftError(f"unknown workload {self.workload!r}; choose from {WORKLOADS}")
        if self.carbon_basis not in CARBON_BASES:
            raise GridshiftError(f"unknown carbon basis {self.carbon_basis!r}; choose from {CARBON_BASES}")
        if self.provider not in locations.PROVIDERS:
            raise GridshiftError(f"unknown provider {self.provider!r}; choose from {locations.PROVIDERS}")
        if not 1990 <= self.year <= 2100:
            raise GridshiftError(f"invalid year {self.year}")
        if not self.max_gap_hours >= 0:
            raise GridshiftError("--max-gap-hours must be >= 0")
        if not self.max_edge_fill_hours >= 0:
            raise GridshiftError("--max-edge-fill-hours must be >= 0")
        if self.datacenters not in dc_mod.SOURCES and not Path(self.datacenters).is_file():
            raise GridshiftError(f"--datacenters must be one of {dc_mod.SOURCES} or an existing file, "
                                 f"got {self.datacenters!r}")
        if self.physics not in FACILITY_PRESETS:
            raise GridshiftError(f"--physics must be one of {sorted(FACILITY_PRESETS)}, got {self.physics!r}")
        if not 0 < self.target_utilization <= 1:
            raise GridshiftError(f"--target-utilization must be in (0, 1], got {self.target_utilization}")
        if self.flexibility not in flex_mod.PROFILES:
            raise GridshiftError(f"--flexibility must be one of {flex_mod.PROFILES}, got {self.flexibility!r}")
        if self.scale is None:  # (frozen: the default resolved once, so the field always holds the scale used)
            object.__setattr__(self, "scale", scale_mod.PRESETS[D.SCALE] if self.workload == "synthetic"
                               else scale_mod.RACK_SCALE)
        scale_mod.check(self.scale)
        if not scale_mod.is_rack(self.scale) and self.workload != "synthetic":
            raise scale_mod.ScaleError(f"--scale applies to the synthetic workload (calibrated to the PAI 2020 "
                                       f"cluster), not to {self.workload!r}: a trace has its own size (its "
                                       "--load-factor at ingest)")
        if self.gpu not in GPU_GENERATIONS:
            raise GridshiftError(f"--gpu must be one of {sorted(GPU_GENERATIONS)}, got {self.gpu!r}")

    @property
    def load_factor(self) -> float:
        """The synthetic workload's load factor of this scale (1.0 at the ``rack`` preset)."""
        return scale_mod.load_factor(self.scale)

    @property
    def flex_params(self) -> flex_mod.FlexParams:
        """The task flexibility model (its documented defaults, or none)."""
        return flex_mod.FlexParams(profile=self.flexibility)

    @property
    def datacenters_source(self) -> str:
        """What the capacities come from: sized needs a workload; without one the reference cluster."""
        if self.datacenters == "sized" and self.workload == "none":
            return "reference"
        if self.datacenters in dc_mod.SOURCES:
            return self.datacenters
        return "sites file" if self.is_sites else "override file"

    @property
    def is_sites(self) -> bool:
        """``--datacenters FILE`` lists sites (several datacenters per location, cloud regions):
        :mod:`scenario_builder.sites`."""
        return self.datacenters not in dc_mod.SOURCES and sites_mod.is_sites_file(self.datacenters)

    @property
    def max_gap(self) -> timedelta:
        return timedelta(hours=self.max_gap_hours)

    @property
    def max_edge_fill(self) -> timedelta:
        return timedelta(hours=self.max_edge_fill_hours)

    @classmethod
    def from_manifest(cls, parameters: dict[str, Any], *, datacenters_file: str | None = None) -> BuildParams:
        """The build parameters a bundle's manifest records (its ``parameters``), read back: a manifest leaves out
        ``scale`` at ``rack`` and ``gpu`` at ``V100`` (:meth:`manifest_parameters`), whatever the export's defaults
        are now, so an absent value means those, not the current default. Besides the fields it may hold only the
        workload's run (:data:`WORKLOAD_RUN_KEYS`); anything else, a missing field or a value of the wrong type is
        refused by name. A bundle built from a ``--datacenters`` file records what the file was (an override or a
        sites file), not its path: ``datacenters_file`` gives it back, and without it such a manifest is refused."""
        if not isinstance(parameters, dict):
            raise GridshiftError(f"manifest parameters must be a JSON object, got {type(parameters).__name__}")
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(parameters) - fields - set(WORKLOAD_RUN_KEYS))
        if unknown:
            raise GridshiftError(f"manifest parameters: unknown {unknown} (build parameters: {sorted(fields)}; "
                                 f"the workload's run: {list(WORKLOAD_RUN_KEYS)})")
        missing = [k for k in ("regions", "year") if k not in parameters]
        if missing:
            raise GridshiftError(f"manifest parameters lack {missing}")
        p = {k: (tuple(v) if isinstance(v, list) else v) for k, v in parameters.items() if k in fields}
        if p.get("datacenters") in ("override file", "sites file"):
            if datacenters_file is None:
                raise GridshiftError(f"manifest parameters: the datacenters came from a file ({p['datacenters']}; the "
                                     "manifest records no paths): give that file (datacenters_file) to rebuild it")
            p["datacenters"] = datacenters_file
        p.setdefault("scale", scale_mod.RACK_SCALE)
        p.setdefault("gpu", "V100")
        return cls(**p)

    def manifest_parameters(self) -> dict[str, Any]:
        """The build parameters as written to the manifest (no paths, no times)."""
        return {
            "regions": list(self.regions), "year": self.year, "workload": self.workload,
            "provider": self.provider, "carbon_basis": self.carbon_basis, "seed": self.seed,
            "max_gap_hours": float(self.max_gap_hours),
            "max_edge_fill_hours": float(self.max_edge_fill_hours),
            "datacenters": self.datacenters_source, "physics": self.physics, "flexibility": self.flexibility,
            **({"target_utilization": float(self.target_utilization)} if self.datacenters_source == "sized" else {}),
            # recorded when not the pre-issue-34 values (absent = rack, V100), so that a bundle of those keeps its id
            **({} if scale_mod.is_rack(self.scale) else {"scale": float(self.scale)}),
            **({} if self.gpu == "V100" else {"gpu": self.gpu}),
        }


@dataclass
class Assembled:
    """A bundle ready to publish: file name -> bytes, or a finished file in ``spool`` (the tasks', too large to
    hold), and the manifest without ``files``/``bundle_id``. ``spool`` is removed by :func:`write`, by
    :meth:`discard` or when this object is collected."""

    files: dict[str, FileContent]
    manifest: dict[str, Any]
    quality_rows: list[dict[str, Any]] = field(default_factory=list)
    spool: Path | None = None

    def __post_init__(self) -> None:
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.spool, True) if self.spool else None

    def discard(self) -> None:
        """Remove the spooled files now."""
        if self._cleanup is not None:
            self._cleanup()


@dataclass
class BuiltBundle:
    path: Path
    bundle_id: str
    manifest: dict[str, Any]
    quality_rows: list[dict[str, Any]]
    reused: bool = False


# ------------------------------------------------------------------------------------------ helpers
def portable_uri(uri: str) -> str:
    """A raw file's URI without machine-specific parts: ``mirror:<relpath>`` for mirror files. (The lineage
    also passes it through ``redact_uri``: a warehouse written before URIs were stored without
    credentials may still hold one, and a bundle is the file people share.)"""
    if uri.startswith("file://"):
        parts = uri[len("file://"):].split("/")
        for i in range(len(parts) - 1, -1, -1):
            if parts[i] in _MIRROR_ROOTS:
                return "mirror:" + "/".join(parts[i:])
        return "file:" + parts[-1]
    return uri


def _r6(x: float | None) -> float | None:
    return None if x is None else round(float(x), 6)


# ------------------------------------------------------------------------------------------ reading
def _window(year: int, max_gap: timedelta) -> tuple[datetime, datetime]:
    pad = max_gap + timedelta(days=1)
    return datetime(year, 1, 1, tzinfo=UTC) - pad, datetime(year + 1, 1, 1, tzinfo=UTC) + pad


def _read_signals(con, params: BuildParams) -> dict[str, pl.DataFrame]:
    lo, hi = _window(params.year, params.max_gap)
    regions = list(params.regions)
    carbon_col = f"carbon_{params.carbon_basis}_g_per_kwh"
    sql = {
        "carbon": f"SELECT location, ts_utc, {carbon_col} AS carbon_g_per_kwh, is_estimated AS carbon_is_estimated,"
                  f" raw_sha256 FROM grid_carbon WHERE {carbon_col} IS NOT NULL AND",
        "price": "SELECT location, ts_utc, CAST(resolution_min AS BIGINT) * 60 AS resolution_s, price_usd_per_mwh,"
                 " raw_sha256 FROM grid_price WHERE",
        "weather": "SELECT location, ts_utc, temp_c, rh_pct, wetbulb_c, raw_sha256 FROM weather WHERE",
    }
    out = {}
    for kind, head in sql.items():
        out[kind] = query(
            con, f"{head} location IN (SELECT unnest($regions)) AND ts_utc >= $lo AND ts_utc < $hi "
            "ORDER BY location, ts_utc",
            {"regions": regions, "lo": lo, "hi": hi},
        ).with_columns(pl.col("ts_utc").dt.cast_time_unit("us").dt.convert_time_zone("UTC"))
    return out


def default_load_factor(workload: str) -> float:
    """The load factor ``workload`` is derived at when none is asked for (the workload asset, ``gridshift ingest``):
    the one a default bundle of it needs (:attr:`BuildParams.load_factor` at ``scale=None``), so that deriving with
    the defaults and then exporting with them builds from what was derived: the synthetic year at
    ``export_defaults.SCALE``, a trace at its own load (1)."""
    return scale_mod.load_factor(scale_mod.PRESETS[D.SCALE]) if workload == "synthetic" else 1.0


def workload_load_factor(derive: dict[str, Any] | None) -> float | None:
    """The load factor a stored workload was derived at (its ``workload_runs.params_json``): a synthetic
    year's generator records it in ``extra`` (its derivation then runs at 1), a trace's at the top; None if
    not recorded."""
    if not isinstance(derive, dict):
        return None
    for name, blob in derive.get("extra") or ():
        if name == "synthetic":
            try:
                return float(json.loads(blob)["load_factor"])
            except (ValueError, TypeError, KeyError):
                return None
    lf = derive.get("load_factor")
    return float(lf) if isinstance(lf, int | float) else None


def _workload_run(con, workload: str, year: int) -> tuple[list[str], dict[str, Any]]:
    """Raw inputs (sha256) and derivation parameters of a stored (workload, year), if recorded."""
    if not table_exists(con, "workload_runs"):
        return [], {}
    rows = query(con, "SELECT params_json, params_sha256, raw_sha256s FROM workload_runs "
                      "WHERE workload = ? AND year = ?", [workload, year])
    if rows.height == 0:
        return [], {}
    r = rows.row(0, named=True)
    try:
        sha = [str(x) for x in json.loads(r["raw_sha256s"])]
        derive = json.loads(r["params_json"])
        seed = derive.get("seed")
    except (ValueError, TypeError, AttributeError):
        sha, seed, derive = [], None, None
    # the whole derivation (load factor, input-size model, ...): a bundle says how its tasks were made
    return sha, dict(zip(WORKLOAD_RUN_KEYS, (r["params_sha256"], seed, derive), strict=True))


def _network(con, params: BuildParams) -> pl.DataFrame:
    """Egress price (by the locations' cloud regions) and path (by location pair) of every ordered pair
    of the bundle's locations; a location to itself moves nothing: 0 USD/GB, 0 ms, the per-flow cap
    (the simulator does not transfer within a datacenter)."""
    prov = params.provider
    egress = query(con, "SELECT src_region, dst_region, usd_per_gb FROM egress_price WHERE provider = ?", [prov])
    paths = query(con, "SELECT src_location, dst_location, throughput_mbps, rtt_ms FROM network_path "
                       "WHERE provider = ?", [prov])
    if egress.height == 0 or paths.height == 0:
        raise GridshiftError(f"no egress prices or network paths for provider {prov!r} in the warehouse")
    locs = [locations.get(c) for c in params.regions]
    pairs = pl.DataFrame({
        "src_location": [a.location for a in locs for _ in locs],
        "dst_location": [b.location for _ in locs for b in locs],
        "src_region": [a.cloud_region(prov) for a in locs for _ in locs],
        "dst_region": [b.cloud_region(prov) for _ in locs for b in locs],
    })
    net = (pairs.join(egress, on=["src_region", "dst_region"], how="left", maintain_order="left")
           .join(paths, on=["src_location", "dst_location"], how="left", maintain_order="left"))
    same = pl.col("src_location") == pl.col("dst_location")
    net = net.with_columns(
        usd_per_gb=pl.when(same).then(pl.col("usd_per_gb").fill_null(0.0)).otherwise(pl.col("usd_per_gb")),
        throughput_mbps=pl.when(same).then(pl.lit(PER_FLOW_CAP_MBPS)).otherwise(pl.col("throughput_mbps")),
        rtt_ms=pl.when(same).then(pl.lit(0.0)).otherwise(pl.col("rtt_ms")),
    )
    bad = net.filter(pl.any_horizontal(pl.col("usd_per_gb", "throughput_mbps", "rtt_ms").is_null()))
    if bad.height:
        r = bad.row(0, named=True)
        what = "egress price" if r["usd_per_gb"] is None else "network path"
        raise GridshiftError(
            f"network: no {prov} {what} for {r['src_location']} ({r['src_region']}) -> {r['dst_location']} "
            f"({r['dst_region']}); ingest the reference tables again "
            f"(scenario_builder ingest --sources network --year {params.year})")
    return net.select(NETWORK_SCHEMA.names)


def _window_mbit_ms(con, provider: str) -> float | None:
    """The provider's fitted throughput x RTT (the Persico window of ``pipelines.sources.network``), read
    back from its window-derived paths (every such row has that product); None if it has none."""
    r = con.execute("SELECT median(throughput_mbps * rtt_ms) FROM network_path WHERE provider = ? AND "
                    "throughput_basis LIKE 'derived_window%'", [provider]).fetchall()
    return None if not r or r[0][0] is None else float(r[0][0])


def _sites(params: BuildParams) -> list[sites_mod.Site]:
    """The sites of a sites file, checked against ``params.regions`` (every site's location is one of them,
    every region has a site)."""
    sites = sites_mod.read(params.datacenters, physics=params.physics, gpu=params.gpu)
    used = {s.location for s in sites}
    extra = sorted(used - set(params.regions))
    if extra:
        raise GridshiftError(f"{params.datacenters}: sites at location(s) {extra} not in --regions "
                             f"{','.join(params.regions)} (add them: their signals are needed)")
    idle = [r for r in params.regions if r not in used]
    if idle:
        raise GridshiftError(f"{params.datacenters}: no site at region(s) {idle} of --regions")
    return sites


def _lineage(con, shas: set[str]) -> list[dict[str, str]]:
    if not shas:
        return []
    rows = query(con, "SELECT sha256, source, uri FROM raw_files WHERE sha256 IN (SELECT unnest($s))",
                 {"s": sorted(shas)})
    found = set(rows["sha256"].to_list())
    lost = sorted(shas - found)
    if lost:
        raise GridshiftError(f"raw_files has no lineage row for sha256 {lost[:3]}")
    out = [{"sha256": s, "source": src, "uri": portable_uri(redact_uri(u))} for s, src, u in rows.iter_rows()]
    return sorted(out, key=lambda d: (d["source"], d["uri"], d["sha256"]))


# ------------------------------------------------------------------------------------------ assembly
def _resample_location(sig: dict[str, pl.DataFrame], code: str, grid: pl.Series, params: BuildParams
                       ) -> dict[str, Resampled]:
    def rows(kind: str) -> pl.DataFrame:
        return sig[kind].filter(pl.col("location") == code)

    lim = {"max_gap": params.max_gap, "max_edge_fill": params.max_edge_fill}
    return {
        "carbon": resample_continuous(rows("carbon"), grid, location=code, signal="carbon", **lim,
                                      value_cols=["carbon_g_per_kwh"], flag_cols=("carbon_is_estimated",)),
        "price": resample_hold(rows("price"), grid, location=code, signal="price", **lim,
                               value_cols=["price_usd_per_mwh"]),
        "weather": resample_continuous(rows("weather"), grid, location=code, signal="weather", **lim,
                                       value_cols=["temp_c", "rh_pct", "wetbulb_c"]),
    }


def _plausibility_overrides(con, params: BuildParams) -> dict[tuple[str, str], dict[str, str]]:
    """(location, signal) -> {year: checks} of every partition the bundle reads (its year and the neighbours its
    edges may use) that was ingested past a plausibility check with ``--allow-implausible``
    (``partition_quality.plausibility_overridden``): the bundle's manifest carries that trace."""
    if not table_exists(con, "partition_quality"):
        return {}
    have = set(query(con, "SELECT column_name FROM information_schema.columns "
                          "WHERE table_name = 'partition_quality'")["column_name"].to_list())
    if "plausibility_overridden" not in have:  # a warehouse from before the column: no override recorded
        return {}
    rows = query(con, "SELECT location, signal, year, plausibility_overridden FROM partition_quality "
                      "WHERE plausibility_overridden IS NOT NULL AND year BETWEEN ? AND ? ORDER BY ALL",
                 [params.year - 1, params.year + 1])
    out: dict[tuple[str, str], dict[str, str]] = {}
    for loc, sig, year, checks in rows.iter_rows():
        out.setdefault((loc, sig), {})[str(year)] = checks
    return out


def _check_load_factor(run: dict[str, Any], params: BuildParams) -> None:
    """A synthetic year derived at another load factor than the bundle's scale needs is refused."""
    stored = workload_load_factor(run.get("workload_params"))
    if params.workload == "synthetic" and stored is not None and stored != params.load_factor:
        raise GridshiftError(f"workload_tasks holds the synthetic {params.year} year at load factor {stored:g}, "
                             f"this bundle's scale {params.scale:g} needs {params.load_factor:g} (derive it again: "
                             "gridshift export does)")


def assemble(params: BuildParams, home: Home, spool: Path | None = None) -> Assembled:
    """Read the warehouse and compute every bundle file's bytes, the tasks file streamed to a private directory
    in ``spool`` (default: the system's temporary directory; give the output's, so that publishing renames it)
    (raises GapError on a long gap; the private directory is then removed)."""
    if spool is not None:
        Path(spool).mkdir(parents=True, exist_ok=True)
    spool_dir = Path(tempfile.mkdtemp(prefix=".gridshift-export-", dir=spool))
    try:
        return _assemble(params, home, spool_dir)
    except BaseException:
        shutil.rmtree(spool_dir, ignore_errors=True)
        raise


def _assemble(params: BuildParams, home: Home, spool_dir: Path) -> Assembled:
    grid = year_grid(params.year)
    n_steps = grid.len()
    sites = _sites(params) if params.is_sites else None
    demand = None if sites is not None or params.datacenters_source != "sized" else \
        dc_mod.sizing_demand(list(params.regions), params.year)
    with read_connection(home.warehouse_path) as con:
        sig = _read_signals(con, params)
        task_sha, workload_run = _workload_run(con, params.workload, params.year)
        _check_load_factor(workload_run, params)
        tasks_file = spool_dir / "tasks.parquet"
        written = tasks_mod.write_tasks(tasks_mod.WorkloadTasks(con, params), tasks_file, demand)
        net = _network(con, params)
        if sites is not None:
            net = sites_mod.site_network(sites, net, params.provider, _window_mbit_ms(con, params.provider))
        egress_sha = set(query(con, "SELECT DISTINCT raw_sha256 FROM egress_price WHERE provider = ?",
                               [params.provider])["raw_sha256"].to_list())
        net_sha = set(query(con, "SELECT DISTINCT raw_sha256 FROM network_path WHERE provider = ?",
                            [params.provider])["raw_sha256"].to_list())

        overridden = _plausibility_overrides(con, params)
        frames, quality, quality_rows, used = [], {}, [], set(task_sha) | egress_sha | net_sha
        gap_errors = []
        for code in params.regions:
            try:
                res = _resample_location(sig, code, grid, params)
            except GapError as exc:
                gap_errors += exc.gaps
                continue
            c, p, w = res["carbon"].frame, res["price"].frame, res["weather"].frame
            frames.append(pl.DataFrame({
                "location": pl.Series([code] * n_steps, dtype=pl.String),
                "ts_utc": grid,
                "carbon_g_per_kwh": c["carbon_g_per_kwh"], "price_usd_per_mwh": p["price_usd_per_mwh"],
                "temp_c": w["temp_c"], "wetbulb_c": w["wetbulb_c"], "rh_pct": w["rh_pct"],
                "carbon_is_estimated": c["carbon_is_estimated"], "carbon_is_filled": c["is_filled"],
                "price_is_filled": p["is_filled"], "weather_is_filled": w["is_filled"],
            }))
            quality[code] = {}
            for kind, r in res.items():
                used |= set(r.raw_sha256)
                est = float(c["carbon_is_estimated"].mean()) if kind == "carbon" else None
                q = {
                    "coverage": _r6(1.0 - r.filled_count / n_steps), "estimated_share": _r6(est),
                    "filled_count": r.filled_count, "gap_count": len(r.gaps),
                    "max_gap_hours": _r6(max((g.hours for g in r.gaps), default=0.0)),
                    "gaps": [{"start": g.start.isoformat(), "end": g.end.isoformat(), "kind": g.kind}
                             for g in r.gaps[:20]],
                }
                if (code, kind) in overridden:  # only then: a bundle without overrides keeps its id
                    q["plausibility_overridden"] = overridden[(code, kind)]
                quality[code][kind] = q
                quality_rows.append({"location": code, "signal": kind, **q})
        if gap_errors:
            raise GapError(gap_errors, params.max_gap)
        if sites is not None and len({s.location for s in sites}) < len(sites):
            # sites of one location: their paths use the Azure RTT fit's file (landed with network_path)
            used.add(sites_mod.azure_latency.raw().sha256)
        lineage = _lineage(con, used)

    if sites is not None:  # every site takes its location's rows, relabelled (one resampling per location)
        by_loc = {str(f["location"][0]): f for f in frames}
        frames = [by_loc[s.location].with_columns(location=pl.lit(s.label, dtype=pl.String)) for s in sites]
    signals = pl.concat(frames)
    if sites is not None:
        dcs, sizing = [s.entry for s in sites], {}
    else:
        spec = params.datacenters if params.datacenters_source != "reference" else "reference"
        dcs, sizing = dc_mod.build(list(params.regions), spec, demand=demand,
                                   target_utilization=params.target_utilization, physics=params.physics,
                                   gpu=params.gpu)
    # every source whose raw files are in the lineage, plus the workload's own source, credited from the
    # one registry (an unregistered source is an error: no data whose terms nobody declared)
    used_sources = {d["source"] for d in lineage}
    if params.workload != "none":
        used_sources.add(params.workload)
    attributions = sources.credits(used_sources)
    prov = params.provider
    location_meta = {}
    for code in params.regions:
        loc = locations.get(code)
        location_meta[code] = {
            "zone_id": loc.emaps_zone, "timezone": loc.timezone, "market": loc.market,
            "currency": loc.price_currency, "price_unit_in_bundle": "USD/MWh",
            "lat": loc.lat, "lon": loc.lon, "weather_place": loc.weather_place,
            "macro_cluster": loc.macro_cluster, "cloud_provider": prov, "cloud_region": loc.cloud_region(prov),
        }
    if sites is not None:  # keyed by datacenter label; ``location`` names the signals' location
        location_meta = {s.label: {**location_meta[s.location], **s.meta(prov)} for s in sites}
    files = {
        "signals.parquet": parquet_bytes(signals, SIGNALS_SCHEMA),
        "tasks.parquet": tasks_file,
        "network.parquet": parquet_bytes(net, NETWORK_SCHEMA),
        "datacenters.json": pretty_json({"datacenters": dcs}),
    }
    start = datetime(params.year, 1, 1, tzinfo=UTC)
    manifest = {
        "format_version": FORMAT_VERSION,
        "gridshift_version": __version__,
        "year": params.year,
        "step_s": STEP_S,
        "n_steps": n_steps,
        "start_utc": start.isoformat(),
        "locations": [s.label for s in sites] if sites is not None else list(params.regions),
        "parameters": {**params.manifest_parameters(), **workload_run},
        "location_meta": location_meta,
        "quality": quality,
        "lineage": lineage,
        "attributions": attributions,
        "resampling": {**RULES, "max_gap_hours": float(params.max_gap_hours),
                       "max_edge_fill_hours": float(params.max_edge_fill_hours)},
        "n_tasks": written.n_tasks,
        "flexibility": {"parameters": params.flex_params.manifest(), "seed": params.seed,
                        **written.flexibility},
        **({"sizing": sizing} if sizing else {}),
        "writer": {"parquet": {k: v for k, v in PARQUET_OPTIONS.items()}, "pyarrow": pa.__version__},
    }
    return Assembled(files, manifest, quality_rows, spool=spool_dir)


def write(assembled: Assembled, out_dir: Path) -> BuiltBundle:
    """Write the bundle to ``out_dir/<bundle_id>`` (``gridshift.bundle.publish``: atomic, an intact
    existing copy is reused, concurrent writers of one id end with one complete directory)."""
    try:
        done = publish(assembled.files, assembled.manifest, Path(out_dir))
    finally:
        assembled.discard()
    return BuiltBundle(done.path, done.bundle_id, done.manifest, assembled.quality_rows, reused=done.reused)


def build(params: BuildParams, home: Home, out_dir: Path | None = None) -> BuiltBundle:
    """Assemble from the warehouse and write (inputs must already be in the warehouse)."""
    out = Path(out_dir if out_dir is not None else home.bundles_dir)
    out.mkdir(parents=True, exist_ok=True)
    return write(assemble(params, home, spool=out), out)
