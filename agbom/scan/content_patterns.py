"""The content checks written as regular expressions, and the two-step patterns built on
them: a download piped into a shell, decoded data executed, a file downloaded or decoded
then run a few lines later, a credential source sent to the network (on one line, through
a variable or file, or asked for in prose), instructions to drop earlier ones or to keep
the user in the dark; and the cue that such text is teaching, not doing (a warning just
before it, or a quoted example of an attack).

Every quantifier is bounded and each pattern runs only on a file that holds one of its
words (:meth:`agbom.scan.content_text.ContentText.needs`), so a hostile file costs a count,
not a quadratic match. The orchestration (which checks run, in which order, and what the
parse-based analyses add) is :mod:`agbom.scan.content`'s.
"""

from __future__ import annotations

import bisect
import re

from agbom.scan.content_text import ContentText
from agbom.scan.vendor_installers import is_vendor_installer

_FETCH = r"(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod)\b"
# Shells run what they read; interpreters only when given nothing else to run (``| python``,
# ``| python -``): ``| python -m json.tool`` and ``| python -c "..."`` process data.
_RUNNER = (
    r"(?:sudo\s+(?:-\S+\s+)*)?(?:"
    r"(?:ba|z|k|da|fi)?sh\b(?!\s*-n\b)"
    r"|(?:python[0-9.]*|node|perl|ruby|php)(?:\s+-)?\s*(?=$|[;&|)`'\"])"
    r"|pwsh\b|powershell\b|iex\b|invoke-expression\b)"
)
# Quantifiers inside a line are bounded: a hostile 1 MB line cannot make a match quadratic.
_L = r"[^|\n]{0,400}"
# Each check is a few patterns, each run only when the text holds one of its words (see
# ContentText.needs): a pattern that cannot start on a literal costs a pass over the whole text.
_DOWNLOAD_TO_SHELL: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    # curl URL | sh: something to fetch (a URL, a variable, host/path) must stand between,
    # so that prose such as "never run curl | sh" is not read as doing it.
    (  # the lookahead keeps the work per start linear (nested {0,400}s were quadratic)
        re.compile(rf"(?im)\b{_FETCH}(?={_L}?(?:://|\$|\w\.\w+/))[^|\n]{{0,800}}\|\s*{_RUNNER}"),
        ("curl", "wget", "fetch", "iwr", "irm", "invoke-"),
    ),
    (  # bash <(curl URL)
        re.compile(rf"(?im)(?:^|[\s;&(`'\"])(?:ba|z|k)?sh\s+(?:-\S+\s+)*<\(\s*{_FETCH}"),
        ("<(",),
    ),
    (  # sh -c "$(curl URL)"
        re.compile(
            rf"(?im)(?:^|[\s;&(`'\"])(?:ba|z|k)?sh\s+(?:-\S+\s+)*-c\s+[\"']?\$\(\s*{_FETCH}"
        ),
        ("$(",),
    ),
    (
        re.compile(
            rf"(?i)\b(?:iex|invoke-expression)\b\s*\(?\s*\(?\s*"
            rf"(?:{_FETCH}|\(?new-object\s+net\.webclient)"
        ),
        ("iex", "invoke-expression"),
    ),
)
_DECODE_AND_EXECUTE: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (
        re.compile(rf"(?im)\bbase64\s+(?:-d|--decode|-D)\b{_L}\|\s*(?:sudo\s+)?(?:ba|z|k|da)?sh\b"),
        ("base64",),
    ),
    (
        re.compile(
            rf"(?im)\b(?:xxd\s+-r|openssl\s+(?:enc\s+)?-?base64\s+-d){_L}\|\s*(?:ba|z|k|da)?sh\b"
        ),
        ("xxd", "openssl"),
    ),
    (
        re.compile(
            r"(?i)\b(?:exec|eval)\s*\(\s*(?:__import__\(\s*['\"]base64['\"]\s*\)\.|base64\."
            r"|codecs\.decode|bytes\.fromhex|zlib\.decompress|marshal\.loads)"
        ),
        ("exec", "eval"),
    ),
    (
        re.compile(
            r"(?i)\beval\s*\(\s*(?:atob\s*\(|Buffer\.from\s*\([^)\n]{0,400}['\"](?:base64|hex)['\"])"
            r"|\bnew\s+Function\s*\(\s*(?:atob\s*\(|Buffer\.from\s*\()"
        ),
        ("atob", "buffer.from"),
    ),
    (  # powershell -EncodedCommand
        re.compile(r"(?im)\s-(?:encodedcommand|enc|e)\s+[A-Za-z0-9+/]{40,}={0,2}(?:\s|$)"),
        ("-e",),
    ),
)
# A download saved to a file (``curl URL -o F``, ``wget -O F URL``, ``> F``) and decoded
# data written to one (``base64 -d > F``, ``open(F, "wb").write(base64...)``): group 1 or 2
# is the file. A later line that runs that file completes the two-step pattern.
_SAVED = re.compile(
    r"(?im)\b(?P<fetch>curl|wget|iwr|invoke-webrequest)\b[^\n]{0,400}?"
    r"(?:\s-(?-i:[A-Za-z]*o)\s*|\s--output(?:=|\s+)|\s-(?-i:[A-Za-z]*O)\s+(?!https?:)"
    r"|\s-outfile\s+|>\s*)"
    r"[\"']?(?P<saved>[\w./~$%{}-]+)"
    # curl -O URL, wget URL: saved under the URL's last path part
    r"|\b(?P<remote>curl\b[^\n]{0,400}?\s-(?-i:[A-Za-z]*O)\b|wget\b)[^\n]{0,400}?"
    r"\s[\"']?https?://[^\s\"'?#]*/(?P<named>[\w.-]+)"
    r"|\b(?P<decode>base64\s+(?:-d|--decode|-D)|xxd\s+-r|openssl\s+(?:enc\s+)?-?base64\s+-d)"
    r"[^\n|]{0,400}?(?:>\s*|\s-o\s+|\s-out\s+)[\"']?(?P<decoded>[\w./~$%{}-]+)"
    r"|\bopen\s*\(\s*['\"](?P<pyfile>[^'\"\n]{1,200})['\"]\s*,\s*['\"]wb?['\"]\s*\)\s*\.write\s*\(\s*"
    r"(?P<pydecode>base64\.|codecs\.decode|bytes\.fromhex|zlib\.decompress)"
)
# A checksum checked against a digest written in the text (``echo "DIGEST  F" | sha256sum
# -c``): the file run after it is the one its author saw.
_CHECKSUM = re.compile(
    r"(?i)\b(?:sha(?:1|224|256|384|512)sum|shasum|b2sum)\b[^\n]{0,200}?(?:\s-[a-z]*c\b|\s--check\b)"
)
_RUN_AFTER = 6  # lines after the save in which running the file counts
_RUN_AFTER_CHARS = 8192  # ... and at most this far (one long line is not six lines)
_SAVED_STARTS = ("curl", "wget", "iwr", "invoke-webrequest", "base64", "xxd", "openssl", "open(")
# Credential files and whole-environment dumps (a single token in an auth header is the
# normal use of a token, and not flagged; a token as the request body is).
_SECRET_SOURCE = re.compile(
    r"(?im)\.ssh/(?:id_[a-z0-9]+(?!\.pub\b)|authorized_keys)\b"
    r"|\.aws/credentials\b|\.netrc\b|\.git-credentials\b|\.pypirc\b|\.docker/config\.json"
    r"|\.kube/config\b|/etc/shadow\b|(?:^|[\s'\"=/@<])\.env(?:\.local|\.production)?(?![\w.])"
    r"|\bprintenv\b|(?:^|[\s;&(|])env\s*(?:\||>)|\bos\.environ\b(?!\s*(?:\[|\.get\b|\.setdefault\b))"
    r"|\bprocess\.env\b(?!\s*[.\[])"
    r"|(?:\s-d|\s--data[\w-]*|\s-F\s*\w+=)\s*[\"']?\$\{?[A-Z0-9_]*(?:TOKEN|SECRET|KEY|PASSWORD)\b"
)
_SEND = re.compile(
    r"(?i)\bcurl\b[^\n]{0,400}(?:\s-d\b|\s--data(?:-binary|-raw|-urlencode)?\b|\s-F\b|\s--form\b"
    r"|\s-T\b|\s--upload-file\b|\s-X\s*(?:POST|PUT)\b)"
    r"|\bwget\b[^\n]{0,400}--post-(?:file|data)\b"
    r"|\b(?:requests|httpx|session|client)\.(?:post|put)\s*\("
    r"|\bfetch\s*\([^)\n]{0,400}method\s*:\s*['\"](?:POST|PUT)"
    r"|\b(?:nc|ncat|netcat)\s+(?:-\S+\s+)*[a-z0-9.-]+\s+\d{2,5}\b"
    r"|\bscp\s+[^\n]{0,400}\s[\w.-]+@[\w.-]+:"
    r"|>\s*/dev/tcp/"
    # Python's standard library: urlopen(url, data), Request(url, data=...), http.client
    r"|\burlopen\s*\([^)\n]{0,400}(?:,\s*|data\s*=)\s*[\w(]"
    r"|\bRequest\s*\([^)\n]{0,400}\bdata\s*="
    r"|\.request\s*\(\s*['\"](?:POST|PUT)['\"]"
)
# Plain prose: "send / upload / post the file to https://... / to name@host / to x.tld".
_PROSE_SEND = re.compile(
    r"(?i)\b(?:send|upload|post|transmit|forward|exfiltrate|e-?mail|paste|submit)(?:s|ing)?\b"
    r"(?:[^.\n]|\n(?!\n)){0,160}?\b(?:to|into)\s+(?:https?://|[\w.+-]+@[\w-]+\."
    r"|the\s+(?:server|endpoint|webhook)\b|[\w-]+\.(?:com|net|org|io|dev|app|xyz|site|ru|cn|sh)\b)"
)
_ASSIGNED = re.compile(r"(?:export\s+|local\s+|const\s+|let\s+|var\s+)?([A-Za-z_]\w{0,63})\s*=")
_INSTRUCTION_OVERRIDE = re.compile(
    r"(?i)\b(?:ignore|disregard|forget|override|bypass)\s+"
    r"(?:all\s+|any\s+|the\s+|your\s+|every\s+|of\s+)*"
    r"(?:previous|prior|earlier|above|preceding|original|system|developer|safety)\s+"
    r"(?:instructions?|prompts?|rules|directions|guidelines|messages?|constraints)"
    r"|\byou\s+are\s+no\s+longer\s+(?:bound|restricted)"
    r"|\bnew\s+system\s+prompt\s*:"
)
_WHO = (
    r"(?:the\s+|your\s+|this\s+|that\s+)?"
    r"(?:user|human|operator|owner|person|people|requester)s?\b(?!['’]s)"
)
_KEPT_BACK = (
    r"(?:this|that|it|these|them|anything|any\s+of\s+(?:this|these|it)"
    r"|what\s+you(?:['’]ve|\s+have|\s+are)?\s+\w+"
    r"|(?:the|these|this|those|your)\s+(?:instructions?|steps?|actions?|changes?|commands?"
    r"|files?|uploads?|requests?|skill|task|scripts?))"
)
_HIDE_FROM_USER = re.compile(
    rf"(?i)\b(?:do\s+not|don'?t|never|without)\s+(?:tell|inform|notify|alert)(?:ing)?\s+{_WHO}"
    # "do not tell the user to ...", "... how to": advice; "of / for every retry": noise control
    r"(?!\s+(?:to|how|what|which|name|id|(?:of|about|for)\s+(?:every|each|all))\b)"
    rf"|\b(?:do\s+not|don'?t|never|without)\s+let(?:ting)?\s+{_WHO}\s+know\b"
    # "never mention this to the person": what is kept back, then who from
    rf"|\b(?:do\s+not|don'?t|never|without)\s+(?:mention|reveal|disclose|report|admit)(?:ing)?"
    rf"\s+{_KEPT_BACK}\s+(?:to|with)\s+{_WHO}"
    rf"|\b(?:hide|conceal)\s+(?:[\w-]+\s+){{0,4}}from\s+{_WHO}"
    rf"|\bkeep\s+(?:this|it|them)\s+(?:secret|hidden)\s+from\s+{_WHO}"
    r"|\b(?:the\s+)?user\s+(?:must|should)\s+(?:not|never)\s+(?:know|notice|find\s+out)\b"
)
# Teaching text: a warning just before the match ("never run curl URL | sh", "do not send
# .env to x.com"), or a quoted phrase introduced as an example of an attack ("attackers may
# write 'ignore previous instructions'"). Both only when they stand in the same sentence.
_WARNED = re.compile(
    r"(?i)\b(?:never|don'?t|do\s+not|avoid|must\s+not|should\s+not)(?:\s+(?:run|running|pipe"
    r"|piping|use|using|execute|type|paste|copy|follow|call|invoke|try))?\s*[`'\"“‘(]*\s*$"
)  # the warning stands right before the match: "never mind, ignore ..." is not one
_EXAMPLE_CUE = re.compile(
    r"(?i)\b(?:attackers?|malicious|injections?|phrases?|such\s+as|like|e\.g\.|for\s+example"
    r"|watch\s+for|beware|look\s+for|detect|flag|refuse|strings?|may\s+(?:write|say|contain))\b"
)
_QUOTES = "\"'`“”‘’«»"
# Literal words each pattern needs, looked for in the lower-cased text first (``in`` on a
# str is a fast C search): a file holding none of a pattern's words is not matched against it.
_NEEDS: dict[str, tuple[str, ...]] = {
    "saved": ("curl", "wget", "iwr", "invoke-webrequest", "base64", "xxd", "open"),
    "secret": ("env", "$", ".ssh", ".aws", ".netrc", ".git-cred", ".pypirc", ".docker", ".kube",
               "shadow"),
    "instruction-override": ("ignore", "disregard", "forget", "override", "bypass", "longer",
                             "system"),
    "hide-from-user": ("user", "human", "operator", "owner", "person", "people", "requester"),
    "send": ("curl", "wget", "post", "put", "request", "session", "client", "fetch", "nc",
             "scp", "/dev/tcp", "urlopen", "send", "upload", "transmit", "forward", "exfiltrate",
             "mail", "paste", "submit"),
}  # fmt: skip
_PROSE_CHECKS = frozenset({"instruction-override", "hide-from-user"})  # read on ProseView
_PHRASES: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    *(("download-to-shell", pattern, words) for pattern, words in _DOWNLOAD_TO_SHELL),
    *(("decode-and-execute", pattern, words) for pattern, words in _DECODE_AND_EXECUTE),
    ("instruction-override", _INSTRUCTION_OVERRIDE, _NEEDS["instruction-override"]),
    ("hide-from-user", _HIDE_FROM_USER, _NEEDS["hide-from-user"]),
)


