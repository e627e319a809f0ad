"""Command-line entry point.

``main`` routes ``agbom hook install|uninstall|doctor`` to their own small application
(agbom/cli/hook_setup.py), ``agbom hook RUNTIME --server URL`` to a lean forwarder, and a
well-formed standalone ``agbom hook RUNTIME ...`` to the in-process decision, before typer or
any other command is imported (a command hook starts one process per tool call); every other
command, and a hook command line that needs typer's help or usage errors, goes through the
typer application in :mod:`agbom.cli.app`.
"""

import sys

SETUP_WORDS = ("install", "uninstall", "doctor")


def main(argv: list[str] | None = None) -> int:
    """Run the agbom CLI and return its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) >= 2 and args[0] == "hook" and args[1] in SETUP_WORDS:
        # 'agbom hook install cursor --server URL' configures a host; it answers no event.
        from agbom.cli.hook_setup import run as setup_run

        return setup_run(args[1:])
    if (
        len(args) >= 2
        and args[0] == "hook"
        and any(a == "--server" or a.startswith("--server=") for a in args)
    ):
        from agbom.adapters.thin import main as thin_main

        return thin_main(args[1:])
    if len(args) >= 2 and args[0] == "hook":
        from agbom.adapters.standalone import main as standalone_main

        code = standalone_main(args[1:])
        if code is not None:
            return code
    from agbom.cli.app import run

    return run(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
