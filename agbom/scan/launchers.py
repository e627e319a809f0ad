"""Package URLs from MCP launcher command lines (``npx``, ``uvx``, ``docker run`` ...).

:func:`package_from_command` recognizes the launcher, finds the package argument past the
launcher's own options, and returns a :class:`Package` with a purl. A version is only taken
when it is pinned exactly; ``latest``, dist-tags and ranges leave the version unknown (never
``@latest`` in a purl) and mark the package unpinned, which the scanner reports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packageurl import PackageURL

_EXACT_VERSION = re.compile(r"^v?\d+(\.\d+)*([-+][0-9A-Za-z.\-+]+)?$")
_PEP503 = re.compile(r"[-_.]+")
_PEP508_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$")
_DIGEST = re.compile(r"^sha256:[0-9a-fA-F]{64}$")


@dataclass(frozen=True, slots=True)
class Package:
    """A package an MCP server is launched from."""

    ecosystem: str  # npm | pypi | docker | oci
    name: str  # display name: "@scope/pkg", "mcp-server-git", "ghcr.io/org/img"
    version: str | None  # exact version, tag or digest; None when unpinned
    purl: str
    launcher: str  # npx, uvx, docker ...
    requested: str | None = None  # what was asked for when not pinned ("latest", "^1.2")

    @property
    def pinned(self) -> bool:
        return self.version is not None

    @property
    def id_part(self) -> str:
        """Readable, deterministic id fragment: ``npm/@scope/name@1.2.3``."""
        base = f"{self.ecosystem}/{self.name}"
        return f"{base}@{self.version}" if self.version else base


def normalize_pypi(name: str) -> str:
    """PEP 503 normalized project name."""
    return _PEP503.sub("-", name).lower()


def exact_version(version: str | None) -> str | None:
    if version and _EXACT_VERSION.match(version):
        return version
    return None


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
    split = _split_npm_spec(spec)
    if split is None:
        return None
    full, requested = split
    version = exact_version(requested)
    namespace, _, name = full.rpartition("/")
    purl = PackageURL(
        type="npm", namespace=namespace or None, name=name.lower(), version=version
    ).to_string()
    display = full.lower()
    return Package("npm", display, version, purl, launcher, None if version else requested)


def _spec_from_args(
    args: list[str], from_flags: tuple[str, ...], value_opts: frozenset[str]
) -> str | None:
    """The package spec of a launcher's arguments: a ``from_flags`` value, else the first
    positional argument (after ``--`` at the latest). Options in ``value_opts`` take a value.
    """
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        flag, eq, value = arg.partition("=")
        if flag in from_flags:
            if eq:
                return value
            return args[i + 1] if i + 1 < len(args) else None
        if arg in value_opts:
            i += 2
            continue
        if arg.startswith("-"):
            i += 1
            continue
        break
    return args[i] if i < len(args) else None


def _npm_from_args(args: list[str], launcher: str) -> Package | None:
    spec = _spec_from_args(args, ("--package", "-p"), _NPM_VALUE_OPTS)
    return npm_package(spec, launcher) if spec is not None else None


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
    """``name``, ``name==1.0``, ``name[extra]>=1``, or uvx's ``name@1.0``."""
    if not spec or spec.startswith((".", "/", "~", "git+", "http")) or "://" in spec:
        return None
    requested: str | None = None
    if "@" in spec and "==" not in spec:
        spec, _, requested = spec.partition("@")
        version = exact_version(requested)
        match = _PEP508_NAME.match(spec)
        if not match or match.group(3):
            return None
        name = match.group(1)
    else:
        match = _PEP508_NAME.match(spec)
        if not match:
            return None
        name, rest = match.group(1), match.group(3).strip()
        version = None
        if rest:
            requested = rest
            if rest.startswith("==") and "," not in rest and "*" not in rest:
                version = exact_version(rest[2:].strip())
    normalized = normalize_pypi(name)
    purl = PackageURL(type="pypi", name=normalized, version=version).to_string()
    return Package("pypi", normalized, version, purl, launcher, None if version else requested)


def _pypi_from_args(args: list[str], launcher: str, from_flags: tuple[str, ...]) -> Package | None:
    spec = _spec_from_args(args, from_flags, _PY_VALUE_OPTS)
    return pypi_package(spec, launcher) if spec is not None else None


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


def package_from_command(command: str | None, args: list[str]) -> Package | None:
    """The package a launcher command line runs, or ``None`` when it is not recognized."""
    if not command:
        return None
    launcher = _basename(command)
    if launcher in ("npx", "bunx", "pnpx"):
        return _npm_from_args(args, launcher)
    if launcher in ("pnpm", "yarn", "bun") and args[:1] in (["dlx"], ["x"]):
        return _npm_from_args(args[1:], f"{launcher} {args[0]}")
    if launcher == "npm" and args[:1] == ["exec"]:
        return _npm_from_args(args[1:], "npm exec")
    if launcher == "uvx":
        return _pypi_from_args(args, "uvx", ("--from",))
    if launcher == "uv" and args[:2] == ["tool", "run"]:
        return _pypi_from_args(args[2:], "uv tool run", ("--from",))
    if launcher == "pipx" and args[:1] == ["run"]:
        return _pypi_from_args(args[1:], "pipx run", ("--spec",))
    if launcher in ("docker", "podman", "nerdctl"):
        return _image_from_args(args, launcher)
    return None
