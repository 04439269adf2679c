"""The gridstatus adapter for ERCOT, NYISO, PJM and IESO, with gridstatus faked (it is an optional extra).

``gridstatus`` is replaced in ``sys.modules`` by a fake whose classes answer like gridstatus does:
the same class and method names, the same columns per ISO, tz-aware ``Interval Start``/``Interval
End`` in the ISO's zone, hourly day-ahead intervals (so a DST day is 23 or 25 local hours) and
other nodes mixed in where gridstatus returns them. The real :class:`GridstatusAdapter` runs
against it: what it asks for (class, method, keyword arguments, PJM's key) is checked too.
"""

from __future__ import annotations

import sys
import types
from datetime import UTC, date, datetime, timedelta

import polars as pl
import pytest

from gridshift import locations
from gridshift.errors import DataError, SourceUnavailableError
from gridshift.home import Home
from gridshift.quality import MAX_GAP
from pipelines.sources import iso as iso_prices
from pipelines.sources import registry
from pipelines.sources.iso import GridstatusAdapter, GridstatusUnavailable

HOUR = timedelta(hours=1)

# per gridstatus class: (columns in gridstatus' order, time zone, node column, other nodes returned)
ERCOT_COLS = ["Time", "Interval Start", "Interval End", "Location", "Location Type", "Market", "SPP"]
NYISO_COLS = ["Time", "Interval Start", "Interval End", "Market", "Location", "Location Type", "LMP", "Energy",
              "Congestion", "Loss"]
PJM_COLS = ["Time", "Interval Start", "Interval End", "Market", "Location Id", "Location Name",
            "Location Short Name", "Location Type", "LMP", "Energy", "Congestion", "Loss"]
HOEP_COLS = ["Interval Start", "Interval End", "HOEP", "Hour 1 Predispatch", "Hour 2 Predispatch",
             "Hour 3 Predispatch", "OR 10 Min Sync", "OR 10 Min non-sync", "OR 30 Min"]
ZONAL_COLS = ["Interval Start", "Interval End", "Location", "LMP", "Energy", "Congestion", "Loss"]


def price_at(ts) -> float:
    """A distinct, partly negative price per UTC hour: a lost, doubled or shifted hour shows."""
    h = int(ts.timestamp()) // 3600
    return round((h % 389) * 0.25 - 20.0, 2)


def _frame(cols: list[str], tz: str, lo, hi, nodes: list[dict]):
    import pandas as pd

    utc = pd.date_range(pd.Timestamp(lo).tz_convert("UTC"), pd.Timestamp(hi).tz_convert("UTC"), freq="h",
                        inclusive="left")
    parts = []
    for node in nodes:
        price = [price_at(t) + node.get("offset", 0.0) for t in utc]
        df = pd.DataFrame({
            "Time": utc.tz_convert(tz), "Interval Start": utc.tz_convert(tz),
            "Interval End": (utc + pd.Timedelta(hours=1)).tz_convert(tz), "Market": "DAY_AHEAD_HOURLY",
            "LMP": price, "SPP": price, "HOEP": price, "Energy": price, "Congestion": 0.0, "Loss": 0.0,
            "Hour 1 Predispatch": price, "Hour 2 Predispatch": price, "Hour 3 Predispatch": price,
            "OR 10 Min Sync": 0.1, "OR 10 Min non-sync": 0.1, "OR 30 Min": 0.1,
            **{k: v for k, v in node.items() if k != "offset"},
        })
        parts.append(df[cols])
    return pd.concat(parts, ignore_index=True).sort_values("Interval Start", kind="stable").reset_index(drop=True)


class FakeGridstatus(types.ModuleType):
    """``import gridstatus`` → this: records every call, answers in gridstatus' shapes."""

    def __init__(self, ieso_tz: str = "EST") -> None:
        super().__init__("gridstatus")
        self.calls: list[tuple] = []
        fake = self

        class _Iso:
            def __init__(self, **kwargs) -> None:
                fake.calls.append((type(self).__name__, "__init__", kwargs))

            def _record(self, method, date, end, kwargs):
                fake.calls.append((type(self).__name__, method, {"date": date, "end": end, **kwargs}))

        class Ercot(_Iso):
            def get_spp(self, date, end=None, **kw):
                self._record("get_spp", date, end, kw)
                return _frame(ERCOT_COLS, "America/Chicago", date, end, [
                    {"Location": "HB_HOUSTON", "Location Type": "Trading Hub", "offset": 3.0},
                    {"Location": "HB_HUBAVG", "Location Type": "Trading Hub"}])

        class NYISO(_Iso):
            def get_lmp(self, date, end=None, **kw):
                self._record("get_lmp", date, end, kw)
                return _frame(NYISO_COLS, "America/New_York", date, end, [
                    {"Location": "CAPITL", "Location Type": "Zone", "offset": 5.0},
                    {"Location": "N.Y.C.", "Location Type": "Zone"}])

        class PJM(_Iso):
            def get_lmp(self, date, end=None, **kw):
                self._record("get_lmp", date, end, kw)
                return _frame(PJM_COLS, "America/New_York", date, end, [
                    {"Location Id": 1, "Location Name": "PJM-RTO", "Location Short Name": "PJM-RTO",
                     "Location Type": "ZONE"}])

        class IESO(_Iso):
            def get_hoep_historical_hourly(self, date, end=None, **kw):
                self._record("get_hoep_historical_hourly", date, end, kw)
                return _frame(HOEP_COLS, fake.ieso_tz, date, end, [{}])

            def get_lmp_day_ahead_hourly_ontario_zonal(self, date, end=None, **kw):
                self._record("get_lmp_day_ahead_hourly_ontario_zonal", date, end, kw)
                return _frame(ZONAL_COLS, fake.ieso_tz, date, end, [{"Location": "ONTARIO"}])

        self.ieso_tz = ieso_tz
        self.Ercot, self.NYISO, self.PJM, self.IESO = Ercot, NYISO, PJM, IESO


