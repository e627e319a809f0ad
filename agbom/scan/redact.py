"""Keep secrets on the machine: one tokenizer-level redaction pass over command lines and URLs.

Env and header *values* are never read into a component at all (only their names are kept);
this module handles the places where a secret hides inside something that is kept: the
command, its arguments and endpoint URLs. A redacted value is replaced by ``<redacted>`` and
its location is listed in the component's ``redacted`` field, so the report says a secret is
present.

The pass is the same for every argument and every part of it. An argument holding whitespace
(``sh -c "curl -H 'Authorization: Bearer X' …"``, a whole command line in ``command``) is
split shell-style into tokens, and the tokens are redacted as if they were arguments of their
own, recursively. Each token then goes through the same rules, in this order:

- a scheme word (``Bearer``, ``Basic``, ``Token``) hides the token after it;
- a URL loses its userinfo password, every query value and its fragment;
- a value shaped like a well-known token (``ghp_…``, ``sk-…``, ``AKIA…``) is hidden, and so
  is the password of ``user:password@host`` without a scheme;
- a ``NAME=VALUE`` or ``NAME:VALUE`` pair, with an optional ``-``, ``--`` or ``/`` flag
  prefix: a secret-sounding name hides the value (an empty value hides the next token, as in
  ``token: X``), ``-e/--env`` hides the value of the ``KEY=VALUE`` it carries, and any other
  value goes through these rules again (``DATABASE_URL=postgres://u:pw@h/db``,
  ``--header=X-Api-Key: X``);
- a secret-sounding flag (``--token``, ``--api-key``, ``-k``) hides the token after it, and
  ``-e/--env`` hides the value of the ``KEY=VALUE`` after it;
- anywhere inside what is left, ``secret-name=value`` / ``"secret-name": "value"`` pairs and
  token-shaped substrings are hidden (JSON or comma lists in one argument).

Redaction fails closed: text nested deeper than :data:`MAX_DEPTH`, and an argument longer
than :data:`MAX_ARG_CHARS`, is hidden whole.
"""

from __future__ import annotations

import re
import shlex
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "<redacted>"
MAX_DEPTH = 12
# An argument longer than this is hidden whole: no command line needs one, and it bounds the
# word-by-word work a hostile config can ask for.
MAX_ARG_CHARS = 64 * 1024

# A flag or variable name that announces a secret value.
_SECRET_NAME = re.compile(
    r"(?i)(token|secret|passw(or)?d|passwd|pwd|api[-_]?key|apikey|access[-_]?key|private[-_]?key"
    r"|credential|auth|bearer|cookie|session|signature|client[-_]?secret|^key$|[-_]key$)"
)
# Short flags that take a key by convention (``-k KEY``); spelled out so ``-p``/``-t`` are not.
_SECRET_SHORT_FLAGS = frozenset({"-k"})
# Well-known token shapes: secrets whatever name or flag comes before them.
_TOKEN_SHAPES = (
    r"gh[pousr]_[A-Za-z0-9]{20,}",
    r"github_pat_[A-Za-z0-9_]{20,}",
    r"glpat-[A-Za-z0-9_\-]{16,}",
    r"sk-[A-Za-z0-9_\-]{16,}",
    r"sk_(?:live|test)_[A-Za-z0-9]{16,}",
    r"xox[abposr]-[A-Za-z0-9\-]{10,}",
    r"AKIA[0-9A-Z]{16}",
    r"ASIA[0-9A-Z]{16}",
    r"AIza[0-9A-Za-z_\-]{30,}",
    r"npm_[A-Za-z0-9]{30,}",
    r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
)
_SECRET_VALUE = re.compile("^(?:" + "|".join(_TOKEN_SHAPES) + ")$")
_SECRET_INSIDE = re.compile("(?<![A-Za-z0-9])(?:" + "|".join(_TOKEN_SHAPES) + ")")
# Words that announce that the next word is a credential (``Authorization: Bearer X``).
_SCHEME_WORDS = frozenset({"bearer", "basic", "token", "digest", "negotiate"})
# Docker/podman flags whose value is KEY=VALUE environment (an env value is never kept).
_ENV_FLAG_NAMES = frozenset({"e", "env"})

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")
_PAIR = re.compile(
    r"^(?P<prefix>--?|/)?(?P<name>[A-Za-z_][\w.\-]*)(?P<sep>[=:])(?P<value>.*)$", re.S
)
# The same pair over text holding whitespace: the value runs to the end of the text.
_TEXT_PAIR = re.compile(
    r"^(?P<prefix>--?|/)?(?P<name>[A-Za-z_][\w.\-]*)(?P<sep>[ \t]*[=:][ \t]*)(?P<value>.*)$", re.S
)
# ``Bearer X`` at the start of a secret value: the scheme is kept, the credential is not.
_SCHEME_PREFIX = re.compile(r"^(?P<scheme>[A-Za-z]+)(?P<space>\s+)\S", re.S)
_BARE_FLAG = re.compile(r"^(?P<prefix>--?)(?P<name>[A-Za-z][\w.\-]*)$")
_ASSIGNMENT = re.compile(r"^(?P<name>[A-Za-z_][\w.\-]*)=(?P<value>.*)$", re.S)
# A name/value pair inside a longer word: ``a=1,password=x``, ``{"apiKey":"x"}``.
# A name starts only where a word does, and is taken whole (possessive): the search stays
# linear in the word's length instead of retrying every suffix of a long name.
_INLINE_PAIR = re.compile(
    r"(?<![\w.\-])(?P<name>[A-Za-z_][\w.\-]*+)"
    r"(?P<sep>[\"']?\s*+[=:]\s*+[\"']?)(?P<value>[^\s\"',;&}\])]++)"
)
# ``user:password@host`` without a scheme (proxies, git remotes, DSNs).
_USERINFO = re.compile(r"^(?P<user>[^\s:/@=]+):(?P<password>[^\s/@]+)@(?P<host>[^\s@]+)$")
# A short plain word (no flag dash, separator, quote or scheme): nothing in it can be a secret.
_PLAIN_WORD = re.compile(r"^[A-Za-z0-9_./@+,]{1,15}$")
_QUOTES = "'\""
# Characters a re-joined token may keep unquoted (shlex's safe set plus the redaction marker).
_SHELL_SAFE = re.compile(r"^[\w@%+=:,./<>\-]+$")

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# What the token after the current one is: a secret, or an env assignment whose value is.
_HIDE_SECRET = "secret"
_HIDE_ENV = "env"


