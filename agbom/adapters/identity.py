"""Who is asking: the user and the machine behind a hook event.

Every hook request names them, so that the fleet shows one agent per developer and host
(``claude-code/alice@build-7``) and the review page's "Registered by" names a person, not a
runtime. The hook process takes them from the OS (login name of its uid, the uid, the host
name); thin mode sends them as ``X-Agbom-User``, ``X-Agbom-Uid`` and ``X-Agbom-Host``
(agbom/adapters/headers.py), standalone mode puts them in the adapter's context itself.

A header is a claim: any local account can send any. So the server trusts them no further
than it can check (:func:`checked`):

- **standalone** mode decides in the user's own process, on the user's own store: the OS's
  word is the identity (``local-process``);
- **a loopback connection on Linux**: the server asks the kernel who owns the client's
  socket (agbom/adapters/socket_owner.py: netlink, else ``/proc/net/tcp`` and ``tcp6``) and
  takes that uid, and its own host name; the claim is replaced by what the kernel says
  (``peer-credentials``);
- **anything else** (another machine, another network namespace, a platform without
  either): the claim is kept but marked, and the agent id says so
  (``claude-code/claimed:alice@laptop``), so that an approval scoped to
  ``claude-code/alice@*`` cannot be reached by claiming to be alice.

Standard library only: thin mode imports this on every event.
"""

import os

# Not typing.TYPE_CHECKING, nor collections.abc at run time: thin mode imports this module on
# every event, and collections.abc loads all of collections.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

USER_ENV = "AGBOM_USER"
UID_ENV = "AGBOM_UID"
HOST_ENV = "AGBOM_HOST"
VERIFIED_ENV = "AGBOM_IDENTITY"
"""How the identity was established: ``local-process`` or ``peer-credentials``; absent for a
claim. Set only by agbom itself, never from a header (headers.HEADER_TO_ENV has no entry)."""
HEADERS = {"x-agbom-user": USER_ENV, "x-agbom-uid": UID_ENV, "x-agbom-host": HOST_ENV}
MAX_PART = 64
# Without re: this module is on the thin hook's start path, where every import is paid per event.
_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-")


def clean(value: object) -> str | None:
    """A user or host name safe to put in an agent id: letters, digits and ``._+-`` (others
    become ``_``), at most :data:`MAX_PART` characters; None for nothing usable."""
    if not isinstance(value, str):
        return None
    text = "".join(c if c in _SAFE else "_" for c in value.strip())[:MAX_PART].strip("_")
    return text or None


def local_identity() -> dict[str, str]:
    """This process's user (the login name of its uid), uid and host name, as env keys."""
    out: dict[str, str] = {}
    uid = os.getuid() if hasattr(os, "getuid") else None
    user = None
    if uid is not None:
        out[UID_ENV] = str(uid)
        try:
            import pwd

            user = pwd.getpwuid(uid).pw_name
        except (ImportError, KeyError):
            user = None
    if user is None:
        user = os.environ.get("USER") or os.environ.get("LOGNAME") or os.environ.get("USERNAME")
    # The C module's gethostname (what socket.gethostname is): the hook runs once per tool
    # call, and importing socket costs it about 2.5 ms.
    import _socket

    for key, value in ((USER_ENV, user), (HOST_ENV, _socket.gethostname())):
        cleaned = clean(value)
        if cleaned:
            out[key] = cleaned
    return out


def identity_headers(identity: "Mapping[str, str]") -> dict[str, str]:
    """The headers thin mode sends for ``identity`` (env keys, as :func:`local_identity`)."""
    return {header: identity[env] for header, env in HEADERS.items() if identity.get(env)}


def agent_id(runtime: str, env: "Mapping[str, str]") -> str:
    """The agent id of ``runtime`` for the user and host in ``env``: ``RUNTIME/USER@HOST``
    when established, ``RUNTIME/claimed:USER@HOST`` for a claim, ``RUNTIME`` when unknown."""
    user, host = clean(env.get(USER_ENV)), clean(env.get(HOST_ENV))
    if not user or not host:
        return runtime
    mark = "" if env.get(VERIFIED_ENV) else "claimed:"
    return f"{runtime}/{mark}{user}@{host}"


def describe(env: "Mapping[str, str]") -> dict[str, str]:
    """The identity fields recorded with the session (``platform_context.identity``)."""
    out = {k: v for k, v in (("user", env.get(USER_ENV)), ("uid", env.get(UID_ENV)),
                             ("host", env.get(HOST_ENV))) if v}  # fmt: skip
    if out:
        out["established_by"] = env.get(VERIFIED_ENV) or "claimed by the hook (not checked)"
    return out


# -- the server's check --------------------------------------------------------------------------


def _loopback(host: str) -> bool:
    import ipaddress

    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def checked(
    env: "Mapping[str, str]", client: tuple[str, int] | None, server: tuple[str, int] | None
) -> dict[str, str]:
    """``env`` with the identity the server can establish for a hook request from
    ``client`` to ``server`` (see the module docstring); the claim, marked, otherwise."""
    out = {k: v for k, v in env.items() if k != VERIFIED_ENV}
    if client is None or server is None or not _loopback(client[0]):
        return out
    from agbom.adapters.socket_owner import peer_uid

    uid = peer_uid(client, server)
    if uid is None:
        return out
    import socket

    try:
        import pwd

        user: str | None = pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        user = None
    out[UID_ENV] = str(uid)
    out[USER_ENV] = clean(user) or f"uid{uid}"
    out[HOST_ENV] = clean(socket.gethostname()) or "localhost"
    out[VERIFIED_ENV] = "peer-credentials"
    return out
