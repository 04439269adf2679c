"""The named jobs every run is recorded under, and the tags naming the command-line call that made it.

A command-line run is a run of the job of its assets' group, restricted to those assets
(``dagster_project.runner``); the UI lists it under that job with the tags below, not as an anonymous asset
job. ``dagster_project.definitions`` declares the same jobs over whole groups, for the UI's launchpad.
"""

from __future__ import annotations

#: asset group -> its named job
JOB_OF_GROUP = {"grid": "ingest_grid", "reference": "ingest_reference", "workload": "ingest_workload",
                "bundles": "build_bundle"}
#: The run tags naming the command-line call a run belongs to (the UI's run list shows and filters by them).
COMMAND_TAG, ARGUMENTS_TAG = "gridshift/command", "gridshift/arguments"
