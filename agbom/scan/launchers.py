"""Package URLs from MCP launcher command lines (``npx``, ``uvx``, ``docker run`` ...).

:func:`resolve_launch` recognizes the launcher (also behind Windows' ``cmd /c``), finds the
package argument past the launcher's own options, and returns a :class:`Launch` with the
:class:`Package` (and its purl) and, for bridges such as ``mcp-remote``, the remote
endpoint they connect to. A version is only taken when it is pinned exactly (PEP 440 and
semver pre-releases included); ``latest``, dist-tags and ranges leave the version unknown
(never ``@latest`` in a purl) and mark the package unpinned, which the scanner reports.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

from packageurl import PackageURL
from packageurl.contrib.url2purl import url2purl
from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

# semver 2.0.0: MAJOR.MINOR.PATCH with optional pre-release and build (npm's exact form).
_SEMVER = re.compile(
    r"^[v=]?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$"
)
_EXACT_VERSION = re.compile(r"^v?\d+(\.\d+)*([-+][0-9A-Za-z.\-+]+)?$")
_PEP503 = re.compile(r"[-_.]+")
_DIGEST = re.compile(r"^sha256:[0-9a-fA-F]{64}$")
_GIT_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/+-]{0,199}$")
_MAX_WRAPPERS = 4  # cmd /c cmd /c ... is unwrapped this many times at most


@dataclass(frozen=True, slots=True)
class Package:
    """A package an MCP server is launched from."""

    ecosystem: str  # npm | pypi | docker | oci | github | gitlab | bitbucket | generic
    name: str  # display name: "@scope/pkg", "mcp-server-git", "ghcr.io/org/img"
    version: str | None  # exact version, tag, digest or git ref; None when unpinned
    purl: str
    launcher: str  # npx, uvx, docker, "cmd /c npx" ...
    requested: str | None = None  # what was asked for when not pinned ("latest", "^1.2")

    @property
    def pinned(self) -> bool:
        return self.version is not None

    @property
    def id_part(self) -> str:
        """Readable, deterministic id fragment: ``npm/@scope/name@1.2.3``."""
        base = f"{self.ecosystem}/{self.name}"
        return f"{base}@{self.version}" if self.version else base


@dataclass(frozen=True, slots=True)
class Bridge:
    """A local bridge (``mcp-remote``, ``supergateway``, ``mcp-proxy``) to a remote server."""

    name: str
    url: str  # the remote endpoint, as written in the (already redacted) arguments
    transport: str | None  # "sse" or "streamable-http" when the arguments say


@dataclass(frozen=True, slots=True)
class Launch:
    """What a command line runs: the package, the innermost program and its arguments."""

    program: str  # basename of the program that runs, past any cmd /c wrapper ("npx")
    package: Package | None = None
    rest: tuple[str, ...] = field(default=())  # arguments after the package or program
    bridge: Bridge | None = None


def normalize_pypi(name: str) -> str:
    """PEP 503 normalized project name."""
    return _PEP503.sub("-", name).lower()


def exact_version(version: str | None) -> str | None:
    """``version`` when it looks like one exact dotted version (NuGet and other registries)."""
    if version and _EXACT_VERSION.match(version):
        return version
    return None


def exact_semver(version: str | None) -> str | None:
    """``version`` when it is one exact npm (semver) version, pre-releases included.

    ``1.2`` is a range to npm (``1.2.x``), so it is not exact."""
    if version and _SEMVER.match(version):
        return version
    return None


def exact_pep440(version: str | None) -> str | None:
    """``version`` when it is a valid PEP 440 version (``0.0.1a4``, ``1.0.dev3``), else None."""
    if not version:
        return None
    try:
        Version(version)
    except InvalidVersion:
        return None
    return version


# -- npm ----------------------------------------------------------------------------------------

# npx/bunx/pnpm dlx options that take a value (the value is not the package).
_NPM_VALUE_OPTS = frozenset(
    {
        "--package",
        "-p",
        "--call",
        "-c",
        "--cache",
        "--registry",
        "--node-options",
        "--shell",
        "--userconfig",
    }
)


def _split_npm_spec(spec: str) -> tuple[str, str | None] | None:
    """``@scope/name@1.2`` -> (``@scope/name``, ``1.2``); None for paths, URLs, git specs."""
    if not spec or spec.startswith((".", "/", "~")) or ":" in spec:
        return None
    if spec.startswith("@"):
        scope, _, rest = spec.partition("/")
        if not rest or len(scope) < 2:
            return None
        name, at, version = rest.partition("@")
        full = f"{scope}/{name}"
    else:
        name, at, version = spec.partition("@")
        full = name
    if not name or "/" in name or not re.match(r"^[A-Za-z0-9._~-]+$", name):
        return None
    return full, (version if at else None)


def npm_package(spec: str, launcher: str) -> Package | None:
    """``name``, ``@scope/name@1.2.3``, ``name@1.2.3-beta.1``, or a git spec."""
    if spec.startswith(("github:", "gitlab:", "bitbucket:")):
        host, _, repo = spec.partition(":")
        repo, _, ref = repo.partition("#")
        return git_package(f"https://{host}.{'org' if host == 'bitbucket' else 'com'}/{repo}",
                           launcher, ref or None)  # fmt: skip
    if spec.startswith("git+"):
        url, _, ref = spec.partition("#")  # npm writes the ref after '#'
        return git_package(url, launcher, ref or None)
    split = _split_npm_spec(spec)
    if split is None:
        return None
    full, requested = split
    version = exact_semver(requested)
    namespace, _, name = full.rpartition("/")
    purl = PackageURL(
        type="npm", namespace=namespace or None, name=name.lower(), version=version
    ).to_string()
    display = full.lower()
    return Package("npm", display, version, purl, launcher, None if version else requested)


def _spec_from_args(
    args: list[str], from_flags: tuple[str, ...], value_opts: frozenset[str]
) -> tuple[str | None, tuple[str, ...]]:
    """The package spec of a launcher's arguments and the arguments after what it runs.

    The spec is a ``from_flags`` value, else the first positional argument (after ``--`` at
    the latest). Options in ``value_opts`` take a value. With a ``from_flags`` spec, the
    first positional argument names the program, and the rest follows it.
    """
    i = 0
    spec: str | None = None
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        flag, eq, value = arg.partition("=")
        if flag in from_flags and spec is None:
            if eq:
                spec = value
                i += 1
            else:
                spec = args[i + 1] if i + 1 < len(args) else None
                i += 2
            continue
        if arg in value_opts:
            i += 2
            continue
        if arg.startswith("-"):
            i += 1
            continue
        break
    if i >= len(args):
        return spec, ()
    return (spec if spec is not None else args[i]), tuple(args[i + 1 :])


# -- git sources --------------------------------------------------------------------------------

# Branch names that move with every push: a ref like these pins nothing.
_MOVING_REFS = frozenset({"main", "master", "head", "develop", "dev", "trunk", "latest"})


def git_package(url: str, launcher: str, ref: str | None = None) -> Package | None:
    """A git source (``git+https://github.com/org/repo.git@v1.2``) as ``pkg:github/org/repo``.

    GitHub, GitLab and Bitbucket get their own purl types; any other host is ``pkg:generic``
    with the URL in ``vcs_url``. The ref (a tag or a commit) is the version; no ref, or a
    branch name such as ``main``, leaves it unpinned. Credentials in the URL are dropped.
    """
    url = url.removeprefix("git+")
    url = url.partition("#")[0]  # pip's #egg=...&subdirectory=...
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return None
    if parts.scheme not in ("https", "http", "ssh", "git") or not host:
        return None
    path = parts.path
    if ref is None and "@" in path:
        path, _, ref = path.rpartition("@")
    path = path.rstrip("/").removesuffix(".git")
    segments = [s for s in path.split("/") if s]
    if not segments or (ref is not None and not _GIT_REF.match(ref)):
        return None
    requested = None
    if ref is not None and ref.lower() in _MOVING_REFS:
        requested, ref = ref, None
    known = url2purl(f"https://{host}/{'/'.join(segments)}")  # type: ignore[no-untyped-call]
    if (
        isinstance(known, PackageURL)
        and known.type in ("github", "gitlab", "bitbucket")
        and known.namespace
    ):
        purl = PackageURL(type=known.type, namespace=known.namespace, name=known.name,
                          version=ref).to_string()  # fmt: skip
        display = f"{known.namespace}/{known.name}"
        ecosystem = known.type
    else:
        vcs_url = f"git+{parts.scheme}://{host}/{'/'.join(segments)}"
        purl = PackageURL(type="generic", name=segments[-1].lower(), version=ref,
                          qualifiers={"vcs_url": vcs_url}).to_string()  # fmt: skip
        display = f"{host}/{'/'.join(segments)}".lower()
        ecosystem = "generic"
    return Package(ecosystem, display, ref, purl, launcher, requested)


# -- PyPI ---------------------------------------------------------------------------------------

_PY_VALUE_OPTS = frozenset(
    {
        "--python",
        "-p",
        "--with",
        "-w",
        "--index-url",
        "--index",
        "--extra-index-url",
        "--spec",
        "--from",
        "--pip-args",
        "--env-file",
        "--directory",
        "--project",
    }
)


def pypi_package(spec: str, launcher: str) -> Package | None:
    """``name``, ``name==1.0``, ``name[extra]>=1``, uvx's ``name@1.0``, PEP 440 pre-releases
    (``name@0.0.1a4``), and git sources (``git+https://...@ref``, ``name @ git+https://...``).
    """
    spec = spec.strip()
    if spec.startswith("git+"):
        return git_package(spec, launcher)
    if not spec or spec.startswith((".", "/", "~", "http")):
        return None
    if "@" in spec and "://" not in spec and "==" not in spec:
        # uv's NAME@VERSION (not PEP 508): the version must be one exact PEP 440 version.
        name_part, _, requested = spec.partition("@")
        try:
            requirement = Requirement(name_part)
        except InvalidRequirement:
            return None
        if requirement.specifier or requirement.url or requirement.marker:
            return None
        return _pypi(requirement.name, exact_pep440(requested.strip()), launcher, requested)
    try:
        requirement = Requirement(spec)
    except InvalidRequirement:
        return None
    if requirement.url is not None:
        if requirement.url.startswith("git+"):
            return git_package(requirement.url, launcher)
        return None  # an archive URL: nothing says which release it is
    specifiers = list(requirement.specifier)
    version: str | None = None
    if len(specifiers) == 1 and specifiers[0].operator in ("==", "==="):
        wanted = specifiers[0].version
        if specifiers[0].operator == "===" or "*" not in wanted:
            version = exact_pep440(wanted) if specifiers[0].operator == "==" else wanted
    return _pypi(requirement.name, version, launcher, str(requirement.specifier) or None)


def _pypi(name: str, version: str | None, launcher: str, requested: str | None) -> Package:
    normalized = normalize_pypi(name)
    purl = PackageURL(type="pypi", name=normalized, version=version).to_string()
    return Package("pypi", normalized, version, purl, launcher, None if version else requested)


# -- container images ---------------------------------------------------------------------------

_DOCKER_VALUE_OPTS = frozenset(
    {
        "-e", "--env", "--env-file", "-v", "--volume", "-p", "--publish", "--name", "--network",
        "--net", "-w", "--workdir", "-u", "--user", "--mount", "--entrypoint", "-l", "--label",
        "--platform", "--pull", "--cpus", "-m", "--memory", "--add-host", "--device", "--cap-add",
        "--cap-drop", "--security-opt", "-h", "--hostname", "--tmpfs", "--ulimit", "--log-driver",
        "--log-opt", "--restart", "--shm-size", "--dns", "--ipc", "--pid", "--runtime",
        "--stop-signal", "--stop-timeout", "--health-cmd", "--cidfile", "--gpus", "--group-add",
        "--label-file", "--expose", "--link", "--volumes-from", "--memory-swap",
    }
)  # fmt: skip
_HUB_HOSTS = frozenset({"docker.io", "index.docker.io", "registry-1.docker.io"})


def image_package(image: str, launcher: str = "docker") -> Package | None:
    """``[registry/]repo[:tag][@sha256:...]`` -> ``pkg:docker`` (Docker Hub) or ``pkg:oci``."""
    if not image or image.startswith("-") or any(c.isspace() for c in image):
        return None
    digest: str | None = None
    if "@" in image:
        image, _, digest = image.partition("@")
        if not _DIGEST.match(digest):
            digest = None
    tag: str | None = None
    last = image.rsplit("/", 1)[-1]
    if ":" in last:
        image, _, tag = image.rpartition(":")
    parts = image.split("/")
    host = None
    if len(parts) > 1 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        host, parts = parts[0].lower(), parts[1:]
    if not parts or not all(parts):
        return None
    repo = "/".join(parts).lower()
    requested = tag if tag and tag != "latest" else ("latest" if tag == "latest" else None)
    pinned_tag = tag if tag and tag != "latest" else None
    version = digest or pinned_tag
    if host is None or host in _HUB_HOSTS:
        namespace, _, name = repo.rpartition("/")
        qualifiers = {"tag": pinned_tag} if digest and pinned_tag else {}
        purl = PackageURL(
            type="docker", namespace=namespace or None, name=name, version=version,
            qualifiers=qualifiers or None,
        ).to_string()  # fmt: skip
        display = repo
        ecosystem = "docker"
    else:
        name = parts[-1].lower()
        qualifiers = {"repository_url": f"{host}/{repo}"}
        if pinned_tag:
            qualifiers["tag"] = pinned_tag
        # pkg:oci carries only a digest as its version; a tag alone goes in the qualifier.
        purl = PackageURL(type="oci", name=name, version=digest, qualifiers=qualifiers).to_string()
        display = f"{host}/{repo}"
        ecosystem = "oci"
    return Package(ecosystem, display, version, purl, launcher, None if version else requested)


def _image_from_args(args: list[str], launcher: str) -> Package | None:
    # Expect "run" (or "container run") first.
    i = 0
    if args[:2] == ["container", "run"]:
        i = 2
    elif args[:1] == ["run"]:
        i = 1
    else:
        return None
    while i < len(args):
        arg = args[i]
        if arg.startswith("-"):
            if "=" not in arg and arg in _DOCKER_VALUE_OPTS:
                i += 2
            else:
                i += 1
            continue
        return image_package(arg, launcher)
    return None


# -- dispatch -----------------------------------------------------------------------------------


def _basename(command: str) -> str:
    base = command.replace("\\", "/").rsplit("/", 1)[-1].lower()
    for suffix in (".cmd", ".exe", ".bat"):
        base = base.removesuffix(suffix)
    return base


def _unwrap_cmd(args: list[str]) -> list[str] | None:
    """The command line ``cmd [/d /q /s ...] /c|/k LINE`` runs, or None when there is none.

    The line may be one argument (``"npx -y pkg"``) or many; Windows quotes are honoured.
    """
    for index, arg in enumerate(args):
        switch = arg.lower()
        if switch in ("/c", "/k"):
            line = args[index + 1 :]
            if len(line) == 1 and any(c.isspace() for c in line[0]):
                try:
                    words = shlex.split(line[0], posix=False)
                except ValueError:
                    return None
                line = [w[1:-1] if len(w) > 1 and w[0] == w[-1] == '"' else w for w in words]
            return line or None
        if not switch.startswith("/"):
            return None  # not one of cmd's own switches: nothing cmd is told to run
    return None


# launcher -> (words that must follow it, label, ecosystem, flags naming the package)
_LAUNCHERS: dict[str, tuple[tuple[tuple[str, ...], str, str, tuple[str, ...]], ...]] = {
    "npx": (((), "npx", "npm", ("--package", "-p")),),
    "bunx": (((), "bunx", "npm", ("--package", "-p")),),
    "pnpx": (((), "pnpx", "npm", ("--package", "-p")),),
    "pnpm": ((("dlx",), "pnpm dlx", "npm", ("--package", "-p")),),
    "yarn": ((("dlx",), "yarn dlx", "npm", ("--package", "-p")),),
    "bun": ((("x",), "bun x", "npm", ("--package", "-p")),),
    "npm": ((("exec",), "npm exec", "npm", ("--package", "-p")),),
    "uvx": (((), "uvx", "pypi", ("--from",)),),
    "uv": ((("tool", "run"), "uv tool run", "pypi", ("--from",)),),
    "pipx": ((("run",), "pipx run", "pypi", ("--spec",)),),
}


def _package_of(launcher: str, args: list[str]) -> tuple[Package | None, tuple[str, ...]]:
    """The package a launcher runs and the arguments after it; (None, ()) when unknown."""
    if launcher in ("docker", "podman", "nerdctl"):
        return _image_from_args(args, launcher), ()
    for words, label, ecosystem, from_flags in _LAUNCHERS.get(launcher, ()):
        if tuple(args[: len(words)]) != words:
            continue
        value_opts = _NPM_VALUE_OPTS if ecosystem == "npm" else _PY_VALUE_OPTS
        spec, rest = _spec_from_args(args[len(words) :], from_flags, value_opts)
        if spec is None:
            return None, ()
        package = npm_package(spec, label) if ecosystem == "npm" else pypi_package(spec, label)
        return package, rest
    return None, ()


def resolve_launch(command: str | None, args: list[str]) -> Launch:
    """What ``command args`` runs: past ``cmd /c``, the launcher's package and any bridge."""
    argv = list(args)
    program = _basename(command or "")
    wrappers: list[str] = []
    while program == "cmd" and len(wrappers) < _MAX_WRAPPERS:
        inner = _unwrap_cmd(argv)
        if not inner:
            break
        wrappers.append("cmd /c")
        program, argv = _basename(inner[0]), inner[1:]
    package, rest = _package_of(program, argv) if program else (None, ())
    if package is not None and wrappers:
        package = replace(package, launcher=" ".join([*wrappers, package.launcher]))
    if package is None:
        rest = tuple(argv)
    return Launch(program, package, rest, _bridge(program, package, rest))


def package_from_command(command: str | None, args: list[str]) -> Package | None:
    """The package a launcher command line runs, or ``None`` when it is not recognized."""
    return resolve_launch(command, args).package


# -- bridges ------------------------------------------------------------------------------------

# Local programs that speak stdio to the client and connect to a remote MCP server. The
# package name or, for a globally installed bridge, the program name identifies them.
_BRIDGES = {("npm", "mcp-remote"), ("npm", "supergateway"), ("pypi", "mcp-proxy")}
_REMOTE_SCHEMES = ("https://", "http://", "wss://", "ws://")
_SUPERGATEWAY_FLAGS = {"--sse": "sse", "--streamablehttp": "streamable-http"}
_BRIDGE_TRANSPORTS = {
    "sse-only": "sse",
    "sse-first": "sse",
    "sse": "sse",
    "http-only": "streamable-http",
    "http-first": "streamable-http",
    "streamablehttp": "streamable-http",
    "streamable-http": "streamable-http",
}


def _option(rest: tuple[str, ...], names: set[str]) -> tuple[str, str] | None:
    """The first ``--name VALUE`` / ``--name=VALUE`` of ``names`` (case-insensitive)."""
    for index, arg in enumerate(rest):
        flag, eq, value = arg.partition("=")
        if flag.lower() in names:
            if eq:
                return flag.lower(), value
            if index + 1 < len(rest):
                return flag.lower(), rest[index + 1]
    return None


def _bridge(program: str, package: Package | None, rest: tuple[str, ...]) -> Bridge | None:
    name = package.name if package is not None else program
    known = {n for _, n in _BRIDGES}
    if package is not None and (package.ecosystem, package.name) not in _BRIDGES:
        return None
    if package is None and name not in known:
        return None
    transport_opt = _option(rest, {"--transport"})
    transport = _BRIDGE_TRANSPORTS.get(transport_opt[1].lower()) if transport_opt else None
    if name == "supergateway":
        # --sse URL / --streamableHttp URL connect out; --stdio CMD serves a local command.
        found = _option(rest, set(_SUPERGATEWAY_FLAGS))
        if found is None or not found[1].lower().startswith(_REMOTE_SCHEMES):
            return None
        return Bridge(name, found[1], _SUPERGATEWAY_FLAGS[found[0]])
    # mcp-remote URL [port] [--header ...]; mcp-proxy [options] URL (client mode).
    url = next((a for a in rest if a.lower().startswith(_REMOTE_SCHEMES)), None)
    if url is None:
        return None
    if name == "mcp-proxy":
        transport = transport or "sse"  # mcp-proxy speaks SSE unless told otherwise
    return Bridge(name, url, transport)
