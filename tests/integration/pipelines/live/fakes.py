"""Loopback fake publishers (127.0.0.1 only) serving real-format responses built from ../shared/data.

One ``FakePublishers`` server answers, by path:

- ``/v1/archive``                     Open-Meteo archive API, FlatBuffers (built with ``flatbuffers``)
- ``/api``                            ENTSO-E Transparency API, A44 day-ahead XML (``securityToken``)
- ``/emaps-csv/{zone}_{year}_hourly.csv``  Electricity Maps yearly CSV (the mirror's bytes)
- ``/v3/carbon-intensity/past-range`` Electricity Maps API v3 JSON (``auth-token`` header)
- ``/files/{name}``                   any bytes (for the checksummed download helper)

Faults are queued per path prefix and consumed in order: ``("status", 429, {"Retry-After": "1"})``,
``("status", 500)``, ``("hang",)`` (no answer at all: the request is held until the client gives up and
closes its connection, so only the client's read timeout ends it, however loaded the machine),
``("truncate",)``, ``("html",)``, ``("redirect", location)`` (a 302 to ``location``, in which ``{query}`` is
replaced by the request's own query string, tokens included, as a hostile or misconfigured server would),
``("body", bytes)`` (a 200 with these bytes and their own Content-Length: a well-formed answer the client
cannot tell from the file by its transfer).
Every request is recorded (path, query, headers) so tests can count network calls
(:meth:`FakeState.wait_for` waits, bounded, until the server has seen a number of them). With ``basic_auth``
(user, password) set, every request without that HTTP basic auth is answered 401.
"""

from __future__ import annotations

import base64
import csv
import json
import select
import socket
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import numpy as np

from tests.unit.pipelines.fixtures.grid import EntsoeDay, build_weather_fb, entsoe_xml

#: bounds a wait for requests the server has not yet seen (a hang of the test, not a performance check)
WAIT_LIMIT_S = 120.0

# ----------------------------------------------------------------------------- Open-Meteo FlatBuffers

# openmeteo_sdk enums: Variable.temperature=47, relative_humidity=29, cloud_cover=3, wind_speed=59;
# Unit.celsius=1, percentage=35, kilometres_per_hour=24
OM_VARS = {
    "temperature_2m": (47, 2, 1, "temperature_2m"),
    "relative_humidity_2m": (29, 2, 35, "relative_humidity_2m"),
    "cloud_cover": (3, 0, 35, "cloudcover"),
    "wind_speed_10m": (59, 10, 24, "windspeed_10m"),
}


def openmeteo_series(data: Path, location: str) -> tuple[float, float, dict[int, dict[str, float]]]:
    """All mirror JSON years of a location as {unix hour: {json var: value}} (UTC = time − offset)."""
    by_ts: dict[int, dict[str, float]] = {}
    lat = lon = None
    for f in sorted((data / "open-meteo" / location).glob("*.json")):
        body = json.loads(f.read_bytes())
        lat, lon, off = body["latitude"], body["longitude"], int(body["utc_offset_seconds"])
        h = body["hourly"]
        for i, t in enumerate(h["time"]):
            ts = int(datetime.fromisoformat(t).replace(tzinfo=UTC).timestamp()) - off
            by_ts[ts] = {k: h[k][i] for k in h if k != "time"}
    return lat, lon, by_ts


# ----------------------------------------------------------------------------- ENTSO-E XML
# (the A44 document and the FlatBuffers response are built by tests.unit.pipelines.fixtures.grid)


def entsoe_no_data_xml() -> bytes:
    return (b'<?xml version="1.0" encoding="UTF-8"?><Acknowledgement_MarketDocument><mRID>x</mRID>'
            b"<Reason><code>999</code><text>No matching data found for Data item Day-ahead Prices</text>"
            b"</Reason></Acknowledgement_MarketDocument>")


def de_lu_2023_values(data: Path) -> list[float]:
    """Real 2023 DE-LU day-ahead prices (EUR/MWh) from the mirror's local-currency file, in order."""
    with open(data / "prices/local_currency/DE-LU/DE-LU_electricity_prices_2023.csv", newline="") as fh:
        return [float(r["Price (EUR/MWh)"]) for r in csv.DictReader(fh)]


# ----------------------------------------------------------------------------- the server


@dataclass
class Recorded:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]


