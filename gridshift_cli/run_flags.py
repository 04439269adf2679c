"""The run options as flags of ``run``, ``compare`` and ``optimum``, generated from their declarations
(``gridshift.run_options``: name, type, default, range, unit, doc), so a flag's default and help can never
drift from the option's. Imports no kernel module: ``--help`` stays light.

A command is written with a last parameter ``options: dict`` and made with :func:`with_run_options`, which
adds one flag per option declared for it (``RunOption.commands``) and hands the command their values as
``options`` (a preset name or a number for a float option with presets; nothing else is converted or
checked: the run's own checks refuse a bad value, naming it and its range, exit 2).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any

import typer

from gridshift import run_options as R

_TYPES: dict[str, type] = {R.BOOL: bool, R.INT: int, R.FLOAT: float, R.CHOICE: str, R.TEXT: str, R.PARAMS: str}


def flag_type(o: R.RunOption) -> Any:
    """The flag's Python type: a float with presets is text (a number or a preset name); nullable is optional."""
    t: Any = str if (o.kind == R.FLOAT and o.presets) else _TYPES[o.kind]
    return t | None if (o.nullable or o.kind == R.PARAMS) else t


def flag_help(o: R.RunOption) -> str:
    """The option's doc, unit and valid values (no rich markup: square brackets would be read as tags)."""
    if o.kind == R.BOOL:
        return o.doc
    unit = f", in {o.unit}" if o.unit else ""
    return f"{o.doc}{unit}: {o.describe_valid(api=False).replace('`', '')}"


def flag_parameter(o: R.RunOption) -> inspect.Parameter:
    """The typer parameter of option ``o`` (its declared flag, default and help)."""
    flag = typer.Option(*o.cli_flag.split(" "), help=flag_help(o))
    return inspect.Parameter(o.name, inspect.Parameter.KEYWORD_ONLY, default=o.default,
                             annotation=Annotated[flag_type(o), flag])


def with_run_options(fn: Callable[..., Any], command: str) -> Callable[..., Any]:
    """``fn`` as a typer command with a flag per run option declared for ``command``, passed to ``fn`` as its
    ``options`` dict. Made when the app is made (``gridshift_cli.make_app``): an option declared before then
    is a flag."""
    specs = list(R.for_command(command))
    sig = inspect.signature(fn, eval_str=True)
    own = [p for p in sig.parameters.values() if p.name != "options"]
    params = [*own, *(flag_parameter(o) for o in specs)]

    @functools.wraps(fn)
    def cmd(**kw: Any) -> Any:
        try:
            options = {o.name: R.from_text(o, kw.pop(o.name)) for o in specs}
        except ValueError as err:  # a parameter set's text that is not name=value pairs
            raise typer.BadParameter(str(err)) from None
        return fn(**kw, options=options)

    del cmd.__wrapped__  # (typer reads the signature below, not fn's)
    cmd.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    cmd.__annotations__ = {p.name: p.annotation for p in params}
    return cmd
