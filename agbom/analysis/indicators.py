"""What the code analysers (shell, Python, JavaScript) know about places and names, whatever
the language: which paths hold credentials or the user's own files, which paths make a
program start again on its own (persistence), which hold the system's privileges or the
agent's instructions, which programs, hosts and options mine cryptocurrency, and which host
a secret's own vendor serves.

Facts only (paths the programs document, hosts their vendors publish); every lookup is a
bounded regular expression or a set lookup on a string already bounded by the caller.
"""

from __future__ import annotations

import re

# -- credentials ----------------------------------------------------------------------------------

# Credential stores beyond the shell's list (agbom.analysis.shell_programs): browsers' saved
# passwords, cookies and keys, crypto wallets, keychains, history files (they hold typed
# secrets), cloud and registry tokens.
_STORES = re.compile(
    r"(?:^|/)(?:Login Data|Cookies|Web Data|Local State|logins\.json|key[34]\.db|cookies\.sqlite"
    r"|signons\.sqlite)$"
    r"|(?:^|/)Local Extension Settings(?:/|$)"
    r"|(?:^|/|~)\.(?:electrum|bitcoin|ethereum|monero|litecoin|dogecoin)(?:/|$)|(?:^|/)wallet\.dat$"
    r"|(?:^|/)(?:Exodus|atomic|Ledger Live|Electrum)(?:/|$)|exodus\.wallet"
    r"|(?:^|/)(?:login|System)\.keychain(?:-db)?$|(?:^|/)Library/Keychains(?:/|$)"
    r"|(?:^|/|~)\.(?:bash|zsh|sh|python|mysql|psql|node_repl|sqlite)_history$|(?:^|/|~)\.zhistory$"
    r"|(?:^|/|~)\.config/(?:gh|hub|gcloud|doctl|heroku)(?:/|$)|(?:^|/|~)\.aws(?:/|$)"
    r"|(?:^|/|~)\.ssh(?:/|$)(?!.*\.pub$)(?!.*known_hosts$)(?!.*config$)"
    r"|(?:^|/|~)\.(?:npmrc|pypirc|netrc|git-credentials|pgpass|vault-token|docker/config\.json)$"
    r"|(?:^|/|~)\.kube/config$|(?:^|/|~)\.azure(?:/|$)|(?:^|/|~)\.gnupg(?:/|$)"
    r"|(?:^|/)\.env(?:\.[\w-]+)?$|^/etc/(?:shadow|gshadow|master\.passwd)$"
    r"|^/proc/(?:self|\d+|\*)/environ$|(?:^|/|~)\.password-store(?:/|$)"
    r"|(?:^|/|~)\.(?:purple|thunderbird)(?:/|$)",
    re.IGNORECASE,
)


def is_credential_store(path: str) -> bool:
    """A path (or a glob) under which credentials live: keys, tokens, browser password and
    cookie stores, wallets, keychains, history files, ``.env`` files. Public keys
    (``.pub``), ``known_hosts`` and ssh's ``config`` are not credentials."""
    if not path or len(path) > 4096:
        return False
    normal = _home(path.replace("\\", "/"))
    return _STORES.search(normal.rstrip("/*") or normal) is not None


def _home(path: str) -> str:
    """``$HOME``, ``${HOME}``, ``%USERPROFILE%``, ``/home/NAME``, ``/Users/NAME`` as ``~``."""
    for prefix in ("$HOME", "${HOME}", "%USERPROFILE%", "$env:USERPROFILE", "$env:HOME"):
        if path.startswith(prefix):
            return "~" + path[len(prefix) :]
    match = _HOMES.match(path)
    if match is not None:
        return "~" + path[match.end() :]
    return path


_HOMES = re.compile(r"^(?:/home/[^/]+|/Users/[^/]+|/root|[A-Za-z]:/Users/[^/]+)(?=/|$)")

# The user's own files: the home folder walked or archived whole, or its document folders.
_USER_DATA = re.compile(
    r"^~/?\*?$|^~/(?:Documents|Desktop|Downloads|Pictures|Photos|Movies|Music|OneDrive|"
    r"Dropbox|iCloud Drive|Library/Mobile Documents)(?:/|$)|^/home/?\*?$|^/Users/?\*?$",
    re.IGNORECASE,
)


