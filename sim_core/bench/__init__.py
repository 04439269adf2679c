"""The benchmark harness: sweeps of policies × seeds on one bundle, their metrics, statistics,
report files and figures (docs/benchmarks.md).

* :mod:`.sweep`: ``compare`` (run or reuse every policy × seed), run keys and canonical options;
* :mod:`.metrics`: what a run measures (``METRICS``) and its time series;
* :mod:`.stats`: mean, Student-t CI, paired savings (``summarize``), Pareto front;
* :mod:`.report`: the output files and the headline summary table;
* :mod:`.figures`: the PNGs (matplotlib, imported only when figures are written).
"""

from .report import summary_markdown, write_outputs
from .sweep import Comparison, RunKey, compare

__all__ = ["compare", "write_outputs", "summary_markdown", "Comparison", "RunKey"]
