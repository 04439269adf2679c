"""benchmarks/masac_curve.py: the epochs' rows come back from the per-epoch snapshots (an interrupted run scores what
it finished), and the rendered subsection states the trend and the time to the paper's 100 epochs from them."""

from __future__ import annotations

import json

import pytest

from benchmarks import masac_curve as C


def _snapshots(tmp_path, n, cpu_per_epoch=60.0):
    rows = []
    for k in range(1, n + 1):
        rows.append({"epoch": k, "train_return_usd": -1500.0 + k, "validation_return_usd": -1000.0 + k})
        meta = {"meta": {"epochs": [dict(r) for r in rows], "cpu_seconds": cpu_per_epoch * k + 30.0}}
        (tmp_path / f"masac-s0-e{k}.json").write_text(json.dumps(meta))


def test_rows_come_from_the_snapshots_and_a_gap_is_refused(tmp_path):
    _snapshots(tmp_path, 4)
    rows = C.curve_rows(tmp_path, 0)
    assert [r["epoch"] for r in rows] == [1, 2, 3, 4]
    assert [r["cpu_s_cum"] for r in rows] == [90.0, 150.0, 210.0, 270.0]
    (tmp_path / "masac-s0-e2.json").unlink()
    with pytest.raises(ValueError, match=r"snapshots of epochs \[1, 3, 4\] are not 1..4"):
        C.curve_rows(tmp_path, 0)
    with pytest.raises(FileNotFoundError, match="no snapshot masac-s1-e"):
        C.curve_rows(tmp_path, 1)


@pytest.mark.parametrize(("values", "trend"), [([-60, -55, -20, -10], "improving"), ([-50, -52, -51, -49], "flat"),
                                               ([-20, -25, -50, -60], "diverging (worse)")])
def test_render_states_the_trend_and_the_extrapolation(tmp_path, values, trend):
    _snapshots(tmp_path, 4)
    rows = C.curve_rows(tmp_path, 0)
    for r, v in zip(rows, values, strict=True):
        r.update(test_utility_usd=-1000.0 + v, test_vs_s0_pct=float(v), test_late_pct=50.0, test_moved_pct=60.0,
                 s0_utility_usd=-1100.0)
    text = "\n".join(C.render(rows, "cmd"))
    assert f"is **{trend}**" in text and "`cmd`" in text
    assert f"best {max(values):+.1f} % at epoch {values.index(max(values)) + 1}" in text
    # epochs 2-4 take 60 CPU-s each: 100 epochs = 6,000 CPU-s = 1.7 CPU-hours
    assert "1.0 CPU-min per epoch" in text and "≈ 1.7 CPU-hours" in text
    assert text.count("\n| ") == 1 + 4  # (the header and one row per epoch; the separator starts with "|---")