def is_user_data(path: str) -> bool:
    """The home folder itself (walked, archived, listed whole) or one of its document
    folders."""
    if not path or len(path) > 4096:
        return False
    return _USER_DATA.search(_home(path.replace("\\", "/"))) is not None


# -- persistence ----------------------------------------------------------------------------------

# Places whose content runs again later by itself: scheduled jobs, services and agents,
# autostart entries, login keys, git hooks outside the project, the shell's start-up files.
_PERSISTENCE = re.compile(
    r"^/etc/cron(?:tab|\.d|\.hourly|\.daily|\.weekly|\.monthly)(?:/|$)|^/var/spool/cron(?:/|$)"
    r"|^/etc/systemd/(?:system|user)(?:/|$)|^/(?:usr/)?lib/systemd/system(?:/|$)"
    r"|^~/\.config/systemd/user(?:/|$)|^/etc/init\.d(?:/|$)|^/etc/rc\.local$"
    r"|^~/Library/LaunchAgents(?:/|$)|^/Library/Launch(?:Agents|Daemons)(?:/|$)"
    r"|^~/\.config/autostart(?:/|$)|^/etc/xdg/autostart(?:/|$)"
    r"|Start Menu/Programs/Startup(?:/|$)|^~/\.ssh/authorized_keys2?$"
    r"|^/etc/ld\.so\.preload$|^/etc/profile(?:\.d/.*)?$|^/etc/bash\.bashrc$"
    r"|^~/\.githooks(?:/|$)|(?:^|/)\.git/hooks/[\w.-]+$",
    re.IGNORECASE,
)
# Start-up files of the user's shells: a PATH line or a tool's init line is what installers
# add; only a line that fetches, sends, decodes or shadows a command counts (see
# :func:`risky_startup_line`).
_STARTUP = re.compile(
    r"^~/\.(?:bashrc|bash_profile|bash_login|profile|zshrc|zprofile|zshenv|zlogin|cshrc|tcshrc"
    r"|kshrc|config/fish/config\.fish)$|(?:^|/)(?:Microsoft\.PowerShell_profile\.ps1|profile\.ps1)$",
    re.IGNORECASE,
)
_RISKY_LINE = re.compile(
    r"(?i)\b(?:curl|wget|iwr|irm|invoke-webrequest|nc|ncat|socat|telnet)\b|/dev/tcp/|base64"
    r"|\bPROMPT_COMMAND\b|\btrap\b|\bLD_PRELOAD\b|\balias\s+(?:sudo|ssh|git|su|ls|cd|cat|npm|pip)="
    r"|\b(?:xmrig|minerd|cpuminer)\b|https?://"
)


def is_persistence_path(path: str) -> bool:
    if not path or len(path) > 4096:
        return False
    return _PERSISTENCE.search(_home(path.replace("\\", "/"))) is not None


def is_startup_file(path: str) -> bool:
    if not path or len(path) > 4096:
        return False
    return _STARTUP.search(_home(path.replace("\\", "/"))) is not None


def risky_startup_line(text: str) -> bool:
    """A line added to a shell's start-up file that does more than set up a tool: it fetches,
    sends, decodes, or shadows a command with an alias."""
    return _RISKY_LINE.search(text[:65536]) is not None


# -- privileges and system files ------------------------------------------------------------------

_PRIVILEGE = re.compile(
    r"^/etc/sudoers(?:\.d(?:/.*)?)?$|^/etc/(?:passwd|shadow|group|gshadow)$"
    r"|^/etc/security/|^/etc/pam\.d(?:/|$)|^/etc/polkit-1(?:/|$)|^/var/run/docker\.sock$"
    r"|^/run/docker\.sock$",
    re.IGNORECASE,
)
_SYSTEM_FILES = re.compile(
    r"^/etc/(?:hosts|resolv\.conf|nsswitch\.conf|fstab|environment|ssh/sshd_config|apt/|yum"
    r"|hostname)|^/(?:bin|sbin|usr/bin|usr/sbin|usr/lib|lib|lib64|boot)(?:/|$)"
    r"|^[A-Za-z]:/Windows(?:/|$)|/System32/drivers/etc/hosts$",
    re.IGNORECASE,
)
# The agent's own instructions, settings and other skills: writing them changes what the
# agent does in every later session.
_AGENT_FILES = re.compile(
    r"(?:^|/)(?:CLAUDE|AGENTS|GEMINI)\.md$|(?:^|/)\.cursorrules$|(?:^|/)\.windsurfrules$"
    r"|(?:^|/)copilot-instructions\.md$|(?:^|/|~)\.claude/(?:settings(?:\.local)?\.json|skills"
    r"|commands|agents|CLAUDE\.md)|(?:^|/|~)\.(?:cursor|codex|gemini|agents)/(?:skills|rules"
    r"|settings\.json|config\.toml)|(?:^|/)SKILL\.md$",
    re.IGNORECASE,
)


