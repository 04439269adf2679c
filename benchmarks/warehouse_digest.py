"""Digest of a home after an ingest: every warehouse table hashed, and the Dagster records counted.

Command: ./run.sh python benchmarks/warehouse_digest.py HOME [HOME2]   (with two homes: prints whether they match)

Each table of ``HOME/warehouse.duckdb`` is hashed in primary-key order (``warehouse.content``: its
declared columns but ``raw_files.fetched_at``, the time of the landing, as Arrow IPC bytes), the grid
tables (``grid_carbon``, ``grid_price``, ``weather``) also in stored order; the run storage's runs are
counted by status and the event-log shards' events by type (materializations, check evaluations,
steps). Two ingests of the same mirror by two trees (e.g. this one and a ``git archive`` of an earlier
commit, ``bench_ingest.py --versus``) into fresh homes must print the same digest.
"""

from __future__ import annotations

import glob
import hashlib
import json
import sqlite3
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from warehouse.content import ipc_bytes, table_content  # noqa: E402
from warehouse.schemas import TABLES  # noqa: E402

GRID = ("grid_carbon", "grid_price", "weather")


def _hash(df) -> str:
    """The values, in the frame's order, whatever chunks DuckDB's scan returned them in (a scan's chunking
    follows the file's physical layout, which two equal writes need not share)."""
    return hashlib.sha256(ipc_bytes(df.rechunk())).hexdigest()[:16]


def digest(home: Path) -> dict:
    out: dict = {}
    wh = home / "warehouse.duckdb"
    for t in TABLES:
        df = table_content(wh, t)
        out[t] = {"rows": df.height, "pk_order": _hash(df)}
        if t in GRID:
            out[t]["stored_order"] = _hash(table_content(wh, t, stored_order=True))
    runs = sqlite3.connect(str(home / "dagster" / "history" / "runs.db"))
    out["dagster runs"] = dict(runs.execute("SELECT status, count(*) FROM runs GROUP BY status").fetchall())
    runs.close()
    events: dict[str, int] = {}
    for db in sorted(glob.glob(str(home / "dagster" / "history" / "runs" / "*.db"))):
        c = sqlite3.connect(db)
        try:
            for typ, n in c.execute("SELECT dagster_event_type, count(*) FROM event_logs GROUP BY 1").fetchall():
                if typ and any(w in typ for w in ("MATERIALIZATION", "CHECK", "STEP")):
                    events[typ] = events.get(typ, 0) + n
        except sqlite3.OperationalError:  # a shard without an event table
            pass
        finally:
            c.close()
    out["dagster events (all shards)"] = dict(sorted(events.items()))
    return out


def main() -> None:
    homes = [Path(a) for a in sys.argv[1:3]]
    if not homes:
        raise SystemExit(__doc__)
    got = [digest(h) for h in homes]
    print(json.dumps(got[0], indent=1))
    if len(got) == 2:
        print("identical" if got[0] == got[1] else "DIFFERENT: " + ", ".join(
            k for k in {**got[0], **got[1]} if got[0].get(k) != got[1].get(k)))
        raise SystemExit(0 if got[0] == got[1] else 1)


if __name__ == "__main__":
    main()