def pattern_findings(doc: ContentText, lines_of: dict[str, set[int]]) -> None:
    """The phrase patterns (one finding per check and line, recorded in ``lines_of``), then
    the two-step patterns, over ``doc``."""
    norm = doc.norm
    for check, pattern, words in _PHRASES:
        if not doc.needs(words, prose=check in _PROSE_CHECKS) or doc.dense(check, words):
            continue
        seen = lines_of.setdefault(check, set())
        prose = doc.prose if check in _PROSE_CHECKS else None
        text = norm if prose is None else prose.text
        for match in pattern.finditer(text):
            start = match.start()
            while text[start] in " \t\n" and start < match.end() - 1:
                start += 1  # a pattern's leading separator is not part of what it found
            end = match.end()
            while end > start + 1 and text[end - 1] in " \t\n":
                end -= 1  # nor its trailing one
            if prose is not None:
                start, end = prose.origin(start), prose.origin(end, end=True)
            line = doc.line_bounds(start)[0]
            if line in seen:
                continue
            seen.add(line)
            name = check
            if check == "download-to-shell" and is_vendor_installer(match.group()):
                name = "vendor-installer"
            if teaching(text, match):
                doc.add("cited-attack", start, end, detail=f"{name}, quoted or warned against")
                continue
            doc.add(name, start, end)
    if doc.needs(_NEEDS["saved"]) and not doc.dense("download-to-shell", _SAVED_STARTS):
        _saved_then_run(doc)
    if (
        doc.needs(_NEEDS["secret"])
        and doc.needs(_NEEDS["send"])
        and not doc.dense("secret-exfiltration", _NEEDS["secret"])
    ):
        _exfiltration(doc)