_AGENT_SETTINGS = re.compile(r"(?i)settings(?:\.local)?\.json$|config\.toml$|\.json$")


def is_agent_settings(path: str) -> bool:
    """An agent's settings file (as opposed to its instructions)."""
    return is_agent_file(path) and _AGENT_SETTINGS.search(path) is not None


def is_privileged_path(path: str) -> bool:
    if not path or len(path) > 4096:
        return False
    return _PRIVILEGE.search(path.replace("\\", "/")) is not None


def is_system_file(path: str) -> bool:
    if not path or len(path) > 4096:
        return False
    return _SYSTEM_FILES.search(path.replace("\\", "/")) is not None


def is_agent_file(path: str) -> bool:
    if not path or len(path) > 4096:
        return False
    return _AGENT_FILES.search(_home(path.replace("\\", "/"))) is not None


# Settings that let the agent act without asking: Claude Code's bypass mode, a wildcard
# allow rule for a tool, the command-line switch that skips the prompts.
AGENT_BYPASS = re.compile(
    r"(?i)bypassPermissions|dangerously-skip-permissions|\"(?:Bash|Write|Edit|WebFetch)\(\*\)\""
    r"|\"(?:Bash|Write|Edit)\"\s*[,\]]|--yolo\b|approval_policy\s*=\s*\"?never"
)

# -- cryptominers ---------------------------------------------------------------------------------

MINER_PROGRAMS = frozenset(
    {"xmrig", "xmr-stak", "xmr-stak-rx", "xmrig-proxy", "minerd", "cpuminer", "cpuminer-opt",
     "cgminer", "bfgminer", "ethminer", "t-rex", "lolminer", "nbminer", "phoenixminer",
     "gminer", "teamredminer", "nanominer", "srbminer", "srbminer-multi", "xmrigdaemon",
     "claymore", "ccminer", "nheqminer", "wildrig", "bzminer", "rigel", "onezerominer"}
)  # fmt: skip
_MINER_TEXT = re.compile(
    r"(?i)\bstratum\d?\+(?:tcp|ssl|tls)://"
    r"|\b(?:[\w-]+\.)*(?:supportxmr|moneroocean|minexmr|nanopool|2miners|f2pool|hashvault"
    r"|unmineable|minergate|zpool|nicehash|herominers|c3pool|ethermine|flypool|viabtc|antpool"
    r"|slushpool|dwarfpool|xmrpool|monerohash|miningpoolhub|prohashing|zergpool|woolypooly"
    r"|kryptex|hiveon|cryptonote)\.(?:com|org|net|ca|pro|stream|io|eu|fr|cc|xyz)\b"
    r"|[\"']?donate-level[\"']?\s*[:=]|--donate-level\b|\bcoin-?hive\b|\bCoinHive\.|\bcryptoloot\b"
    r"|\bwebminepool\b|\bcoinimp\b|\bjsecoin\b|\bxmrig\b[\w./-]*\.(?:tar\.gz|zip|exe)\b"
    r"|\b(?:metal3d|minerboy|pmietlicki)/xmrig\b|/xmrig/xmrig/releases\b"
)


# Methods of the stratum mining protocol (JSON-RPC over a plain TCP connection to a pool), and
# of the Ethereum pools' variant: no other protocol sends these.
_STRATUM = re.compile(
    r"\bmining\.(?:subscribe|authorize|submit|extranonce\.subscribe|configure|suggest_difficulty)\b"
    r"|\beth_submit(?:Login|Work|Hashrate)\b"
)


def stratum_method(text: str) -> str | None:
    """The stratum method a message sends (``mining.subscribe``), if it sends one."""
    found = _STRATUM.search(text[:65536])
    return found.group() if found is not None else None


