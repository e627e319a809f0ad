"""Loading and compiling the JSON Schemas agbom ships as package data.

Schemas are Draft-07 so that fastjsonschema can compile them into plain Python (a few
microseconds per validation on the hot path). ``$ref`` between shipped files resolves
locally; nothing is ever fetched from the network.

That Python is generated at development time into ``agbom/_validators/`` (one module per
schema; ``python -m agbom._validators`` regenerates them, a test checks they are current):
compiling the schemas cost every process that validates anything, the standalone hook
included, 0.1-0.3 s. A module is used only when it was generated from these very schema
files by the installed fastjsonschema; otherwise the schema is compiled here, as before.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import importlib
import json
import re
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import fastjsonschema

SCHEMA_BASE = "https://agbom.dev/schema/v1/"

# Packages whose ``schemas/`` folder is searched, in order, for a file name.
_SCHEMA_PACKAGES = ("agbom.inventory", "agbom.protocol", "agbom.rules")

Validator = Callable[[Any], Any]


@functools.cache
def load_schema(name: str) -> dict[str, Any]:
    """Return the shipped schema file ``name`` (for example ``"document.json"``)."""
    for package in _SCHEMA_PACKAGES:
        try:
            path = resources.files(package).joinpath("schemas", name)
        except ModuleNotFoundError:
            continue
        if path.is_file():
            loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            return loaded
    raise FileNotFoundError(f"no shipped schema named {name!r}")


def _resolve(uri: str) -> dict[str, Any]:
    name = uri.rsplit("/", 1)[-1].split("#", 1)[0]
    return load_schema(name)


_HANDLERS = {"https": _resolve, "http": _resolve}
_GENERATED_PACKAGE = "agbom._validators"


def _schema_files() -> list[tuple[str, bytes]]:
    # By path next to this module: resources.files() would import agbom.rules and the others.
    root = Path(__file__).resolve().parent
    return [
        (f"{package}/{entry.name}", entry.read_bytes())
        for package in _SCHEMA_PACKAGES
        for entry in sorted((root / package.removeprefix("agbom.") / "schemas").glob("*.json"))
    ]


@functools.cache
def schemas_sha256() -> str:
    """SHA-256 over every shipped schema file (a ``$ref`` may reach any of them)."""
    digest = hashlib.sha256()
    for name, data in _schema_files():
        digest.update(f"{name}\0{len(data)}\0".encode())  # framed: no two sets hash alike
        digest.update(data)
    return digest.hexdigest()


def schema_names() -> list[str]:
    """The names of every shipped schema (what :func:`compiled_validator` accepts)."""
    return [name.rsplit("/", 1)[1] for name, _ in _schema_files()]


def generated_module(name: str) -> str:
    """The module (under ``agbom._validators``) generated for the schema ``name``."""
    return "gen_" + re.sub(r"[^0-9A-Za-z]", "_", name.removesuffix(".json"))


def generated_path(name: str) -> Path:
    """Where the generated validator of schema ``name`` lives in the package."""
    return Path(__file__).resolve().parent / "_validators" / f"{generated_module(name)}.py"


_FORMAT_LOCALS = re.compile(r'"([^"\\\n]*)"\.format\(\*\*locals\(\)\)')
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def _concat(match: re.Match[str]) -> str:
    # '"x[{i}].y".format(**locals())' -> '"x[" + str(i) + "].y"': same text, no locals().
    parts = _PLACEHOLDER.split(match.group(1))
    pieces = [
        f"str({part})" if index % 2 else json.dumps(part)
        for index, part in enumerate(parts)
        if part or index % 2
    ]
    return "(" + " + ".join(pieces or ['""']) + ")"


def without_format_locals(code: str) -> str:
    """fastjsonschema's generated ``code`` with every ``"…{name}…".format(**locals())`` written
    as plain string concatenation: the same text, without building a dict of every local of
    the function. fastjsonschema names each array item and object member it descends into
    that way, on the path that passes too, so it is paid on every valid request."""
    return _FORMAT_LOCALS.sub(_concat, code)


GENERATOR_VERSION = 1
"""Bumped when :func:`generated_source` rewrites fastjsonschema's code differently: the shipped
modules are then stale (tests/test_schema_validators.py says so) and are not used."""


def generated_source(name: str) -> str:
    """fastjsonschema's code for the shipped schema ``name``, as ``agbom/_validators`` holds it.

    The code :func:`fastjsonschema.compile` would execute (its ``compile_to_code`` form), with
    the one rewrite of :func:`without_format_locals` (same checks, same messages).
    """

    # Fresh copies: fastjsonschema writes into the schemas it resolves, so code generated
    # after another schema's would depend on the order (load_schema caches the parsed files).
    def fresh(uri: str) -> dict[str, Any]:
        return copy.deepcopy(_resolve(uri))

    resolver, generator = fastjsonschema._factory(  # noqa: SLF001 - compile_to_code() does
        copy.deepcopy(load_schema(name)),  # not say which function is the entry point
        {"https": fresh, "http": fresh},
    )
    return (
        f'"""Validator of {name}, generated by agbom._schema: do not edit.\n'
        "\n"
        "Regenerate with: python -m agbom._validators\n"
        '"""\n'
        "\n"
        "# mypy: ignore-errors\n"
        "# ruff: noqa\n"
        "# fmt: off\n"
        f'SCHEMAS_SHA256 = "{schemas_sha256()}"\n'
        f'FASTJSONSCHEMA_VERSION = "{fastjsonschema.VERSION}"\n'
        f"GENERATOR_VERSION = {GENERATOR_VERSION}\n"
        f"{generator.global_state_code}\n"
        f"{without_format_locals(generator.func_code)}\n"
        f"\nvalidate = {resolver.get_scope_name()}\n"
    )


def _shipped(name: str) -> Validator | None:
    """The generated validator of ``name`` when it was built from these schemas, else None."""
    try:
        module = importlib.import_module(f"{_GENERATED_PACKAGE}.{generated_module(name)}")
    except ImportError:
        return None
    key = (
        getattr(module, "SCHEMAS_SHA256", None),
        getattr(module, "FASTJSONSCHEMA_VERSION", None),
        getattr(module, "GENERATOR_VERSION", None),
    )
    if key != (schemas_sha256(), fastjsonschema.VERSION, GENERATOR_VERSION):
        return None
    validate = getattr(module, "validate", None)
    return validate if callable(validate) else None


@functools.cache
def compiled_validator(name: str) -> Validator:
    """A fastjsonschema validator for the shipped schema ``name``, built once per process."""
    shipped = _shipped(name)
    if shipped is not None:
        return shipped
    return fastjsonschema.compile(load_schema(name), handlers=_HANDLERS)


def describe_failure(exc: fastjsonschema.JsonSchemaValueException) -> str:
    """Turn a fastjsonschema failure into a short message naming the field and the rule."""
    name = exc.name or "data"
    field = name.removeprefix("data").lstrip(".")
    if exc.rule == "required" and isinstance(exc.value, dict):
        missing = [f for f in exc.rule_definition if f not in exc.value]
        text = (
            "missing required field" + ("s" if len(missing) > 1 else "") + ": " + ", ".join(missing)
        )
    else:
        text = exc.message
        if text.startswith(name + " "):
            text = text[len(name) + 1 :]
    return f"field {field!r} {text}" if field else text
