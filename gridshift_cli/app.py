"""The ``gridshift`` command line: every command, made into one typer app."""

from __future__ import annotations

import typer

from gridshift import __version__
from gridshift_cli import bundles, ingest, leaderboard, optimum, simulate, ui
from gridshift_cli.common import console
from gridshift_cli.options import DebugOpt
from gridshift_cli.run_flags import with_run_options

HELP = ("gridshift: ingest grid signals and workloads, build scenario bundles, simulate scheduling policies on "
        "them. Every command's --help lists its options.")


def policy_list() -> str:
    """Every policy's name, from the registry (pure Python: no kernel is imported)."""
    from sim_core.policies import registry

    return ("Policies: " + ", ".join(registry.names()) + ". The published baselines: docs/baselines.md; adding "
            "a policy: docs/adding_a_policy.md.")


def _main(ctx: typer.Context, debug: DebugOpt = False) -> None:
    """gridshift: ingest, export, verify, inspect, list, run, compare, optimum, leaderboard, ui."""
    ctx.obj = {"debug": debug}  # the commands' context: read by gridshift_cli.common.failures


def version() -> None:
    """Print the gridshift version."""
    console.print(__version__)


def make_app() -> typer.Typer:
    """The command line, its policy lists read from ``sim_core.policies.registry`` and its run-option flags from
    ``gridshift.run_options`` when it is made (a policy registered, or an option declared, before this call is
    listed in ``run --help`` and ``compare --help``)."""
    app = typer.Typer(add_completion=False, no_args_is_help=True, help=HELP)
    app.callback()(_main)
    app.command()(ingest.ingest)
    app.command()(bundles.export)
    app.command()(bundles.verify)
    app.command("inspect")(bundles.inspect_cmd)
    app.command("list")(bundles.list_cmd)
    app.command("run", epilog=policy_list())(with_run_options(simulate.run, "run"))
    app.command("compare", epilog=policy_list())(with_run_options(simulate.compare, "compare"))
    app.command("optimum")(with_run_options(optimum.optimum, "optimum"))
    app.command("leaderboard", epilog=policy_list())(leaderboard.leaderboard)
    app.command(context_settings=ui.CONTEXT)(ui.ui)
    app.command("plot-workload")(ingest.plot_workload_cmd)
    app.command()(version)
    return app
