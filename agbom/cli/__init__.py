"""Command-line entry point.

``main`` routes ``agbom hook install|uninstall|doctor`` to their own small application
(agbom/cli/hook_setup.py), ``agbom hook RUNTIME --server URL`` to a lean forwarder, and a
well-formed standalone ``agbom hook RUNTIME ...`` to the in-process decision, before typer or
any other command is imported (a command hook starts one process per tool call); every other
command, and a hook command line that needs typer's help or usage errors, goes through the
typer application in :mod:`agbom.cli.app`. :func:`launch_hook` is the hook launcher's
(bin/agbom-hook): ``agbom hook`` with a shorter end.
"""

import sys

SETUP_WORDS = ("install", "uninstall", "doctor")


def _thin(args: list[str]) -> bool:
    """Whether ``args`` is a thin-mode hook command line (``hook RUNTIME ... --server URL``)."""
    return (
        len(args) >= 2
        and args[0] == "hook"
        and args[1] not in SETUP_WORDS
        and any(a == "--server" or a.startswith("--server=") for a in args)
    )


def main(argv: list[str] | None = None) -> int:
    """Run the agbom CLI and return its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) >= 2 and args[0] == "hook" and args[1] in SETUP_WORDS:
        # 'agbom hook install cursor --server URL' configures a host; it answers no event.
        from agbom.cli.hook_setup import run as setup_run

        return setup_run(args[1:])
    if _thin(args):
        from agbom.adapters.thin import main as thin_main

        return thin_main(args[1:])
    if len(args) >= 2 and args[0] == "hook":
        from agbom.adapters.standalone import main as standalone_main

        code = standalone_main(args[1:])
        if code is not None:
            return code
    from agbom.cli.app import run

    return run(args)


def launch_hook() -> None:
    """``agbom-hook ARGS``: ``agbom hook ARGS``, ended with ``os._exit`` in thin mode.

    A thin-mode answer leaves the process at once, its output flushed: the interpreter's
    teardown (every module and object freed one by one) is about 2 ms of each event, and thin
    mode leaves nothing that needs it (no thread, no ``atexit`` handler, no file but standard
    output and error). Any other command line (standalone mode, ``install``) ends as
    ``agbom`` does, through the teardown: a store, a telemetry exporter may need it.
    """
    args = ["hook", *sys.argv[1:]]
    if not _thin(args):
        sys.exit(main(args))
    from agbom.adapters.thin import main as thin_main

    code = thin_main(args[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    import os

    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
