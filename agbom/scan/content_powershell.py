"""PowerShell and Windows batch by patterns (no parser is used for them): the same attack
classes as the parsed languages, in Windows' words. A pattern is case-insensitive, bounded
(no nested unbounded repetition) and, where two steps make the behaviour (a credential read,
then an upload), both must stand in the same text.

Base64 handed to ``-EncodedCommand`` or to ``[Convert]::FromBase64String`` is decoded
(UTF-16LE or UTF-8) and the decoded text read again, as PowerShell, up to two levels deep.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from agbom.analysis import indicators

MAX_DEPTH = 2
_UPLOAD = re.compile(
    r"(?i)\b(?:Invoke-RestMethod|Invoke-WebRequest|irm|iwr|curl\.exe|wget)\b[^\n]{0,400}?"
    r"-(?:Method\s+['\"]?(?:Post|Put)|Body|InFile|Form)\b"
    r"|\.Upload(?:String|File|Data|Values)\s*\(|\bSend-MailMessage\b"
)
_CREDENTIAL_READ = re.compile(
    r"(?i)\b(?:Get-Content|gc|cat|type|Copy-Item|cp|Compress-Archive|\[IO\.File\]::Read\w*)\b"
    r"[^\n|;]{0,200}?(?:\.aws[\\/]credentials|\.ssh[\\/]id_\w+|\.git-credentials|\.netrc"
    r"|Login Data|Cookies|Local State|\.kube[\\/]config|\.docker[\\/]config\.json"
    r"|\\\.env\b|\.npmrc|\.pypirc|wallet\.dat|key4\.db|logins\.json)"
)
_SECRET_ENV = re.compile(r"(?i)\$env:\w*(?:TOKEN|SECRET|PASSWORD|API_?KEY|ACCESS_KEY)\b")
_PATTERNS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (
        "download-to-shell",
        re.compile(
            r"(?i)\b(?:iex|Invoke-Expression)\b[\s(]{0,6}(?:\(\s*)?(?:New-Object\s+(?:System\.)?Net\."
            r"WebClient\)?\s*\.\s*Download(?:String|Data)|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)"
            r"|\b(?:iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\b[^\n|]{0,300}\|\s*(?:iex|"
            r"Invoke-Expression)\b"
            r"|\bDownloadString\s*\([^)\n]{0,300}\)\s*\|\s*(?:iex|Invoke-Expression)\b"
        ),
        "runs what a URL serves",
    ),
    (
        "reverse-shell",
        re.compile(
            r"(?i)Net\.Sockets\.TCPClient\s*\(|Net\.Sockets\.TcpListener\s*\(|powercat\b"
            r"|Invoke-PowerShellTcp\b"
        ),
        "a TCP client or listener (with commands run on what it reads)",
    ),
    (
        "persistence",
        re.compile(
            r"(?i)\\(?:Software\\Microsoft\\Windows\\CurrentVersion\\(?:Run|RunOnce)|Microsoft\\"
            r"Windows NT\\CurrentVersion\\Winlogon)\b|\bschtasks(?:\.exe)?\s+/create\b"
            r"|\bRegister-ScheduledTask\b|\bNew-ScheduledTaskTrigger\b"
            r"|Start Menu\\Programs\\Startup"
            r"|\bNew-Service\b|\bsc(?:\.exe)?\s+create\b"
        ),
        "makes code run again at logon or on a schedule",
    ),
    (
        "privilege-escalation",
        re.compile(
            r"(?i)\bAdd-LocalGroupMember\b[^\n]{0,80}Administrators|\bnet\s+localgroup\s+"
            r"administrators\b[^\n]{0,80}/add\b|\bEnableLUA\b[^\n]{0,80}\b0\b"
            r"|ConsentPromptBehaviorAdmin[^\n]{0,80}\b0\b|\bSeDebugPrivilege\b"
        ),
        "grants administrator rights or switches off UAC",
    ),
    (
        "file-tampering",
        re.compile(
            r"(?i)\bRemove-Item\b[^\n]{0,200}(?:\$env:(?:USERPROFILE|HOMEPATH|HOME)|\$HOME|~)"
            r"[\\/]?(?:Documents|Desktop|Pictures|Downloads|OneDrive|\*|['\"]?\s)[^\n]{0,80}-Recurse"
            r"|\bRemove-Item\b[^\n]{0,120}-Recurse[^\n]{0,120}(?:\$env:(?:USERPROFILE|HOME)|\$HOME|C:"
            r"\\\*?['\"]?\s)(?:[\\/](?:Documents|Desktop|Pictures|Downloads|\*))?"
            r"|\bClear-EventLog\b|\bwevtutil(?:\.exe)?\s+cl\b|\bvssadmin(?:\.exe)?\s+delete\s+shadows"
            r"|\bcipher(?:\.exe)?\s+/w\b|Set-MpPreference\b[^\n]{0,80}-Disable\w+\s+\$?true"
            r"|\bFormat-Volume\b|\bAdd-MpPreference\s+-ExclusionPath\b"
            r"|\\drivers\\etc\\hosts\b[^\n]{0,40}|Add-Content[^\n]{0,120}\\drivers\\etc\\hosts"
        ),
        "deletes the user's files, wipes logs or switches off protection",
    ),
    (
        "credential-access",
        re.compile(
            r"(?i)\bcmdkey\s+/list\b|PasswordVault\b|\bGet-StoredCredential\b|\bmimikatz\b"
            r"|sekurlsa::|\bCredEnumerate\b|\bProtectedData\]::Unprotect\b"
        ),
        "reads Windows' stored credentials",
    ),
)
_ENCODED = re.compile(r"(?i)\s-(?:e|ec|enc|encodedcommand)\s+['\"]?([A-Za-z0-9+/]{16,}={0,2})")
_FROM_BASE64 = re.compile(
    r"(?i)FromBase64String\s*\(\s*(?:['\"]([A-Za-z0-9+/]{16,}={0,2})['\"]|\$(\w+))"
)
_ASSIGNED = re.compile(r"(?im)^\s*\$(\w+)\s*=\s*['\"]([A-Za-z0-9+/]{16,}={0,2})['\"]")
_EXECUTES = re.compile(r"(?i)\b(?:iex|Invoke-Expression)\b|\[scriptblock\]::Create|&\s*\(")
_SAVED_RUN = re.compile(
    r"(?i)\b(?:iwr|Invoke-WebRequest|Start-BitsTransfer|curl\.exe)\b[^\n]{0,300}?"
    r"-(?:OutFile|Destination)\s+['\"]?([^\s'\";]{1,200})"
)


def powershell_findings(text: str, depth: int = 0) -> Iterator[tuple[str, int, int, str]]:
    """(check, start, end, detail) for the patterns of PowerShell and batch in ``text``."""
    text = text[: 1024 * 1024]
    for check, pattern, detail in _PATTERNS:
        for match in pattern.finditer(text):
            if check == "download-to-shell" and _vendor(match.group()):
                yield "vendor-installer", match.start(), match.end(), "a vendor's installer"
                continue
            yield check, match.start(), match.end(), detail
            break
    upload = _UPLOAD.search(text)
    if upload is not None:
        read = _CREDENTIAL_READ.search(text)
        secret = _SECRET_ENV.search(text[upload.start() : upload.end() + 400])
        if read is not None:
            yield (
                "secret-exfiltration",
                min(read.start(), upload.start()),
                max(read.end(), upload.end()),
                "a credential file read, then uploaded",
            )
        elif secret is not None:
            yield (
                "secret-exfiltration",
                upload.start(),
                upload.end(),
                f"the secret {secret.group()} sent as data",
            )
        elif re.search(
            r"(?i)Compress-Archive[^\n]{0,200}(?:USERPROFILE|\$HOME)[\\/]?(?:Documents|"
            r"Desktop|Pictures)?",
            text,
        ):
            yield (
                "data-exfiltration",
                upload.start(),
                upload.end(),
                "the user's folders archived and uploaded",
            )
    elif (read := _CREDENTIAL_READ.search(text)) is not None:
        yield "credential-access", read.start(), read.end(), "reads a credential file"
    for saved in _SAVED_RUN.finditer(text):
        target = re.escape(saved.group(1))
        run = re.compile(
            rf"(?i)(?:&|\.|Start-Process(?:\s+-FilePath)?|iex|powershell(?:\.exe)?"
            rf"(?:\s+-\w+)*\s+-File)\s+['\"]?{target}"
        )
        if run.search(text, saved.end()) is not None and not _vendor(saved.group()):
            yield ("download-to-shell", saved.start(), saved.end(), "a download saved, then run")
            break
    yield from _decoded(text, depth)


def _vendor(text: str) -> bool:
    from agbom.scan.vendor_installers import is_vendor_installer

    return is_vendor_installer(text)


def _decoded(text: str, depth: int) -> Iterator[tuple[str, int, int, str]]:
    """Base64 payloads of ``-EncodedCommand`` or ``FromBase64String``, decoded and read
    again: their findings are placed on the payload."""
    assigned = {m.group(1).lower(): m.group(2) for m in _ASSIGNED.finditer(text)}
    candidates: list[tuple[int, int, str, bool]] = [
        (match.start(1), match.end(1), match.group(1), True) for match in _ENCODED.finditer(text)
    ]
    for match in _FROM_BASE64.finditer(text):
        payload = match.group(1) or assigned.get((match.group(2) or "").lower(), "")
        if payload:
            candidates.append((match.start(), match.end(), payload, False))
    executes = _EXECUTES.search(text) is not None
    for start, end, payload, encoded_command in candidates[:16]:
        decoded = _decode(payload, utf16=encoded_command)
        if decoded is None:
            continue
        if encoded_command or executes:
            yield "decode-and-execute", start, end, "base64 decoded and run as PowerShell"
        if depth < MAX_DEPTH:
            for check, _s, _e, detail in powershell_findings(decoded, depth + 1):
                yield check, start, end, f"in the decoded payload: {detail}"
            if indicators.miner_indicator(decoded) is not None:
                yield "cryptominer", start, end, "in the decoded payload: a miner's pool"
            from agbom.scan.content_shell import shell_findings

            for check, _s, _e in shell_findings(decoded, "decoded.sh", _vendor):
                yield check, start, end, "in the decoded payload, read as shell"


def _decode(payload: str, *, utf16: bool) -> str | None:
    try:
        data = base64.b64decode(payload + "=" * (-len(payload) % 4))
    except (ValueError, binascii.Error):
        return None
    for encoding in ("utf-16-le", "utf-8") if utf16 else ("utf-8", "utf-16-le"):
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if text.isprintable() or all(ch.isprintable() or ch in "\r\n\t" for ch in text):
            return text
    return None