@dataclass
class FakeState:
    data: Path
    entsoe_token: str = "entsoe-secret-token-123"
    emaps_token: str = "emaps-secret-token-456"
    emaps_zones: dict[str, str] = field(default_factory=lambda: {"DE": "DE-LU", "US-CAL-CISO": "US-CAL-CISO"})
    openmeteo_locations: dict[tuple[float, float], str] = field(default_factory=dict)
    entsoe_days: dict[str, list[EntsoeDay]] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    faults: list[tuple[str, tuple]] = field(default_factory=list)
    basic_auth: tuple[str, str] | None = None
    echo_token_in_401: bool = False  # a 401 body that quotes the token it was sent (some upstreams do)
    requests: list[Recorded] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    seen: threading.Condition = field(default_factory=threading.Condition)
    _om_cache: dict[str, tuple] = field(default_factory=dict)

    def add_fault(self, path_prefix: str, *fault) -> None:
        with self.lock:
            self.faults.append((path_prefix, fault))

    def take_fault(self, path: str):
        with self.lock:
            for i, (prefix, fault) in enumerate(self.faults):
                if path.startswith(prefix):
                    del self.faults[i]
                    return fault
        return None

    def count(self, path_prefix: str = "/") -> int:
        return sum(1 for r in self.requests if r.path.startswith(path_prefix))

    def record(self, request: Recorded) -> None:
        with self.lock:
            self.requests.append(request)
        with self.seen:
            self.seen.notify_all()

    def wait_for(self, path_prefix: str, n: int, limit_s: float = WAIT_LIMIT_S) -> int:
        """The count of requests under ``path_prefix`` once it reaches ``n`` (a client that gave up may have
        sent its last request before the server's thread recorded it); fails after ``limit_s``."""
        with self.seen:
            assert self.seen.wait_for(lambda: self.count(path_prefix) >= n, timeout=limit_s), \
                f"the fake saw {self.count(path_prefix)} request(s) under {path_prefix}, waited for {n}"
        return self.count(path_prefix)