def miner_indicator(text: str) -> re.Match[str] | None:
    """A mining pool's address, a stratum URL, a miner's own option or config key, a browser
    miner, or a miner's release download in ``text``."""
    return _MINER_TEXT.search(text)


def miner_matches(text: str) -> list[re.Match[str]]:
    return list(_MINER_TEXT.finditer(text))


def is_miner_program(name: str) -> bool:
    base = name.rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower().removesuffix(".exe")
    return base in MINER_PROGRAMS or base.startswith(("xmrig", "cpuminer", "xmr-stak"))


# -- secrets and the hosts of their vendors -------------------------------------------------------

# A secret variable named after its vendor is meant for that vendor's hosts: a Tavily key sent
# to api.tavily.com is the key's use, an OpenAI key sent to another host is a leak.
_VENDOR_HOSTS: dict[str, tuple[str, ...]] = {
    "openai": ("openai.com", "openai.azure.com"),
    "anthropic": ("anthropic.com",),
    "claude": ("anthropic.com", "claude.ai"),
    "github": ("github.com", "githubusercontent.com", "ghcr.io"),
    "gh": ("github.com", "githubusercontent.com", "ghcr.io"),
    "gitlab": ("gitlab.com",),
    "aws": ("amazonaws.com", "aws.amazon.com"),
    "slack": ("slack.com",),
    "stripe": ("stripe.com",),
    "google": ("googleapis.com", "google.com"),
    "gemini": ("googleapis.com",),
    "gcp": ("googleapis.com",),
    "azure": ("azure.com", "microsoft.com", "windows.net"),
    "huggingface": ("huggingface.co",),
    "hf": ("huggingface.co",),
    "npm": ("npmjs.org", "npmjs.com"),
    "pypi": ("pypi.org",),
    "notion": ("notion.com", "notion.so"),
    "linear": ("linear.app",),
    "sentry": ("sentry.io",),
    "datadog": ("datadoghq.com", "datadoghq.eu"),
    "mistral": ("mistral.ai",),
    "groq": ("groq.com",),
    "cohere": ("cohere.ai", "cohere.com"),
    "twilio": ("twilio.com",),
    "sendgrid": ("sendgrid.com",),
    "discord": ("discord.com",),
    "telegram": ("telegram.org",),
    "jira": ("atlassian.net", "atlassian.com"),
    "atlassian": ("atlassian.net", "atlassian.com"),
    "vercel": ("vercel.com",),
    "cloudflare": ("cloudflare.com",),
    "openrouter": ("openrouter.ai",),
    "replicate": ("replicate.com",),
    "pinecone": ("pinecone.io",),
    "supabase": ("supabase.co", "supabase.com"),
    "firecrawl": ("firecrawl.dev",),
    "serpapi": ("serpapi.com",),
    "brave": ("brave.com",),
    "perplexity": ("perplexity.ai",),
    "elevenlabs": ("elevenlabs.io",),
    "deepseek": ("deepseek.com",),
    "xai": ("x.ai",),
}


def vendor_of(name: str) -> str | None:
    """The vendor a secret variable's name starts with or holds (``OPENAI_API_KEY``)."""
    parts = [p for p in re.split(r"[^a-z0-9]+", name.lower()) if p]
    for part in parts:
        if part in _VENDOR_HOSTS:
            return part
    return None


def host_serves(vendor: str, host: str) -> bool:
    """``host`` belongs to ``vendor`` (its domain, or a host naming the vendor: a key sent to
    ``api.tavily.com`` is a Tavily key's use)."""
    host = host.lower().rstrip(".")
    domains = _VENDOR_HOSTS.get(vendor, ())
    if any(host == d or host.endswith("." + d) for d in domains):
        return True
    labels = re.split(r"[.-]", host)
    return vendor in labels


def is_loopback(host: str) -> bool:
    host = host.lower().strip("[]")
    return host in ("localhost", "::1", "0.0.0.0") or host.startswith("127.")


_HOST = re.compile(r"^[a-z][a-z0-9+.-]{0,15}://(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]+)", re.IGNORECASE)


def host_of(url: str) -> str | None:
    """The host of an absolute URL, lower case; ``None`` when there is none to read."""
    match = _HOST.match(url.strip())
    return match.group(1).lower() if match is not None else None