@pytest.fixture
def gridstatus(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no stray .env from the checkout
    monkeypatch.delenv("PJM_API_KEY", raising=False)
    mod = FakeGridstatus()
    monkeypatch.setitem(sys.modules, "gridstatus", mod)
    iso_prices.set_adapter_factory(None)
    return mod


CASES = [  # location, gridstatus class, method, kwargs, node, zone of the frame
    ("US-TEX-ERCO", "Ercot", "get_spp", {"market": "DAY_AHEAD_HOURLY", "locations": ["HB_HUBAVG"],
                                         "location_type": "Trading Hub"}, "HB_HUBAVG", "America/Chicago"),
    ("US-NY-NYIS", "NYISO", "get_lmp", {"market": "DAY_AHEAD_HOURLY", "locations": ["N.Y.C."],
                                        "location_type": "zone"}, "N.Y.C.", "America/New_York"),
    ("US-MIDA-PJM", "PJM", "get_lmp", {"market": "DAY_AHEAD_HOURLY", "locations": [1]}, "PJM-RTO",
     "America/New_York"),
    ("CA-ON", "IESO", "get_hoep_historical_hourly", {}, "ONTARIO", "America/Toronto"),
    ("CA-ON", "IESO", "get_hoep_historical_hourly", {}, "ONTARIO", "EST"),  # IESO reports in EST all year
]
# 2023 DST changes: US and Canada on 12 March (23 local hours) and 5 November (25 local hours)
SPRING, FALL = date(2023, 3, 12), date(2023, 11, 5)


@pytest.mark.parametrize("code,cls,method,kwargs,node,tz", CASES, ids=lambda v: v if isinstance(v, str) else None)
def test_adapter_year_utc_grid_dst_values_and_calls(gridstatus, monkeypatch, tmp_path, code, cls, method, kwargs,
                                                     node, tz):
    if cls == "PJM":
        monkeypatch.setenv("PJM_API_KEY", "pjm-secret-key-789")
    gridstatus.ieso_tz = tz
    loc = locations.get(code)
    home = Home(tmp_path / "home")
    rf = iso_prices.SOURCE.fetch(loc, 2023, home=home, now=datetime(2025, 1, 1, tzinfo=UTC))
    # what the adapter asked gridstatus for
    init = [c for c in gridstatus.calls if c[1] == "__init__"]
    assert init == [(cls, "__init__", {"api_key": "pjm-secret-key-789"} if cls == "PJM" else {})]
    pulls = [c for c in gridstatus.calls if c[1] != "__init__"]
    assert [(c[0], c[1]) for c in pulls] == [(cls, method)]
    assert pulls[0][2] == {"date": datetime(2023, 1, 1, tzinfo=UTC), "end": datetime(2024, 1, 1, tzinfo=UTC),
                           **kwargs}
    assert b"pjm-secret-key-789" not in rf.content and "pjm-secret-key-789" not in rf.uri
    pull = pl.read_csv(rf.content)
    assert pull["node"].unique().to_list() == [node]  # other nodes in the frame were dropped
    df = iso_prices.SOURCE.parse(rf, loc, 2023)
    assert df.height == 8760
    assert df["ts_utc"][0] == datetime(2023, 1, 1, tzinfo=UTC)
    assert (df["ts_utc"].diff().drop_nulls() == HOUR).all()  # no UTC hour lost or doubled at the DST changes
    assert df["price_local_per_mwh"].to_list() == [price_at(t) for t in df["ts_utc"]]
    assert df["resolution_min"].unique().to_list() == [60]
    local = df.with_columns(d=pl.col("ts_utc").dt.convert_time_zone(loc.timezone).dt.date())
    per_day = dict(local.group_by("d").len().iter_rows())
    assert (per_day[SPRING], per_day[FALL], per_day[date(2023, 6, 1)]) == (23, 25, 24)
    if code == "CA-ON":
        assert df["currency"].unique().to_list() == ["CAD"]
        assert df["usd_per_local"].unique().to_list() == [0.7409]  # pipelines/core/data/fx_usd_per_unit.csv, 2023
        assert df["price_usd_per_mwh"][5] == pytest.approx(df["price_local_per_mwh"][5] * 0.7409)
    else:
        assert df["currency"].unique().to_list() == ["USD"] and df["usd_per_local"].unique().to_list() == [1.0]
    # a historical year is pulled once: the persisted pull serves the next fetch
    again = iso_prices.SOURCE.fetch(loc, 2023, home=home, now=datetime(2025, 1, 1, tzinfo=UTC))
    assert again.sha256 == rf.sha256 and len(pulls) == len([c for c in gridstatus.calls if c[1] != "__init__"])


def test_dst_day_alone_is_23_and_25_utc_hours(gridstatus, monkeypatch):
    """One local day at each change, as a one-day pull would return it (interval start, local zone)."""
    monkeypatch.setenv("PJM_API_KEY", "k-123456")
    for code, tz in (("US-TEX-ERCO", "America/Chicago"), ("US-NY-NYIS", "America/New_York"),
                     ("US-MIDA-PJM", "America/New_York")):
        spec = iso_prices.spec_for(locations.get(code))
        for day, n in ((SPRING, 23), (FALL, 25)):
            import pandas as pd

            lo = pd.Timestamp(day, tz=tz)
            frame = GridstatusAdapter().pull(spec, lo.to_pydatetime(), (lo + pd.DateOffset(days=1)).to_pydatetime())
            local_hours = frame[frame["Interval Start"].dt.tz_convert(tz).dt.date == day]
            csv = pl.read_csv(iso_prices.normalize(frame, spec))
            assert csv.height == n and len(local_hours) // (2 if code != "US-MIDA-PJM" else 1) == n
            ts = csv["interval_start_utc"].str.to_datetime("%Y-%m-%dT%H:%M:%SZ")
            assert ts.n_unique() == n and (ts.diff().drop_nulls() == HOUR).all()


def test_ieso_year_across_market_renewal_joins_hoep_and_zonal(gridstatus, tmp_path):
    loc = locations.get("CA-ON")
    rf = iso_prices.SOURCE.fetch(loc, 2025, home=Home(tmp_path / "h"), now=datetime(2026, 2, 1, tzinfo=UTC))
    pulls = [(c[1], c[2]["date"], c[2]["end"]) for c in gridstatus.calls if c[1] != "__init__"]
    renewal = iso_prices.IESO_MARKET_RENEWAL
    assert pulls == [("get_hoep_historical_hourly", datetime(2025, 1, 1, tzinfo=UTC), renewal),
                     ("get_lmp_day_ahead_hourly_ontario_zonal", renewal, datetime(2026, 1, 1, tzinfo=UTC))]
    df = iso_prices.SOURCE.rows(rf, loc, 2025, max_gap=MAX_GAP, rates={("CAD", 2025): 0.72})
    assert df.height == 8760 and (df["ts_utc"].diff().drop_nulls() == HOUR).all()
    assert df["price_local_per_mwh"].to_list() == [price_at(t) for t in df["ts_utc"]]


def test_pjm_without_key_says_how_to_get_one_before_importing_gridstatus(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PJM_API_KEY", raising=False)
    monkeypatch.setitem(sys.modules, "gridstatus", None)  # not installed: the key is still reported first
    spec = iso_prices.SPECS["PJM"]
    with pytest.raises(SourceUnavailableError) as info:
        GridstatusAdapter().pull(spec, datetime(2023, 1, 1, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=UTC))
    msg = str(info.value)
    assert not isinstance(info.value, GridstatusUnavailable)
    assert "PJM needs PJM_API_KEY" in msg and "https://dataminer2.pjm.com" in msg and "mirror" in msg
    assert "PJM_API_KEY" in registry.how_to("price", locations.get("US-MIDA-PJM"))
    # with the key but without gridstatus: how to install it
    monkeypatch.setenv("PJM_API_KEY", "k-123456")
    with pytest.raises(GridstatusUnavailable, match=r"gridstatus.*prices/standardized"):
        GridstatusAdapter().pull(spec, datetime(2023, 1, 1, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=UTC))


def test_frame_with_other_nodes_only_is_refused(gridstatus):
    import pandas as pd

    spec = iso_prices.SPECS["NYISO"]
    frame = _frame(NYISO_COLS, "America/New_York", pd.Timestamp("2023-01-01", tz="UTC"),
                   pd.Timestamp("2023-01-02", tz="UTC"),
                   [{"Location": "CAPITL", "Location Type": "Zone"}, {"Location": "WEST", "Location Type": "Zone"}])
    with pytest.raises(DataError, match=r"several nodes and not 'N\.Y\.C\.'"):
        iso_prices.normalize(frame, spec)


def test_naive_timestamps_are_refused(gridstatus):
    import pandas as pd

    spec = iso_prices.SPECS["ERCOT"]
    frame = _frame(ERCOT_COLS, "America/Chicago", pd.Timestamp("2023-03-12", tz="UTC"),
                   pd.Timestamp("2023-03-13", tz="UTC"), [{"Location": "HB_HUBAVG", "Location Type": "Trading Hub"}])
    frame["Interval Start"] = frame["Interval Start"].dt.tz_localize(None)
    with pytest.raises(DataError, match="naive"):
        iso_prices.normalize(frame, spec)