def teaching(norm: str, match: re.Match[str]) -> bool:
    """The match is warned against, or quoted as an example, in its sentence."""
    before = norm[max(0, match.start() - 120) : match.start()]
    if _WARNED.search(before[-40:]) is not None:
        return True
    opening = before.rstrip()[-1:] if before.rstrip() else ""
    closing = norm[match.end() : match.end() + 3].lstrip()[:1]
    if opening and opening in _QUOTES and closing and closing in _QUOTES + ".,;:":
        sentence = re.split(r"[.!?\n]\s", before)[-1]
        return _EXAMPLE_CUE.search(sentence) is not None
    return False


def _saved_then_run(doc: ContentText) -> None:
    """``curl URL -o F`` (also ``-fsSLo F``, ``curl -O URL``, ``wget URL``) or decoded data
    written to F, then F run within a few lines: ``sh F``, ``bash F``, ``chmod +x F && ./F``,
    ``source F``, ``subprocess.run([F])``; not when a checksum written in the text is checked
    for F in between."""
    norm = doc.norm
    for saved in _SAVED.finditer(norm):
        downloaded = saved.group("saved") or saved.group("named")
        name = downloaded or saved.group("decoded") or saved.group("pyfile")
        if not name or name.startswith("-") or name in {"/dev/null", "-"}:
            continue
        base = name.rsplit("/", 1)[-1]
        if not base or base in {".", ".."}:
            continue
        stop = _lines_after(norm, saved.end())
        ref = rf"(?:[\w./~$%{{}}-]*/)?{re.escape(base)}(?![\w.-])"
        runs = re.compile(
            rf"(?im)(?:^|[\s;&|(`'\"])(?:sudo\s+)?(?:(?:ba|z|k|da)?sh|source|python[0-9.]*"
            rf"|node|perl|ruby|pwsh|powershell)\s+(?:-\S+\s+)*[\"']?{ref}"
            rf"|(?:^|[;&|(`]|&&|\bthen)\s*\.\s+[\"']?{ref}"  # ". F" where a command starts
            rf"|(?:^|[;&|(`]|&&|\bthen)\s*(?:sudo\s+)?[\"']?(?:\./|/|~/|\$\w+/)\S*?{ref}"
            rf"|\b(?:subprocess\.\w+|os\.system|os\.popen|os\.exec\w*|Popen)\s*\([^\n]{{0,200}}?{ref}"
        )
        run = runs.search(norm, saved.end(), stop)
        if run is None or (downloaded and _pinned(norm[saved.end() : run.start()], base)):
            continue
        check = "download-to-shell" if downloaded else "decode-and-execute"
        if check == "download-to-shell":
            if is_vendor_installer(saved.group()):
                check = "vendor-installer"
            elif teaching(norm, saved):
                check = "cited-attack"
        doc.add(check, saved.start(), saved.end(), text=_two(doc, saved.start(), run.end()))