def is_secret_name(name: str) -> bool:
    """Whether a flag, variable or header name suggests its value is a secret."""
    return bool(_SECRET_NAME.search(name.lstrip("-/")))


def looks_like_secret(value: str) -> bool:
    """Whether a bare value has the shape of a well-known token."""
    return bool(_SECRET_VALUE.match(value))


def _hide_token_shapes(text: str) -> str:
    return _SECRET_INSIDE.sub(REDACTED, text)


_URL_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^\s/@:]*):[^\s/@]+@")


def redact_free_text(text: str) -> str:
    """``text`` (any free text: a tool name, an id) with token-shaped values and the password
    of every ``scheme://user:password@`` URL in it replaced by the redaction marker."""
    return _hide_token_shapes(_URL_USERINFO.sub(lambda m: f"{m.group('head')}:{REDACTED}@", text))


def redact_url(url: str) -> tuple[str, bool]:
    """Drop userinfo passwords, every query value and the fragment; return ``(url, changed)``.

    All query values go, not only ones with secret-sounding names: API keys travel under
    arbitrary names (``?k=``, ``?code=``) and a report gains nothing from the value. A
    token-shaped path segment is hidden too.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return REDACTED, True
    changed = False
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:{REDACTED}@{host}" if ":" in userinfo else f"{REDACTED}@{host}"
        changed = True
    path = _hide_token_shapes(parts.path)
    changed = changed or path != parts.path
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, REDACTED) for k, _ in pairs], safe="<>")
        changed = True
    if parts.fragment:
        changed = True
    if not changed:
        return url, False
    return urlunsplit((parts.scheme, netloc, path, query, "")), True


def _redact_inline(text: str) -> str:
    def hide(match: re.Match[str]) -> str:
        if is_secret_name(match.group("name")) and match.group("value") != REDACTED:
            return f"{match.group('name')}{match.group('sep')}{REDACTED}"
        return match.group(0)

    return _hide_token_shapes(_INLINE_PAIR.sub(hide, text))


def _redact_pair(match: re.Match[str], depth: int) -> tuple[str, str | None]:
    prefix = match.group("prefix") or ""
    name, sep, value = match.group("name"), match.group("sep"), match.group("value")
    head = f"{prefix}{name}{sep}"
    if prefix and name.lower() in _ENV_FLAG_NAMES:
        if not value:
            return head, _HIDE_ENV
        assignment = _ASSIGNMENT.match(value)
        if assignment:
            return f"{head}{assignment.group('name')}={REDACTED}", None
        return f"{head}{_redact_word(value, depth + 1)[0]}", None
    if is_secret_name(name) or f"{prefix}{name}" in _SECRET_SHORT_FLAGS:
        if not value:
            return head, _HIDE_SECRET
        if value.lower() in _SCHEME_WORDS:
            return head + value, _HIDE_SECRET
        return head + REDACTED, None
    new_value, hide = _redact_word(value, depth + 1)
    return head + new_value, hide


def _redact_word(word: str, depth: int) -> tuple[str, str | None]:
    """One token without whitespace: its redacted form, and what the next token is."""
    if depth > MAX_DEPTH:
        return REDACTED, None
    if _PLAIN_WORD.match(word) and word.lower() not in _SCHEME_WORDS:
        return word, None
    core = word.strip(_QUOTES)
    if not core:
        return word, None
    start = word.index(core[0])
    lead, trail = word[:start], word[start + len(core) :]
    hide: str | None = None
    if core.lower() in _SCHEME_WORDS:
        return word, _HIDE_SECRET
    if _URL.match(core):
        new = redact_url(core)[0]
    elif looks_like_secret(core):
        new = REDACTED
    elif userinfo := _USERINFO.match(core):
        new = f"{userinfo.group('user')}:{REDACTED}@{userinfo.group('host')}"
    elif pair := _PAIR.match(core):
        new, hide = _redact_pair(pair, depth)
        new = _redact_inline(new) if hide is None and new == core else new
    else:
        flag = _BARE_FLAG.match(core)
        if flag and flag.group("name").lower() in _ENV_FLAG_NAMES:
            hide = _HIDE_ENV
        elif flag and (is_secret_name(flag.group("name")) or core in _SECRET_SHORT_FLAGS):
            hide = _HIDE_SECRET
        new = _redact_inline(core)
    return lead + new + trail, hide


def _split(text: str) -> list[str]:
    """Shell-style words; unbalanced quotes fall back to whitespace (quotes kept, peeled later)."""
    if not any(c in text for c in "'\"\\"):
        return text.split()  # what shlex would give, without its per-character loop
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _join(words: list[str]) -> str:
    return " ".join(w if _SHELL_SAFE.match(w) else shlex.quote(w) for w in words)


def _redact_text(text: str, depth: int) -> tuple[str, str | None]:
    """Text holding whitespace: split it into words and redact them as arguments."""
    if depth > MAX_DEPTH:
        return REDACTED, None
    pair = None if _URL.match(text) else _TEXT_PAIR.match(text)
    if pair is not None:
        head = pair.group("prefix") or ""
        head += pair.group("name") + pair.group("sep")
        if is_secret_name(pair.group("name")):
            # "token: X", "Authorization: Bearer X", "--password=two words": all of the rest.
            scheme = _SCHEME_PREFIX.match(pair.group("value"))
            if scheme and scheme.group("scheme").lower() in _SCHEME_WORDS:
                head += scheme.group("scheme") + scheme.group("space")
            return head + REDACTED, None
        if pair.group("prefix") and any(c.isspace() for c in pair.group("value")):
            # "--header=X-Api-Key: X": the flag's value is text of its own.
            new_value, hide = _redact_text(pair.group("value"), depth + 1)
            return head + new_value, hide
    words = _split(text)
    new_words, hide = _redact_words(words, depth + 1)
    if new_words == words:
        return text, hide  # nothing hidden: keep the text exactly as written
    return _join(new_words), hide


def _redact_words(
    words: list[str], depth: int, hide: str | None = None
) -> tuple[list[str], str | None]:
    out: list[str] = []
    for word in words:
        bare = word.strip(_QUOTES)
        if hide == _HIDE_SECRET:
            if bare.lower() in _SCHEME_WORDS:
                out.append(word)  # "Authorization:" "Bearer" "X": the credential is still next
                continue
            if not (bare.startswith("-") and len(bare) > 1):
                out.append(REDACTED)
                hide = None
                continue
        elif hide == _HIDE_ENV:
            assignment = _ASSIGNMENT.match(bare)
            if assignment:
                out.append(f"{assignment.group('name')}={REDACTED}")
                hide = None
                continue
            if _ENV_NAME.match(bare):
                # "-e TOKEN": the variable is passed through from the environment. Its name is
                # no secret and no scheme word: the word after it (an image) stays.
                out.append(word)
                hide = None
                continue
        if any(c.isspace() for c in word):
            new, hide = _redact_text(word, depth)
        else:
            new, hide = _redact_word(word, depth)
        out.append(new)
    return out, hide


def redact_args(args: list[str]) -> tuple[list[str], list[int]]:
    """Redact secrets in an argument vector; return the new vector and the redacted indexes.

    The vector keeps its length: a word is replaced, never split into several. Pass the
    command too (``[command, *args]``) so a secret in a whole command line is caught and a
    secret-named flag at its end hides the first argument.
    """
    out: list[str] = []
    redacted: list[int] = []
    hide: str | None = None
    for index, arg in enumerate(args):
        if len(arg) > MAX_ARG_CHARS:
            new, hide = REDACTED, None
        else:
            (new,), hide = _redact_words([arg], 0, hide)
        out.append(new)
        if new != arg:
            redacted.append(index)
    return out, redacted
