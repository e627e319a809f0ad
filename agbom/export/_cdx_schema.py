"""Fast validation of CycloneDX JSON against the CycloneDX schemas agbom ships.

The library's own validator (jsonschema Draft-07) checks ``uniqueItems`` pairwise, which is
quadratic: about 100 s for a 10,000-component BOM on a 2-core machine. fastjsonschema
compiles the very same schema files (shipped in ``agbom/export/schemas/``, see the README
there for their origin and license) into Python that hashes items instead (about 0.6 s for
the same BOM). The compiled validator is built once per spec version and process.

The ``$ref`` targets (SPDX license ids, JSF signatures, cryptography definitions) are mapped
to the files shipped next to the BOM schema; nothing is fetched from the network.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastjsonschema

from agbom.export._iri import is_iri, is_iri_reference
from agbom.export.interface import ExportError

SPEC_VERSIONS: tuple[str, ...] = ("1.6", "1.7")
"""CycloneDX versions agbom writes and validates (both schemas ship in agbom/export/schemas)."""

_SCHEMA_BASE = "http://cyclonedx.org/schema/"
_lock = threading.Lock()


def check_spec_version(spec_version: str) -> str:
    """Return ``spec_version`` when agbom supports it, else raise :class:`ExportError`."""
    if spec_version not in SPEC_VERSIONS:
        raise ExportError(
            f"unsupported CycloneDX spec version {spec_version!r} "
            f"(supported: {', '.join(SPEC_VERSIONS)})"
        )
    return spec_version


_SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"


@functools.cache
def _load(name: str) -> dict[str, Any]:
    path = _SCHEMA_DIR / name
    try:
        loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ExportError(f"bundled CycloneDX schema {name} is missing: {exc}") from exc
    return loaded


def bom_schema(spec_version: str) -> dict[str, Any]:
    """The shipped CycloneDX JSON schema for ``spec_version`` (parsed, cached)."""
    return _load(f"bom-{check_spec_version(spec_version)}.SNAPSHOT.schema.json")


@functools.cache
def spdx_license_ids() -> frozenset[str]:
    """The SPDX license ids CycloneDX accepts in ``license.id`` (its shipped enumeration)."""
    return frozenset(_load("spdx.SNAPSHOT.schema.json").get("enum", ()))


def _handler(uri: str) -> dict[str, Any]:
    # Only the three companion files the BOM schema references are served; any other
    # remote reference is a schema we do not know and must not fetch.
    name = uri.split("#", 1)[0]
    if not name.startswith(_SCHEMA_BASE):
        raise ExportError(f"CycloneDX schema refers to an unknown document {uri!r}")
    file = name.removeprefix(_SCHEMA_BASE)
    if file not in (
        "spdx.SNAPSHOT.schema.json",
        "jsf-0.82.SNAPSHOT.schema.json",
        "cryptography-defs.SNAPSHOT.schema.json",
    ):
        raise ExportError(f"CycloneDX schema refers to an unknown document {uri!r}")
    return _load(file)


_FORMATS: dict[str, Callable[[Any], bool]] = {
    "iri-reference": is_iri_reference,
    "iri": is_iri,
}


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


@functools.cache
def _compiled(spec_version: str) -> Callable[[Any], Any]:
    schema = bom_schema(spec_version)
    # fastjsonschema's generated code names each array item with '"...[{i}]".format(
    # **locals())'; building locals() in these very large functions was half of the time
    # to validate a 10,000-component BOM. The code is rewritten to plain concatenation
    # before it is executed, as fastjsonschema.compile() would execute it. The validation
    # logic is untouched, and the tests check it still agrees with the library's validator.
    resolver, generator = fastjsonschema._factory(  # noqa: SLF001 - see above
        schema,
        {"http": _handler, "https": _handler},
        _FORMATS,
        False,  # use_default: validation must never add "default" values to the document
    )
    code = _FORMAT_LOCALS.sub(_concat, generator.func_code)
    namespace = generator.global_state
    exec(compile(code, f"<cyclonedx-{spec_version}-schema>", "exec"), namespace)  # noqa: S102
    return functools.partial(namespace[resolver.get_scope_name()], custom_formats=_FORMATS)


def compiled_validator(spec_version: str) -> Callable[[Any], Any]:
    """The compiled fastjsonschema validator for ``spec_version`` (about 0.6 s the first time)."""
    check_spec_version(spec_version)
    with _lock:  # compile once even when two threads ask at the same time
        return _compiled(spec_version)


def validate_cyclonedx_json(doc: dict[str, Any], spec_version: str) -> None:
    """Raise :class:`ExportError` unless ``doc`` is valid CycloneDX ``spec_version`` JSON.

    Checks the shipped schema (which forbids unknown properties from 1.4 on, so this is the
    library's "strict" validation too), with RFC 3987 IRI checks as strict as the library's.
    """
    validator = compiled_validator(spec_version)
    try:
        validator(doc)
    except fastjsonschema.JsonSchemaValueException as exc:
        name = exc.name or "data"
        where = name.removeprefix("data") or "document"
        raise ExportError(
            f"not valid CycloneDX {spec_version}: {where.lstrip('.') or 'document'}: "
            f"{_short(exc.message, name)}"
        ) from exc
    except fastjsonschema.JsonSchemaException as exc:  # pragma: no cover - schema defect
        raise ExportError(f"CycloneDX {spec_version} schema failed to apply: {exc}") from exc


def _short(message: str, name: str) -> str:
    text = message[len(name) + 1 :] if message.startswith(name + " ") else message
    return text if len(text) <= 300 else text[:297] + "..."