def _pinned(between: str, base: str) -> bool:
    """A checksum tool checks ``base`` against a digest written out, in ``between``."""
    if _CHECKSUM.search(between) is None:
        return False
    digest = rf"(?i)\b[0-9a-f]{{40,128}}\b[ \t*]+(?:[\w./~$-]*/)?{re.escape(base)}(?![\w.-])"
    return re.search(digest, between) is not None


def _two(doc: ContentText, start: int, end: int) -> str:
    """The two parts of a two-step pattern as one line of text."""
    lo, _ = doc.line_bounds(start)
    _, hi = doc.line_bounds(max(start, end - 1))
    original = doc.original[doc.folded.origin(lo) : doc.folded.origin(hi, end=True)]
    return " ⏎ ".join(part.strip() for part in original.splitlines() if part.strip())


def _exfiltration(doc: ContentText) -> None:
    """A credential source and a send on one (logical) line; a source assigned to a
    variable or written to a file that a send within a few lines uses; or prose asking to
    send a credential source to an address, within its sentence. The sends and the prose
    requests are found once per file, each source then looks them up by offset."""
    norm = doc.norm
    sends = [m.start() for m in _SEND.finditer(norm)]
    prose = [m.span() for m in _PROSE_SEND.finditer(norm)]
    prose_starts = [start for start, _ in prose]
    if not sends and not prose:
        return
    covered = -1  # the end of the last finding: one finding per line
    for source in _SECRET_SOURCE.finditer(norm):
        if source.start() <= covered:
            continue
        lo, hi = doc.line_bounds(source.start())
        found: tuple[int, int] | None = None
        index = bisect.bisect_left(sends, lo)
        if index < len(sends) and sends[index] < hi:
            found = (lo, hi)
        if found is None and index < len(sends):
            found = _sent_later(doc, source, lo, hi, sends[index:])
        if found is None and prose:
            # prose wraps: the request may stand on the line before or after the source
            near = bisect.bisect_left(prose_starts, source.start() - 360)
            for start, end in prose[near : near + 8]:
                if start - 200 <= source.start() <= end + 200:
                    match = _PROSE_SEND.match(norm, start)
                    if match is not None and not teaching(norm, match):
                        found = (min(start, source.start()), max(end, source.end()))
                        break
        if found is None:
            continue
        covered = doc.line_bounds(max(found[0], found[1] - 1))[1]
        begin = found[0]
        while begin < found[1] - 1 and norm[begin] in " \t":
            begin += 1  # the line's indentation is not part of what was found
        doc.add("secret-exfiltration", begin, found[1], text=_two(doc, found[0], found[1]))


