"""Fast validation of CycloneDX JSON against the CycloneDX schemas agbom ships.

The library's own validator (jsonschema Draft-07) checks ``uniqueItems`` pairwise, which is
quadratic: about 100 s for a 10,000-component BOM on a 2-core machine. fastjsonschema
compiles the very same schema files (shipped in ``agbom/export/schemas/``, see the README
there for their origin and license) into Python that hashes items instead (about 0.4 s for
the same BOM). That Python is generated once, at development time, into
``agbom/export/_cdx_validators/`` (a test checks it is what the schemas and the installed
fastjsonschema give), so that a process imports it instead of compiling the schema.

The ``$ref`` targets (SPDX license ids, JSF signatures, cryptography definitions) are mapped
to the files shipped next to the BOM schema; nothing is fetched from the network.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastjsonschema

from agbom._schema import without_format_locals
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


# Bump when the rewriting of fastjsonschema's code below changes: the shipped modules are then
# stale and are regenerated (tests/export/test_export_validator_build.py says so).
GENERATOR_VERSION = 1
_COMPANIONS = (
    "cryptography-defs.SNAPSHOT.schema.json",
    "jsf-0.82.SNAPSHOT.schema.json",
    "spdx.SNAPSHOT.schema.json",
)
_DEFINITION_KWARG = re.compile(r'", definition=')
_RULE_KWARG_END = re.compile(r", rule=(?:'[A-Za-z]+'|None)\)$")


def schema_sha256(spec_version: str) -> str:
    """SHA-256 over the bundled BOM schema of ``spec_version`` and its companion files."""
    digest = hashlib.sha256()
    for name in (f"bom-{check_spec_version(spec_version)}.SNAPSHOT.schema.json", *_COMPANIONS):
        try:
            data = (_SCHEMA_DIR / name).read_bytes()
        except OSError as exc:
            raise ExportError(f"bundled CycloneDX schema {name} is missing: {exc}") from exc
        # Name and length framed, so that no two file sets hash alike.
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def _strip_definition(line: str) -> str:
    # Every raise in fastjsonschema's code carries the whole (sub)schema it failed, as a dict
    # literal: 6.2 of the 6.9 MB of code for CycloneDX 1.6, and compiling it peaked at
    # 340 MiB. agbom reads only the exception's message and name, so the literal goes.
    start = line.find('", definition=')
    end = _RULE_KWARG_END.search(line)
    if start < 0 or end is None or end.start() < start:
        raise ExportError("unexpected fastjsonschema code: cannot find the raised definition")
    return line[: start + 1] + ", definition=None" + line[end.start() :]


def generated_source(spec_version: str) -> str:
    """The validator module for ``spec_version``, as shipped in ``agbom/export/_cdx_validators``.

    fastjsonschema's code for the bundled schema, with two rewrites that leave the validation
    logic untouched (the tests check it still agrees with the library's validator):
    - the schema each ``raise`` carries is left out (see :func:`_strip_definition`);
    - array items are named with '"x[" + str(i) + "]"', not '"x[{i}]".format(**locals())':
      building locals() in these very large functions was half of the time to validate a
      10,000-component BOM.
    """
    schema = bom_schema(spec_version)
    resolver, generator = fastjsonschema._factory(  # noqa: SLF001 - the public compile()
        schema,  # cannot take the rewrites above, nor give the code to cache it
        {"http": _handler, "https": _handler},
        _FORMATS,
        False,  # use_default: validation must never add "default" values to the document
    )
    lines = [
        _strip_definition(line) if "JsonSchemaValueException(" in line else line
        for line in generator.func_code.splitlines()
    ]
    code = without_format_locals("\n".join(lines))
    header = (
        f'"""CycloneDX {spec_version} validator generated by agbom.export._cdx_schema.\n'
        "\n"
        "Regenerate with: python -m agbom.export._cdx_validators\n"
        '"""\n'
        "# mypy: ignore-errors\n"
        "# fmt: off\n"
        f'SCHEMA_SHA256 = "{schema_sha256(spec_version)}"\n'
        f'FASTJSONSCHEMA_VERSION = "{fastjsonschema.VERSION}"\n'
        f"GENERATOR_VERSION = {GENERATOR_VERSION}\n"
    )
    entry = resolver.get_scope_name()
    return f"{header}{generator.global_state_code}\n{code}\n\nvalidate = {entry}\n"


def _module_name(spec_version: str) -> str:
    return "agbom.export._cdx_validators.cyclonedx_" + spec_version.replace(".", "_")


def module_path(spec_version: str) -> Path:
    """Where the generated validator module of ``spec_version`` lives in the package."""
    return (
        Path(__file__).resolve().parent
        / "_cdx_validators"
        / ("cyclonedx_" + check_spec_version(spec_version).replace(".", "_") + ".py")
    )


def _shipped(spec_version: str) -> Callable[..., Any] | None:
    """The shipped validator when it was built from these very schemas by this generator."""
    try:
        module = importlib.import_module(_module_name(spec_version))
    except ImportError:
        return None
    key = (
        getattr(module, "SCHEMA_SHA256", None),
        getattr(module, "FASTJSONSCHEMA_VERSION", None),
        getattr(module, "GENERATOR_VERSION", None),
    )
    if key != (schema_sha256(spec_version), fastjsonschema.VERSION, GENERATOR_VERSION):
        return None
    validate = getattr(module, "validate", None)
    return validate if callable(validate) else None


@functools.cache
def _compiled(spec_version: str) -> Callable[[Any], Any]:
    # The shipped module is imported like any module (from its bytecode once compiled: a few
    # ms). When it does not match the schemas or the installed fastjsonschema, the same code
    # is generated and compiled here, in this process (about 0.8 s): never a stale validator.
    validate = _shipped(spec_version)
    if validate is None:
        namespace: dict[str, Any] = {}
        code = compile(generated_source(spec_version), f"<cyclonedx-{spec_version}-schema>", "exec")
        exec(code, namespace)  # noqa: S102 - our own generated code, from the bundled schema
        validate = namespace["validate"]
    return functools.partial(validate, custom_formats=_FORMATS)


def compiled_validator(spec_version: str) -> Callable[[Any], Any]:
    """The fastjsonschema validator for ``spec_version`` (built once per process)."""
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