class _Handler(BaseHTTPRequestHandler):
    state: FakeState  # set on the subclass
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # keep test output (and tokens) quiet
        pass

    def _send(self, status: int, body: bytes, ctype: str, extra: dict | None = None, *, truncate: bool = False):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        if truncate:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body[: len(body) // 2] if truncate else body)
        self.wfile.flush()
        if truncate:
            self.close_connection = True

    def do_GET(self) -> None:  # noqa: N802
        parts = urlsplit(self.path)
        path, query = parts.path, parse_qs(parts.query)
        st = self.state
        st.record(Recorded(path, query, dict(self.headers.items())))
        if st.basic_auth is not None:
            want = "Basic " + base64.b64encode(":".join(st.basic_auth).encode()).decode()
            if self.headers.get("Authorization") != want:
                return self._send(401, b"Unauthorized", "text/plain", {"WWW-Authenticate": 'Basic realm="fake"'})
        fault = st.take_fault(path)
        if fault and fault[0] == "body":
            return self._send(200, fault[1], "text/csv")
        if fault and fault[0] == "status":
            extra = fault[2] if len(fault) > 2 else {}
            return self._send(fault[1], json.dumps({"error": "fake fault"}).encode(), "application/json", extra)
        if fault and fault[0] == "hang":
            self._hold_until_the_client_leaves()
            self.close_connection = True
            return None
        if fault and fault[0] == "redirect":
            return self._send(302, b"", "text/plain", {"Location": fault[1].replace("{query}", parts.query)})
        if fault and fault[0] == "html":
            return self._send(200, b"<!DOCTYPE html><html><body>Service maintenance</body></html>", "text/html")
        truncate = bool(fault and fault[0] == "truncate")
        try:
            status, body, ctype = self._route(path, query)
        except Exception as exc:  # a bug in the fake must show, not hang the client
            status, body, ctype = 500, f"fake error: {exc!r}".encode(), "text/plain"
        self._send(status, body, ctype, truncate=truncate)
        return None

    def _hold_until_the_client_leaves(self) -> None:
        """Answer nothing: wait until the client closes the connection (its read timed out) or the server stops.
        A GET has no body, so the socket turns readable only at the client's close (or a reset)."""
        while not self.state.stopping.is_set():
            try:
                readable, _, _ = select.select([self.connection], [], [], 0.05)
                if readable and not self.connection.recv(1, socket.MSG_PEEK):
                    return
            except OSError:
                return

    # -- routes
    def _route(self, path: str, q: dict) -> tuple[int, bytes, str]:
        if path == "/v1/archive":
            return self._openmeteo(q)
        if path == "/api":
            return self._entsoe(q)
        if path.startswith("/emaps-csv/"):
            return self._emaps_csv(path.rsplit("/", 1)[1])
        if path == "/v3/carbon-intensity/past-range":
            return self._emaps_api(q)
        if path.startswith("/files/"):
            name = path.split("/files/", 1)[1]
            if name in self.state.files:
                return 200, self.state.files[name], "application/octet-stream"
        return 404, b"not found", "text/plain"

    def _openmeteo(self, q):
        st = self.state
        if q.get("format") != ["flatbuffers"]:
            body = {"error": True, "reason": "fake serves flatbuffers only"}
            return 400, json.dumps(body).encode(), "application/json"
        lat, lon = float(q["latitude"][0]), float(q["longitude"][0])
        loc = st.openmeteo_locations.get((round(lat, 2), round(lon, 2)))
        if loc is None:
            body = {"error": True, "reason": "no data at these coordinates"}
            return 400, json.dumps(body).encode(), "application/json"
        if loc not in st._om_cache:
            st._om_cache[loc] = openmeteo_series(st.data, loc)
        jlat, jlon, series = st._om_cache[loc]
        t0 = int(datetime.fromisoformat(q["start_date"][0]).replace(tzinfo=UTC).timestamp())
        t1 = int(datetime.fromisoformat(q["end_date"][0]).replace(tzinfo=UTC).timestamp()) + 86400
        names = q["hourly"][0].split(",")
        ts = range(t0, t1, 3600)
        variables = []
        for name in names:
            var, alt, unit, key = OM_VARS[name]
            vals = np.array([series.get(t, {}).get(key) for t in ts], dtype=object)
            vals = np.array([np.nan if v is None else v for v in vals], dtype=np.float32)
            variables.append((var, alt, unit, vals))
        return 200, build_weather_fb(jlat, jlon, t0, t1, variables), "application/octet-stream"

    def _entsoe(self, q):
        st = self.state
        if q.get("securityToken") != [st.entsoe_token]:
            said = f" securityToken {q.get('securityToken', [''])[0]} is not valid" if st.echo_token_in_401 else ""
            return 401, f"<html><body><h1>Unauthorized</h1>{said}</body></html>".encode(), "text/html"
        if q.get("documentType") != ["A44"]:
            return 400, b"unsupported", "text/plain"
        area = q["in_Domain"][0]
        lo = datetime.strptime(q["periodStart"][0], "%Y%m%d%H%M").replace(tzinfo=UTC)
        hi = datetime.strptime(q["periodEnd"][0], "%Y%m%d%H%M").replace(tzinfo=UTC)
        if hi - lo > timedelta(days=366):
            return 400, b"period too long", "text/plain"
        days = [d for d in st.entsoe_days.get(area, []) if d.end > lo and d.start < hi]
        if not days:
            return 200, entsoe_no_data_xml(), "application/xml"
        return 200, entsoe_xml(area, days), "application/xml"

    def _emaps_csv(self, name: str):
        zone, year = name.removesuffix("_hourly.csv").rsplit("_", 1)
        loc = self.state.emaps_zones.get(zone)
        f = self.state.data / "electricitymaps" / str(loc) / f"{loc}_{year}_hourly.csv"
        if loc is None or not f.is_file():
            return 404, b"<Error><Code>NoSuchKey</Code></Error>", "application/xml"
        return 200, f.read_bytes(), "text/csv"

    def _emaps_api(self, q):
        st = self.state
        if self.headers.get("auth-token") != st.emaps_token:
            said = f": token {self.headers.get('auth-token')} is not valid" if st.echo_token_in_401 else ""
            return 401, json.dumps({"message": f"Unauthorized{said}"}).encode(), "application/json"
        zone = q.get("zone", [""])[0]
        loc = st.emaps_zones.get(zone)
        if loc is None:
            if q.get("shouldUseFallbackCallerLookup") != ["false"]:
                zone, loc = "DE", "DE-LU"  # what upstream does: answer for the caller's location
            else:
                return 400, json.dumps({"message": f"Zone '{zone}' does not exist"}).encode(), "application/json"
        lo = datetime.fromisoformat(q["start"][0].replace("Z", "+00:00"))
        hi = datetime.fromisoformat(q["end"][0].replace("Z", "+00:00"))
        col = ("Carbon Intensity gCO₂eq/kWh (direct)" if q.get("emissionFactorType") == ["direct"]
               else "Carbon Intensity gCO₂eq/kWh (LCA)")
        data = []
        for year in range(lo.year, hi.year + 1):
            f = st.data / "electricitymaps" / loc / f"{loc}_{year}_hourly.csv"
            if not f.is_file():
                continue
            with open(f, newline="", encoding="utf-8") as fh:
                for r in csv.DictReader(fh):
                    ts = datetime.fromisoformat(r["Datetime (UTC)"]).replace(tzinfo=UTC)
                    if lo <= ts < hi:
                        data.append({
                            "zone": zone, "carbonIntensity": float(r[col]),
                            "datetime": ts.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                            "updatedAt": "2024-02-01T00:00:00.000Z", "createdAt": "2024-01-01T00:00:00.000Z",
                            "emissionFactorType": q.get("emissionFactorType", ["lifecycle"])[0],
                            "isEstimated": r["Data Estimated"].strip().lower() == "true",
                            "estimationMethod": r["Data Estimation Method"] or None,
                        })
        body = {"zone": zone, "data": data, "temporalGranularity": "hourly"}
        return 200, json.dumps(body).encode(), "application/json"


class FakePublishers:
    """A ThreadingHTTPServer on 127.0.0.1:<free port> in a daemon thread; use as a context manager."""

    def __init__(self, state: FakeState) -> None:
        self.state = state
        handler = type("Handler", (_Handler,), {"state": state})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.server.block_on_close = False
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakePublishers:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.state.stopping.set()  # releases held ("hang") requests
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
