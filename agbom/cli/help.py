"""Conventional help text for every command.

Recent typer versions write an argument as ``{AGBOM.json}`` or ``[agbom_file]`` in the usage
line and every value as its Python type (``<list[Path]>``, ``<str>``). agbom's help uses the
usual shapes instead: ``agbom scan [OPTIONS] [PATH...]``, ``--db PATH``,
``--format [table|json]``, ``--fail-on SEVERITY``. The help and default texts are typer's own;
only the usage line and the name column are built here, from what every click parameter has
(``opts``, ``metavar``, ``nargs``, ``required``).
"""

from __future__ import annotations

import pathlib
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup
from typer.models import DefaultPlaceholder

HELP_OPTION_NAMES = ["-h", "--help"]


def _choices(param: Any) -> list[str]:
    descriptor = getattr(param, "type_descriptor", None)  # typer >= 0.2x
    if descriptor is not None:
        found = list(descriptor.choices or ()) if descriptor.is_choice else []
    else:  # click parameter types
        found = list(getattr(getattr(param, "type", None), "choices", None) or ())
    return [str(getattr(choice, "value", choice)) for choice in found]


def _base_type(param: Any) -> Any:
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is not None:
        annotation = descriptor.annotation
        args = getattr(annotation, "__args__", None)
        return args[0] if args and getattr(annotation, "__origin__", None) is list else annotation
    return getattr(param, "type", None)


def _type_word(param: Any) -> str:
    kind = _base_type(param)
    name = str(getattr(kind, "name", "") or getattr(kind, "__name__", "")).lower()
    if kind is pathlib.Path or name in ("path", "file"):
        return "PATH"
    if kind is int or name.startswith("int"):
        return "INTEGER"
    if kind is float or name.startswith("float"):
        return "NUMBER"
    return "TEXT"


def metavar(param: Any) -> str:
    """What a value of ``param`` is called in help: its metavar, its choices, else a type word
    (arguments: their name in capitals)."""
    if param.metavar:
        return str(param.metavar)
    choices = _choices(param)
    if choices:
        return "[" + "|".join(choices) + "]"
    if param.param_type_name == "argument":
        word = str(param.name or "ARG").upper()
    else:
        word = _type_word(param)
    return word + ("..." if param.nargs != 1 and not word.endswith("...") else "")


def _usage_piece(param: Any) -> str:
    word = metavar(param)
    if param.nargs != 1 and not word.endswith("..."):
        word += "..."
    return word if param.required else f"[{word}]"


def _option_names(param: Any) -> str:
    def joined(names: list[str]) -> str:
        return ", ".join(sorted(names, key=lambda n: (len(n) - len(n.lstrip("--")), n)))

    text = joined(list(param.opts))
    is_flag = bool(getattr(param, "is_flag", False) or getattr(param, "count", False))
    if not is_flag:
        text += " " + metavar(param)
    if param.secondary_opts:
        text += " / " + joined(list(param.secondary_opts))
    return text


class AgbomCommand(TyperCommand):
    """A typer command whose usage line and option names read the conventional way."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        pieces.extend(
            _usage_piece(p)
            for p in self.get_params(ctx)
            if p.param_type_name == "argument" and not getattr(p, "hidden", False)
        )
        return pieces

    def format_options(self, ctx: Any, formatter: Any) -> None:
        arguments: list[tuple[str, str]] = []
        options: list[tuple[str, str]] = []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                arguments.append((metavar(param), record[1]))
            else:
                options.append((_option_names(param), record[1]))
        for title, rows in (("Arguments", arguments), ("Options", options)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


# A summary is never cut: click's own list cuts it to what fits one line, ending in "...".
_WHOLE_SUMMARY = 100_000


class AgbomGroup(TyperGroup):
    """A command group (``agbom skills``, ``agbom audit``) whose list of commands gives each
    one's whole summary (the first sentence of its help), wrapped to the terminal, as
    ``agbom --help`` does for the top-level commands."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=_WHOLE_SUMMARY)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def install(app: typer.Typer) -> None:
    """Give every command of ``app`` and of its groups (recursively) the conventional help."""
    for info in app.registered_commands:
        if info.cls is None or info.cls is TyperCommand:  # typer fills in its own class
            info.cls = AgbomCommand
    for group in app.registered_groups:
        current: Any = group.cls  # typer's Default(None) unless add_typer named a class
        if isinstance(current, DefaultPlaceholder) or current in (None, TyperGroup):
            group.cls = AgbomGroup
        if group.typer_instance is not None:
            install(group.typer_instance)
