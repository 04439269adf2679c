"""Checkpoints of a bound solved in rolling horizons: each horizon's LP solution on disk, keyed by the LP itself, so a
long window's bound (a year: hours of LPs) resumes where an interrupted run stopped, and a run after a code change
that leaves a horizon's LP as it was reads that LP's solution instead of solving it again.

A checkpoint folder holds one ``lp-<digest>.npz`` per solved LP, the digest taken over everything HiGHS is given
(the columns' costs and bounds, the rows' bounds, the matrix, the solver, its threads and HiGHS's version): HiGHS
returns the same solution for the same input, so a file is read exactly where the solve would repeat it, and
everything derived from a solution (the bound's figures, its duals, the profile the rounding reads) is computed by
the code that runs. Keying on the code version instead, as before, discarded a year's 47 minutes of LPs at any
edit of sim_core, the search's included. Plain arrays, read without pickle, written atomically: a file is whole
or absent."""

from __future__ import annotations

import hashlib
import io
import re
import zipfile
from pathlib import Path

import highspy
import numpy as np

from gridshift.atomic import atomic_write_bytes
from gridshift.hashing import canonical_json

#: what a solution's file holds: the columns' values, the rows' duals, the objective, HiGHS's status, the seconds
SOLUTION_KEYS = ("x", "row_dual", "obj", "status", "secs")
#: the LP's arrays the key covers (``optimum.model.LPModel``), in this order
LP_ARRAYS = ("col_cost", "col_lower", "col_upper", "row_lower", "row_upper", "start", "index", "value")
_KEY = re.compile(r"[0-9a-f]{32}")


def lp_key(lp, solver: str, threads: int) -> str:
    """The 32-hex digest of one LP as HiGHS receives it (``_solve``): sha256 over the solver's settings, the sizes,
    and each array's dtype, shape and bytes."""
    h = hashlib.sha256(canonical_json({"highs": highspy.Highs().version(), "solver": solver, "threads": int(threads),
                                       "n_col": int(lp.n_col), "n_row": int(lp.n_row)}))
    for name in LP_ARRAYS:
        a = np.ascontiguousarray(getattr(lp, name))
        h.update(f"{name}:{a.dtype.str}:{a.shape}".encode())
        h.update(a)  # (its buffer, not a copy: a year's LPs are ~2 GB of arrays)
    return h.hexdigest()[:32]


class Checkpoints:
    """The solved LPs of one or more bounds, in ``root/lp-<key>.npz``."""

    def __init__(self, root: str | Path, error: type[Exception] = ValueError):
        self.folder = Path(root)
        self.error = error

    def path(self, key: str) -> Path:
        if not _KEY.fullmatch(key):  # (the key names a file under root: only a digest may)
            raise self.error(f"checkpoint key must be 32 hex digits, got {key!r}")
        return self.folder / f"lp-{key}.npz"

    def load(self, key: str, n_col: int, n_row: int) -> dict | None:
        """The solution of the LP ``key`` of ``n_col`` columns and ``n_row`` rows (arrays; 0-d ones as Python
        scalars), or None if it was not solved yet; a file without one of ``SOLUTION_KEYS``, or whose column values
        and row duals are not of the LP's sizes (written by hand or by other code under this name), is refused by
        name."""
        p = self.path(key)
        if not p.is_file():
            return None
        try:
            with np.load(p, allow_pickle=False) as z:
                out = {k: (z[k].item() if z[k].ndim == 0 else z[k]) for k in z.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
            raise self.error(f"checkpoint {p} is unreadable ({e}); delete it to solve that LP again") from e
        missing = sorted(set(SOLUTION_KEYS) - set(out))
        if missing:
            raise self.error(f"checkpoint {p} lacks {', '.join(missing)}; delete it to solve that LP again")
        shapes = (np.shape(out["x"]), np.shape(out["row_dual"]))
        if shapes != ((int(n_col),), (int(n_row),)):
            raise self.error(f"checkpoint {p} holds {shapes[0]} column values and {shapes[1]} row duals for an LP of "
                             f"{n_col} columns and {n_row} rows; delete it to solve that LP again")
        return out

    def save(self, key: str, solution: dict) -> None:
        """Write the solution of the LP ``key`` atomically (compressed: an LP's solution is mostly zeros)."""
        buf = io.BytesIO()
        np.savez_compressed(buf, **{k: np.asarray(solution[k]) for k in SOLUTION_KEYS})
        atomic_write_bytes(self.path(key), buf.getvalue())


__all__ = ["LP_ARRAYS", "SOLUTION_KEYS", "Checkpoints", "lp_key"]
