"""Which redactions hid a credential written in plaintext, and where.

Redaction (:mod:`agbom.scan.redact`) keeps secrets out of every output, and it hides more than
secrets on purpose: every URL query value, every ``-e KEY=VALUE`` value, ``--token=${TOKEN}``.
A rule that reports *credential hygiene* needs the narrower question: did the file hold a
credential itself, where an environment reference or a secret store belongs? This module
answers it from the text before and after redaction, and from env and header values (which are
never kept in a component). The answer is a list of places (``args[2]``, ``env.GITHUB_TOKEN``,
``headers.Authorization``, ``endpoint``) with what kind of credential sits there; the value
itself is never returned, stored or shown.

A hidden value is *not* a plaintext credential when it is:

- a reference resolved at launch: ``${VAR}``, ``${env:VAR}``, ``${input:id}``,
  ``${user_config.key}``, ``{env:VAR}`` (opencode), ``$VAR``, ``%VAR%``, ``$(command)``,
  ``{{ template }}``, or a secret-store URI (``op://``, ``vault:``, ``keyring:``);
- a placeholder: ``<YOUR_KEY>``, ``[token]``, ``xxxx``, ``****``, ``...``, a value naming
  itself as an example (``your-api-key``, ``changeme``, ``example``, ``placeholder``,
  ``redacted``, ``dummy``, ``replace-me``, ``todo``), or a bare word such as ``password``;
- hidden for a reason other than being a credential: a query value under an ordinary name
  (``?region=eu``), a ``-e LOG_LEVEL=debug`` value, a whole argument hidden for its length.

Everything else that redaction hid because of a secret-sounding name (``--api-key=``,
``PASSWORD=``, ``Authorization: Bearer``), a well-known token shape (``ghp_``, ``sk_live_``,
``AKIA``) or a URL password is reported.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from agbom.scan.redact import REDACTED, is_secret_name

# Token shapes with the name a finding gives them (the value never leaves this module).
_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(f"(?<![A-Za-z0-9])(?:{pattern})"))
    for label, pattern in (
        ("a GitHub token", r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"),
        ("a GitLab token", r"glpat-[A-Za-z0-9_\-]{16,}"),
        ("a Stripe live key", r"[sr]k_live_[A-Za-z0-9]{16,}"),
        ("a Stripe test key", r"[sr]k_test_[A-Za-z0-9]{16,}"),
        ("an OpenAI-style API key", r"sk-[A-Za-z0-9_\-]{16,}"),
        ("a Slack token", r"xox[abposr]-[A-Za-z0-9\-]{10,}"),
        ("an AWS access key", r"A[KS]IA[0-9A-Z]{16}"),
        ("a Google API key", r"AIza[0-9A-Za-z_\-]{30,}"),
        ("an npm token", r"npm_[A-Za-z0-9]{30,}"),
        ("a JSON Web Token", r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    )
)

_REFERENCE = re.compile(
    r"\$\{[^}]*\}|\{\{.*?\}\}|\{env:[^}]+\}|^\$[A-Za-z_][A-Za-z0-9_]*$|^%[A-Za-z_][A-Za-z0-9_]*%$"
    r"|^\$\(|^(?:op|vault|keyring|secret|env|awssm|gcpsm|azkv)://|^(?:vault|keyring|env):",
    re.S,
)
_WRAPPED = re.compile(r"^(?:<[^<>]*>|\[[^\[\]]*\]|\{[^{}]*\}|\([^()]*\))$")
_PLACEHOLDER_WORDS = re.compile(
    r"(?i)your[-_ ]?|change[-_ ]?me|example|placeholder|redacted|dummy|replace[-_ ]?(?:me|this)"
    r"|insert[-_ ]|\btodo\b|\bfixme\b|xxxx|\*\*\*|\.\.\.|<[a-z_ -]+>|^(?:none|null|empty|n/?a)$"
)
# A bare word that names the field instead of filling it (``user:password@host``).
_NAME_WORDS = frozenset(
    {
        "password",
        "passwd",
        "pass",
        "pwd",
        "secret",
        "token",
        "apikey",
        "api-key",
        "api_key",
        "key",
        "mytoken",
        "mypassword",
        "mysecret",
        "test",
        "user",
        "username",
    }
)
# Shorter than this, with no token shape, a value is not reported (``-p 1``, ``pw=x``).
MIN_CHARS = 4
# Aligning a longer argument with its redacted form is not attempted: it was hidden whole.
MAX_ALIGN_CHARS = 4096
_QUOTES = "'\""
_SCHEME_WORDS = frozenset({"bearer", "basic", "token", "digest", "negotiate"})
_CONTEXT_NAME = re.compile(r"(?P<name>(?:--?)?[A-Za-z_][\w.\-]*)[\"']?\s*[=:]\s*[\"']?$")
_USERINFO_CONTEXT = re.compile(r"(?:://|^|[\s=])[^\s/@:=]*:$")
_QUERY_CONTEXT = re.compile(r"[?&][^\s=&?]*=$")
_SCHEME_CONTEXT = re.compile(r"(?i)\b(?:bearer|basic|token|digest|negotiate)\s+$")


def shape_of(value: str) -> str | None:
    """The kind of well-known token ``value`` holds (``"a GitHub token"``), or ``None``."""
    for label, pattern in _SHAPES:
        if pattern.search(value):
            return label
    return None


def is_reference(value: str) -> bool:
    """Whether ``value`` is resolved at launch (an env variable, an input, a secret store)."""
    return bool(_REFERENCE.search(value.strip().strip(_QUOTES)))


def is_placeholder(value: str) -> bool:
    """Whether ``value`` stands in for a credential rather than being one."""
    text = value.strip().strip(_QUOTES)
    if not text or _WRAPPED.match(text):
        return True
    if text.casefold() in _NAME_WORDS:
        return True
    if not any(ch.isalnum() for ch in text):
        return True
    letters = {ch.casefold() for ch in text if ch.isalnum()}
    if len(letters) <= 1:  # "0000", "aaaaaaaa", "XXXXXXXX"
        return True
    return bool(_PLACEHOLDER_WORDS.search(text))


def _plaintext(value: str) -> bool:
    return not is_reference(value) and not is_placeholder(value)


def _kind(value: str, context: str, after: str, previous: str | None) -> str | None:
    """Why the hidden ``value`` is a plaintext credential, or ``None`` when it is not one.

    ``context`` and ``after`` are the redacted text just before and after it in the same
    argument; ``previous`` the argument before it when the value is a whole argument
    (``--api-key X``).
    """
    value = value.strip().strip(_QUOTES)
    if not _plaintext(value):
        return None
    shape = shape_of(value)
    if shape is not None:
        return shape
    if len(value) < MIN_CHARS:
        return None
    if _SCHEME_CONTEXT.search(context):
        return "a credential after an authorization scheme"
    if _QUERY_CONTEXT.search(context):
        name = context.rsplit("=", 1)[0].rsplit("?", 1)[-1].rsplit("&", 1)[-1]
        return f"a credential in URL parameter {name}" if is_secret_name(name) else None
    if after.startswith("@") and _USERINFO_CONTEXT.search(context):
        return "a password in a URL"
    named = _CONTEXT_NAME.search(context)
    if named is not None:
        name = named.group("name")
        return f"the value of {name}" if is_secret_name(name) else None
    if not context and previous is not None:
        flag = previous.strip(_QUOTES)
        if flag.casefold() in _SCHEME_WORDS or _SCHEME_CONTEXT.search(flag + " "):
            return "a credential after an authorization scheme"
        if flag.startswith("-") and (is_secret_name(flag) or flag == "-k"):
            return f"the value of {flag}"
    return None


def _hidden(original: str, redacted: str) -> list[tuple[str, str, str]] | None:
    """``(before, value, after)`` for each redaction marker in ``redacted``: the redacted text
    around it (up to the markers next to it) and the original text it replaced. ``None`` when
    the two do not line up (a token re-quoted by redaction)."""
    pieces = redacted.split(REDACTED)
    if len(pieces) == 1:
        return []
    if len(original) > MAX_ALIGN_CHARS:
        return None
    pattern = "(.*?)".join(re.escape(p) for p in pieces)
    match = re.fullmatch(pattern, original, re.S)
    if match is None:
        return None
    return [(pieces[i], match.group(i + 1), pieces[i + 1]) for i in range(len(pieces) - 1)]


def in_args(
    original: Sequence[str], redacted: Sequence[str], hits: Sequence[int]
) -> list[tuple[int, str]]:
    """``(index, kind)`` for each argument that holds a plaintext credential.

    ``original`` and ``redacted`` are the vectors before and after
    :func:`agbom.scan.redact.redact_args`, which reported ``hits``.
    """
    found: list[tuple[int, str]] = []
    for index in hits:
        before, after = original[index], redacted[index]
        previous = original[index - 1] if index > 0 else None
        segments = _hidden(before, after)
        if segments is None:
            kind = shape_of(before)  # cannot line up: only an unmistakable token is reported
            if kind is not None:
                found.append((index, kind))
            continue
        for context, value, after in segments:
            kind = _kind(value, context, after, previous)
            if kind is not None:
                found.append((index, kind))
                break
    return found


def in_url(original: str, redacted: str) -> str | None:
    """The kind of plaintext credential a URL holds (a password, a secret-named query value,
    a token in its path), or ``None``."""
    segments = _hidden(original, redacted)
    if segments is None:
        return shape_of(original)
    for context, value, after in segments:
        kind = _kind(value, context, after, None)
        if kind is not None:
            return kind
    return None


def in_mapping(values: Any) -> list[tuple[str, str]]:
    """``(name, kind)`` for each entry of an env or headers object holding a plaintext
    credential: under a secret-sounding name, shaped like a token, or a URL with a password
    (``DATABASE_URL=postgres://u:pw@h/db``). Non-string values are not credentials."""
    if not isinstance(values, Mapping):
        return []
    from agbom.scan.redact import redact_url

    found: list[tuple[str, str]] = []
    for name, value in values.items():
        if not isinstance(name, str) or not isinstance(value, str):
            continue
        text = value.strip()
        if len(text) > MAX_ALIGN_CHARS:
            text = text[:MAX_ALIGN_CHARS]
        scheme = text.split(None, 1)
        if len(scheme) == 2 and scheme[0].casefold() in _SCHEME_WORDS:
            text = scheme[1]  # "Bearer X": the credential is X
        if not _plaintext(text):
            continue
        kind = shape_of(text)
        if kind is None and re.match(r"^[A-Za-z][A-Za-z0-9+.\-]*://", text):
            kind = in_url(text, redact_url(text)[0])
        if kind is None and is_secret_name(name) and len(text) >= MIN_CHARS:
            kind = "a credential"
        if kind is not None:
            found.append((name, kind))
    return found


def entries(places: Sequence[tuple[str, str]], path: str) -> list[dict[str, str]]:
    """The component field: one ``{field, kind, path}`` per place (never the value)."""
    return [{"field": field, "kind": kind, "path": path} for field, kind in places]