_KEY_OPTION = re.compile(r"\s-i\s*[\"']?\$\{?$")


def _lines_after(norm: str, pos: int) -> int:
    """Where the :data:`_RUN_AFTER`-th line after ``pos`` ends (the text's end if sooner),
    at most :data:`_RUN_AFTER_CHARS` after ``pos``."""
    stop = pos
    limit = min(len(norm), pos + _RUN_AFTER_CHARS)
    for _ in range(_RUN_AFTER):
        nxt = norm.find("\n", stop + 1, limit)
        if nxt < 0:
            return limit
        stop = nxt
    return stop


def _sent_later(
    doc: ContentText, source: re.Match[str], lo: int, hi: int, sends: list[int]
) -> tuple[int, int] | None:
    """A send within a few lines that uses what the source's line assigned or wrote
    (``sends``: the offsets of the sends after the line, in order)."""
    norm = doc.norm
    stop = _lines_after(norm, hi)
    if sends[0] >= stop:
        return None
    names: list[str] = []
    assigned = _ASSIGNED.match(norm[lo:hi].lstrip())
    if assigned is not None:
        names.append(assigned.group(1))
    written = re.search(r">\s*[\"']?([\w./~$-]+)", norm[source.end() : hi])
    if written is not None:
        names.append(written.group(1).rsplit("/", 1)[-1])
    names = [n for n in names if n]
    if not names:
        return None
    uses = re.compile("|".join(rf"(?<![\w]){re.escape(n)}(?![\w])" for n in names))
    for send in sends:
        if send >= stop:
            break
        s_lo, s_hi = doc.line_bounds(send)
        for use in uses.finditer(norm, s_lo, s_hi):
            if not _KEY_OPTION.search(norm, max(s_lo, use.start() - 8), use.start()):
                return lo, s_hi  # (a key given to ssh -i logs in with it, and sends nothing)
    return None
