"""JSON for the thin hook's start path, read and written by the C accelerator ``_json`` alone.

A command hook is one process per tool call, and ``import json`` was its largest cost:
``json.decoder`` compiles regular expressions when imported, which loads :mod:`re`,
:mod:`enum`, :mod:`functools` and :mod:`collections`, about as much time again as the
interpreter's own start. The scanner and the encoder that do the work inside :mod:`json` are
the C module ``_json``; this module drives them with the settings of ``json.loads(data)`` and
``json.dumps(obj, ensure_ascii=False, separators=(",", ":"))``, so that the same documents
are accepted (strict strings, NaN and Infinity, duplicate keys) and the same bytes are
written. Whatever they do not take whole is handed to :mod:`json` itself, which raises its
own error: a refusal costs the import, an answer does not. tests/adapters/test_wire_json.py
holds both to that on a generated corpus of hook payloads, hostile ones included. An
interpreter without ``_json`` gets :mod:`json` for everything.

Standard library only: thin mode imports it on every event.
"""

try:
    import _json
except ImportError:  # pragma: no cover - CPython always has it
    _json = None  # type: ignore[assignment]

__all__ = ["dumps", "loads"]

_SPACE = " \t\n\r"
"""The characters JSON calls whitespace (and the only ones :mod:`json` skips)."""


class _Context:
    """The settings the C scanner reads off a decoder: :class:`json.JSONDecoder`'s defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    array_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {
        "NaN": float("nan"),
        "Infinity": float("inf"),
        "-Infinity": float("-inf"),
    }.__getitem__


_scan = getattr(_json, "make_scanner", None)
_scan_once = _scan(_Context()) if _scan is not None else None
_make_encoder = getattr(_json, "make_encoder", None)
_encode_string = getattr(_json, "encode_basestring", None)


def _encoding(data: bytes) -> str:
    """The encoding :mod:`json` reads ``data`` in: a byte-order mark first, then the zero
    bytes ASCII text in UTF-16 or UTF-32 starts with, UTF-8 otherwise (RFC 4627, section 3)."""
    if data[:4] in (b"\x00\x00\xfe\xff", b"\xff\xfe\x00\x00"):
        return "utf-32"
    if data[:2] in (b"\xfe\xff", b"\xff\xfe"):
        return "utf-16"
    if data[:3] == b"\xef\xbb\xbf":
        return "utf-8-sig"
    if len(data) >= 4:
        if not data[0]:
            return "utf-16-be" if data[1] else "utf-32-be"
        if not data[1]:
            return "utf-16-le" if data[2] or data[3] else "utf-32-le"
    elif len(data) == 2:
        if not data[0]:
            return "utf-16-be"
        if not data[1]:
            return "utf-16-le"
    return "utf-8"


def loads(data: bytes) -> object:
    """The document in ``data``, as ``json.loads(data)`` reads it.

    A document the C scanner reads whole is returned as it is; anything else (bytes that are
    no text in their encoding, a syntax error, nesting past the recursion limit, data after
    the document) goes to :func:`json.loads`, which raises its own error: malformed input,
    and only that, pays for importing :mod:`json`. (The scanner cannot be left to report the
    error itself: before Python 3.12 it looks ``json.decoder`` up without importing it, and
    fails with a SystemError when nobody has.)
    """
    if _scan_once is not None:
        try:
            text = data.decode(_encoding(data), "surrogatepass")
            value, end = _scan_once(text, len(text) - len(text.lstrip(_SPACE)))
            if not text[end:].lstrip(_SPACE):
                return value
        except Exception:  # json.loads says what is wrong, below
            pass
    import json

    return json.loads(data)


def _refuse(value: object) -> object:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def dumps(value: object) -> bytes:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")``:
    what cannot be written (a lone surrogate, a cycle, an object JSON has no form for) raises
    the error that would."""
    if _make_encoder is not None and _encode_string is not None:
        try:
            if isinstance(value, str):
                text: str = _encode_string(value)
                return text.encode("utf-8")
            # A new marker table per call, as json makes one: it is how a cycle is told.
            encode = _make_encoder({}, _refuse, _encode_string, None, ":", ",", False, False, True)
            return "".join(encode(value, 0)).encode("utf-8")
        except Exception:  # json.dumps raises its own error, below
            pass
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
