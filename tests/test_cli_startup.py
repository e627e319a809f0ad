"""What ``agbom --help`` leaves unloaded, that its static command table tells the truth about
every command, and that click's errors are still mapped once loaded.

The root help prints each command's summary from ``agbom.cli.app.COMMANDS`` and builds no
command; a command's module is imported when that command is invoked. The table is checked
here against what each command module really registers and against each command's own help.
"""

from __future__ import annotations

import os
import pkgutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
import typer.main

import agbom.cli
from agbom.cli import main
from agbom.cli.app import COMMANDS, build_command, ordered_commands
from agbom.cli.help import install

try:
    from typer._click import Context
    from typer._click.utils import make_default_short_help
except ImportError:  # pragma: no cover - older typer uses click itself
    from click import Context  # type: ignore[no-redef,assignment]
    from click.utils import make_default_short_help  # type: ignore[no-redef]

# What ``agbom --help`` may import of agbom: the entry point, the app and its help classes,
# and the two small modules the error mapping needs. No command module, store or scanner.
HELP_MODULES = {"agbom", "agbom.cli", "agbom.cli.app", "agbom.cli.help", "agbom.display"}
HELP_MODULES |= {"agbom.errors"}


def _probe(args: list[str]) -> list[str]:
    probe = (
        "import sys, contextlib, io\n"
        "from agbom.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    rc = main({args!r})\n"
        "text = out.getvalue()\n"
        "assert rc == 0 and ('Commands:' in text or 'Inventory and CI:' in text), text\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1].split()


def test_help_loads_no_store_inventory_yaml_or_click() -> None:
    loaded = _probe(["--help"])
    heavy = ("click", "sqlite_utils", "yaml", "networkx", "fastjsonschema", "pydantic", "rich")
    assert [m for m in loaded if m.split(".")[0] in heavy] == []
    assert sorted(m for m in loaded if m.split(".")[0] == "agbom") == sorted(HELP_MODULES)


def test_a_group_help_loads_that_group_only() -> None:
    loaded = _probe(["store", "--help"])
    commands = {m for m in loaded if m.startswith("agbom.cli.") and m.endswith("_cmds")}
    assert commands == {"agbom.cli.store_cmds"}


def _registered_names(module_name: str) -> list[str]:
    """The top-level names ``register(app)`` of ``agbom.cli.MODULE`` adds, as typer names them."""
    module = __import__(f"agbom.cli.{module_name}", fromlist=["register"])
    holder = typer.Typer(add_completion=False)
    module.register(holder)
    install(holder)
    group = typer.main.get_group(holder)
    return list(group.commands)


def _command_modules() -> list[str]:
    folder = Path(agbom.cli.__file__).parent
    return sorted(m.name for m in pkgutil.iter_modules([str(folder)]) if m.name.endswith("_cmds"))


def test_every_registered_command_has_a_row_and_every_row_its_command() -> None:
    registered: dict[str, set[str]] = {}
    for module_name in _command_modules():
        for name in _registered_names(module_name):
            registered.setdefault(name, set()).add(module_name)
    assert set(registered) == set(COMMANDS), "COMMANDS in agbom/cli/app.py is out of date"
    for name, (module_name, _) in COMMANDS.items():
        assert module_name in registered[name], (name, module_name)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_summary_is_what_that_command_says_of_itself(name: str) -> None:
    command: Any = build_command(name)
    assert command is not None and command.name == name
    summary = COMMANDS[name][1]
    for limit in (20, 45, 60, 74, 90, 120, 1000):
        assert make_default_short_help(summary, limit) == command.get_short_help_str(limit)
    assert not command.hidden and not command.deprecated


def test_root_help_lists_every_command_whole_in_panels_scan_first() -> None:
    from agbom.cli.app import PANELS, app

    root: Any = typer.main.get_command(app)
    for width in (60, 80, 100, 160):
        text = root.get_help(Context(root, info_name="agbom", terminal_width=width))
        assert not root.commands._built, "the root help built a command"
        assert all(len(line) <= max(width, 80) for line in text.splitlines()), text
        body = text.split("\n\n", 3)[-1]
        assert "..." not in body  # no summary is cut
        listed = [
            line.split()[0]
            for line in body.splitlines()
            if line.startswith("  ") and line[2] != " "
        ]
        assert listed == [n for _, names in PANELS for n in names if n in COMMANDS] + [
            n for n in COMMANDS if all(n not in names for _, names in PANELS)
        ]
        assert listed[0] == "scan" and sorted(listed) == sorted(COMMANDS)
        flat = "".join(body.split())  # wrapping may break at a space or after a hyphen
        for name, (_, summary) in COMMANDS.items():
            assert name + "".join(summary.split()) in flat  # whole
        for title, _ in PANELS:
            assert f"\n{title}:\n" in text


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_still_answers_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([name, "--help"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"Usage: agbom {name} "), out
    assert err == ""


def test_a_mistyped_command_is_one_line_exit_2_with_a_suggestion(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["sklls", "list"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert (
        err
        == "agbom: error: No such command 'sklls'. Did you mean 'skills'? (see 'agbom --help')\n"
    )


def test_shell_completion_offers_every_command_and_completes_inside_one() -> None:
    def complete(words: str, cword: int) -> list[str]:
        env = {**os.environ, "_AGBOM_COMPLETE": "complete_bash", "COMP_WORDS": words}
        env["COMP_CWORD"] = str(cword)
        proc = subprocess.run(
            [sys.executable, "-m", "agbom"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env=env,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.split()

    assert complete("agbom ", 1) == ordered_commands()
    assert "approve" in complete("agbom skills ", 2)
    assert "--format" in complete("agbom scan --f", 2)


def test_click_errors_are_still_caught_once_click_is_loaded() -> None:
    import click

    from agbom.cli.app import _click_classes

    assert click.UsageError in _click_classes("UsageError")
    assert click.exceptions.Abort in _click_classes("Abort")
    assert click.ClickException in _click_classes("ClickException")
