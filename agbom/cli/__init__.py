"""Command-line entry point.

``main`` routes ``agbom hook RUNTIME --server URL`` to a lean forwarder before anything heavy
is imported (a command hook starts one process per tool call); every other command goes
through the typer application in :mod:`agbom.cli.app`.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run the agbom CLI and return its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if (
        len(args) >= 2
        and args[0] == "hook"
        and any(a == "--server" or a.startswith("--server=") for a in args)
    ):
        from agbom.adapters.thin import main as thin_main

        return thin_main(args[1:])
    from agbom.cli.app import run

    return run(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
