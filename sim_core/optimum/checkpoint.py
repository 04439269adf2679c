"""Checkpoints of a bound solved in rolling horizons: each solved horizon's outcome on disk, so a long window's
bound (a year at the source size: hours of LPs) resumes where an interrupted run stopped instead of starting again.

A checkpoint folder holds one subfolder per bound, named by a digest of everything its horizons' solutions depend
on (the bundle id, the code version, the window, the seed, the run options and every argument of ``optimum``), so
a bound never reads another's horizons and an edit of the code starts afresh. Each horizon is one ``.npz`` file of
plain arrays (read without pickle), written atomically once its LP is solved: a file is whole or absent."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import numpy as np

from gridshift.atomic import atomic_write_bytes
from gridshift.hashing import canonical_json, sha256_bytes

_KEY = re.compile(r"[0-9a-f]{16}")


def bound_key(parts: dict) -> str:
    """The 16-hex digest naming one bound's folder: sha256 over the canonical JSON of ``parts``."""
    return sha256_bytes(canonical_json(parts))[:16]


class Checkpoints:
    """The solved horizons of one bound, in ``root/<key>/horizon-<h>.npz``."""

    def __init__(self, root: str | Path, key: str, error: type[Exception] = ValueError):
        if not _KEY.fullmatch(key):  # (the key names a folder under root: only a digest may)
            raise error(f"checkpoint key must be 16 hex digits, got {key!r}")
        self.folder = Path(root) / key
        self.error = error

    def path(self, h: int) -> Path:
        return self.folder / f"horizon-{int(h):05d}.npz"

    def load(self, h: int, keys=()) -> dict | None:
        """Horizon ``h``'s outcome (arrays; 0-d ones as Python scalars), or None if it was not solved yet; a file
        without one of ``keys`` is refused by name."""
        p = self.path(h)
        if not p.is_file():
            return None
        try:
            with np.load(p, allow_pickle=False) as z:
                out = {k: (z[k].item() if z[k].ndim == 0 else z[k]) for k in z.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
            raise self.error(f"checkpoint {p} is unreadable ({e}); delete it to solve that horizon again") from e
        missing = sorted(set(keys) - set(out))
        if missing:
            raise self.error(f"checkpoint {p} lacks {', '.join(missing)}; delete it to solve that horizon again")
        return out

    def save(self, h: int, outcome: dict) -> None:
        """Write horizon ``h``'s outcome (arrays and scalars) atomically."""
        self.folder.mkdir(parents=True, exist_ok=True)
        buf = io.BytesIO()
        np.savez(buf, **{k: np.asarray(v) for k, v in outcome.items()})
        atomic_write_bytes(self.path(h), buf.getvalue())
