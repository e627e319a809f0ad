"""Loading and compiling the JSON Schemas agbom ships as package data.

Schemas are Draft-07 so that fastjsonschema can compile them into plain Python (a few
microseconds per validation on the hot path). ``$ref`` between shipped files resolves
locally; nothing is ever fetched from the network.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from importlib import resources
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


@functools.cache
def compiled_validator(name: str) -> Validator:
    """A fastjsonschema validator for the shipped schema ``name``, compiled once per process."""
    return fastjsonschema.compile(load_schema(name), handlers={"https": _resolve, "http": _resolve})


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
