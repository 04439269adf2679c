"""Helpers for the workload tests: a PAI 2020 trace written here, in the trace's own format."""

from __future__ import annotations

from pathlib import Path

from tests.unit.pipelines.fixtures.workload import csv_lines, tar_gz

WEEK = 7 * 86_400
# Monday 1970-03-16 00:00 UTC (10 weeks after Monday 1970-01-05): times like the real trace's.
B = 345_600 + 10 * WEEK

# (job_name, task_name, inst_num, status, start_time, end_time, plan_cpu, plan_mem, plan_gpu, gpu_type)
TASK_ROWS = [
    ("jobA", "worker", "1", "Terminated", B, B + 1800, "600", "29.3", "50", "V100"),  # 1 kept
    ("jobA", "ps", "2", "Terminated", B + 3600, B + 3600 + 7200, "400", "10", "", ""),  # 2 kept, NaN GPU
    ("jobB", "worker", "4", "Terminated", B + WEEK + 2 * 86_400 + 36_000, B + WEEK + 2 * 86_400 + 39_600,
     "800", "60", "200", "V100M32"),  # 3 kept: Wednesday 10:00
    ("jobC", "tensorflow", "1", "Terminated", B + 2 * WEEK + 6 * 86_400 + 82_800,
     B + 2 * WEEK + 6 * 86_400 + 82_800 + 900, "50", "2", "100", "T4"),  # 4 kept: exactly 15 min
    ("jobD", "worker", "1", "Terminated", B + 3 * WEEK, B + 3 * WEEK + 3600, "100", "4", "25", "MISC"),  # 5
    ("jobE", "worker", "1", "Failed", B + 100, B + 5000, "600", "8", "50", "V100"),  # status_failed
    ("jobF", "worker", "1", "Waiting", "0", "", "600", "8", "50", "V100"),  # status_waiting
    ("jobG", "worker", "1", "Running", B + 200, "", "600", "8", "50", "V100"),  # status_running
    ("jobH", "worker", "1", "Terminated", B + 300, "", "600", "8", "50", "V100"),  # missing_time
    ("jobI", "worker", "1", "Terminated", B + 400, B + 1000, "600", "8", "50", "V100"),  # 10 min: too short
    ("jobJ", "worker", "1", "Terminated", B + 500, B + 400, "600", "8", "50", "V100"),  # end before start
    ("jobK", "worker", "1", "Terminated", B + 600, B + 4200, "0", "0", "0", ""),  # nothing requested
    ("jobL", "worker", "1", "Terminated", B + 700, B + 4300, "1e9", "8", "50", "V100"),  # enormous CPU
    ("jobM", "worker", "1", "Terminated", B + 800, B + 4400, "200", "", "50", "V100"),  # missing memory
    ("jobA", "worker", "1", "Terminated", B, B + 1800, "600", "29.3", "50", "V100"),  # exact duplicate of 1
    ("jobA", "worker", "1", "Failed", B + 5, B + 99, "100", "1", "10", "T4"),  # same task again
    ("jobN", "worker", "1", "Terminated", B + 900, B + 4500, "abc", "8", "50", "V100"),  # unparseable CPU
    ("jobO", "worker", "", "Terminated", B + 950, B + 4550, "600", "8", "50", "V100"),  # no inst_num
    ("", "worker", "1", "Terminated", B + 960, B + 4560, "600", "8", "50", "V100"),  # no job name
    ("jobP", "worker", "1", "Failed", B + 1000, B + 4600, "100", "8", "50", "V100"),  # failed; no job row
]
# A negative request is impossible: trace_tasks refuses the whole file (test_workload_alibaba2020.py).
NEGATIVE_CPU_ROW = ("jobQ", "worker", "1", "Terminated", B + 1100, B + 4700, "-100", "8", "50", "V100")
EXPECTED_DROPPED = {
    "bad_inst_num": 1, "duplicate_task": 2, "duration_below_min": 1, "end_not_after_start": 1,
    "exceeds_machine": 1, "missing_cpu": 1, "missing_job_name": 1, "missing_mem": 1, "missing_time": 1,
    "no_compute_request": 1, "status_failed": 2, "status_running": 1, "status_waiting": 1,
}
JOB_NAMES = [f"job{c}" for c in "ABCDEFGHIJKLMNO"]  # no jobP: its task has no job row
JOB_ROWS = [(j, f"inst-{j}", f"user{i % 3}", "Terminated", B, B + 9999) for i, j in enumerate(JOB_NAMES)]


def write_trace(directory: Path, task_csv: bytes | None = None, job_csv: bytes | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "pai_task_table.tar.gz").write_bytes(
        tar_gz("pai_task_table.csv", task_csv if task_csv is not None else csv_lines(TASK_ROWS)))
    (directory / "pai_job_table.tar.gz").write_bytes(
        tar_gz("pai_job_table.csv", job_csv if job_csv is not None else csv_lines(JOB_ROWS)))
    return directory
