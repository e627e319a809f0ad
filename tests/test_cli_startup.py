"""What ``agbom --help`` leaves unloaded, and that click's errors are still mapped once loaded."""

from __future__ import annotations

import subprocess
import sys


def test_help_loads_no_store_inventory_yaml_or_click() -> None:
    probe = (
        "import sys, contextlib, io\n"
        "from agbom.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    rc = main(['--help'])\n"
        "assert rc == 0 and 'Commands' in out.getvalue(), out.getvalue()\n"
        "heavy = ('click', 'sqlite_utils', 'yaml', 'agbom.inventory', 'agbom.store.sqlite',\n"
        "         'networkx', 'fastjsonschema', 'pydantic')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy or m.startswith(heavy)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout


def test_click_errors_are_still_caught_once_click_is_loaded() -> None:
    import click

    from agbom.cli.app import _click_classes

    assert click.UsageError in _click_classes("UsageError")
    assert click.exceptions.Abort in _click_classes("Abort")
    assert click.ClickException in _click_classes("ClickException")
