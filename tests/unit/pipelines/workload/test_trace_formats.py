"""The workload sources' odd cases on small files in their formats: the PAI 2020 trace's headerless CSVs
inside tar.gz (field counts, quotes, archives that are not the trace's), row faults counted rather than
dropped, the 2023 pod lists' units, the reference shape tables, and the 5-minute MOER forecast files."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from gridshift.errors import DataError
from pipelines.core.raw import RawFile
from pipelines.workload import alibaba2020, alibaba2023, derive
from sim_core.forecast import moer_forecast_errors
from tests.unit.pipelines.fixtures import workload as W
from tests.unit.pipelines.fixtures import workload_cases as C

TASK_MEMBER = "pai_task_table.csv"


def task_raw(content: bytes, member: str = TASK_MEMBER) -> RawFile:
    return RawFile("alibaba-2020", "file:///trace/pai_task_table.tar.gz", W.tar_gz(member, content))


# ----------------------------------------------------------------------------- PAI 2020
def test_pai_rows_are_read_headerless_with_the_header_files_columns():
    parsed = alibaba2020.parse_task_table(task_raw(W.csv_lines(C.TASKS)))
    assert parsed.n_rows == 5 and parsed.tasks.height == 4 and parsed.dropped["duplicate_task"] == 1
    first = parsed.tasks.row(0, named=True)
    assert (first["cpu_cores_per_inst"], first["gpus_per_inst"], first["mem_gb_per_inst"]) == (6.0, 0.5, 29.3)
    assert parsed.file == "file:///trace/pai_task_table.tar.gz!pai_task_table.csv"


def test_a_pai_line_with_a_missing_field_is_refused_naming_the_line():
    lines = W.csv_lines(C.TASKS).split(b"\n")
    lines[1] = lines[1].rsplit(b",", 1)[0]  # line 2 lost its gpu_type field
    with pytest.raises(DataError, match="do not have 10 comma-separated fields") as info:
        alibaba2020.parse_task_table(task_raw(b"\n".join(lines)))
    assert info.value.rows == [2] and info.value.file.endswith("!pai_task_table.csv")


def test_quoted_fields_are_not_the_traces_format():
    with pytest.raises(DataError, match="quoted fields"):
        alibaba2020.parse_task_table(task_raw(W.csv_lines([("j1", '"worker,ps"', 1, "Terminated", 0, 10, 100, 1,
                                                            0, "")])))


@pytest.mark.parametrize("content,message", [
    (b"\x1f\x8b not really gzip", "not a readable tar.gz"),
    (None, "exactly one .csv member"),
], ids=["not-gzip", "no-csv-member"])
def test_an_archive_that_is_not_the_traces_is_refused(content, message):
    raw = (RawFile("alibaba-2020", "file:///t.tar.gz", content) if content is not None
           else task_raw(W.csv_lines(C.TASKS), member="README.md"))
    with pytest.raises(DataError, match=message):
        alibaba2020.parse_task_table(raw)


def test_pai_row_faults_are_counted_not_dropped_silently():
    rows = [*C.TASKS, ("j4", "worker", 1, "Terminated", C.B, C.B + 60, "abc", 4, 100, "T4"),
            ("", "worker", 1, "Terminated", C.B, C.B + 60, 100, 4, 100, "T4")]
    parsed = alibaba2020.parse_task_table(task_raw(W.csv_lines(rows)))
    assert parsed.issues == {"unparseable_plan_cpu": 1} and parsed.dropped == {"missing_job_name": 1,
                                                                                "duplicate_task": 1}
    assert parsed.tasks.filter(parsed.tasks["job_name"] == "j4")["cpu_cores_per_inst"].to_list() == [None]


def test_tasks_whose_job_is_not_in_the_job_table_are_counted():
    jobs, counts = alibaba2020.parse_job_table(RawFile("alibaba-2020", "file:///j.tar.gz",
                                                       W.tar_gz("pai_job_table.csv", W.csv_lines(C.JOBS))))
    assert counts["job_rows"] == 2 and jobs["job_user"].to_list() == ["user0", "user1"]
    parsed = alibaba2020.attach_jobs(alibaba2020.parse_task_table(task_raw(W.csv_lines(C.TASKS))), jobs)
    assert parsed.issues["task_without_job"] == 1  # j3


def test_the_machine_spec_gives_capacities_in_cores_gb_and_gpus():
    rows = [("m0a1", "V100", 96, 512, 8), ("m0a2", "CPU", 96, 512, 0), ("m0a3", "T4", 64, 256, 2)]
    archive = W.tar_gz("pai_machine_spec.csv", W.csv_lines(rows))
    raw = RawFile("alibaba-2020", "file:///pai_machine_spec.tar.gz", archive)
    spec = alibaba2020.parse_machine_spec(raw)
    assert spec.rows() == [(m, g, float(c), float(mem), float(n)) for m, g, c, mem, n in rows]


# ----------------------------------------------------------------------------- 2023 pod lists
def test_pods_share_gpus_by_the_mille_and_memory_is_mebibytes():
    pods = [("openb-pod-0000", 88000, 327680, 2, 1000, "", "LS", "Running", 0, 3600, 0),  # two whole GPUs
            ("openb-pod-0001", 6000, 12288, 1, 460, "V100M16", "BE", "Succeeded", 60, 3660, 90)]  # 46 % of one
    parsed = alibaba2023.parse(RawFile("alibaba-2023", "file:///pods.csv", W.pod_list(pods)))
    t = parsed.tasks
    assert t["cpu_cores_per_inst"].to_list() == [88.0, 6.0] and t["gpus_per_inst"].to_list() == [2.0, 0.46]
    assert t["mem_gb_per_inst"].to_list() == [320.0, 12.0] and t["gpu_type"].to_list() == [None, "V100M16"]


def test_a_non_numeric_request_is_nulled_and_counted_and_a_repeated_pod_keeps_its_first_row():
    pods = [C.PODS[0], (*C.PODS[1][:2], "lots", *C.PODS[1][3:]), C.PODS[0][:7] + ("Failed",) + C.PODS[0][8:]]
    parsed = alibaba2023.parse(RawFile("alibaba-2023", "file:///pods.csv", W.pod_list(pods)))
    assert parsed.issues == {"unparseable_memory_mib": 1} and parsed.dropped["duplicate_task"] == 1
    assert parsed.tasks["status"].to_list() == ["Running", "Succeeded"]
    assert parsed.tasks["mem_gb_per_inst"].to_list() == [8.0, None]


def test_a_pod_list_without_its_header_columns_is_refused():
    with pytest.raises(DataError, match="missing or renamed"):
        alibaba2023.parse(RawFile("alibaba-2023", "file:///pods.csv", W.pod_list(C.PODS).split(b"\n", 1)[1]))


# ----------------------------------------------------------------------------- reference shape
def test_the_reference_histograms_are_the_written_bins():
    hists = derive.parse_histograms(RawFile("reference-alibaba2020-filtered", "file:///h.csv",
                                            W.histograms_csv(C.HISTOGRAMS)))
    assert hists["gpu"].unit == "gpus" and hists["gpu"].centers.tolist() == [0.25 * (i + 1) for i in range(8)]
    assert hists["duration"].counts.tolist() == [100.0 / (i + 1) for i in range(10)]
    assert hists["bandwidth"].edges[[0, -1]].tolist() == list(C.edges("bandwidth"))
    assert hists["cpu"].ppf(np.array([0.0, 1.0])).tolist() == list(C.edges("cpu"))


def test_reference_histograms_without_a_variable_are_refused():
    partial = {k: v for k, v in C.HISTOGRAMS.items() if k != "mem"}
    with pytest.raises(DataError, match="lack variable 'mem'"):
        derive.parse_histograms(RawFile("reference-alibaba2020-filtered", "file:///h.csv", W.histograms_csv(partial)))


def test_the_weekday_hour_profile_is_seven_by_twenty_four_monday_first():
    prof = derive.parse_weekday_hour(RawFile("r", "file:///w.csv", W.weekday_hour_csv(C.profile)))
    assert prof.shape == (7, 24) and prof[0, 9] == 30.0 and prof[6, 3] == 15.0 and prof[4, 20] == 20.0
    short = b"\n".join(W.weekday_hour_csv(C.profile).split(b"\n")[:-2]) + b"\n"  # Sunday 23:00 missing
    with pytest.raises(DataError, match="168 rows"):
        derive.parse_weekday_hour(RawFile("r", "file:///w.csv", short))


# ----------------------------------------------------------------------------- MOER, 5 minutes
def test_moer_forecast_errors_align_each_lead_with_the_interval_it_forecasts(tmp_path):
    """``moer-5min/*.csv.gz``: ``time`` with its offset, ``moer``, forecasts ``f1..f36`` issued at ``time``."""
    n = 60
    moer = [0.3 + 0.01 * (i % 12) for i in range(n)]
    lines = ["time,moer," + ",".join(f"f{k}" for k in range(1, 37))]
    for i in range(n):  # f_k: the MOER k - 1 steps ahead plus 0.002·k (an error growing with the lead)
        f = [moer[min(i + k - 1, n - 1)] + 0.002 * k for k in range(1, 37)]
        lines.append(f"2021-08-01 {i * 5 // 60:02d}:{i * 5 % 60:02d}:00+00:00,{moer[i]}," + ",".join(map(str, f)))
    path = tmp_path / "SGIP_CAISO_TEST_2021-08.csv.gz"
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    errors = moer_forecast_errors(path)
    assert errors["lead_min"].to_list() == [5 * k for k in range(1, 37)]
    assert errors["n"][0] == n - 1 and errors["n"][35] == n - 36
    assert errors["mae"].to_list() == pytest.approx([0.002 * k for k in range(1, 37)])
