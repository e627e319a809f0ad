"""Who owns the client end of a loopback TCP connection: the kernel's word, for the server's
identity check (:func:`agbom.adapters.identity.checked`).

The kernel is asked for that one connection by netlink (``NETLINK_SOCK_DIAG``, what ``ss``
uses): an exact lookup by addresses and ports, in the server's network namespace, answered in
tens of microseconds. Reading ``/proc/net/tcp`` instead makes the kernel walk its whole table
of connections, a millisecond or more on every hook request (several under load, on a
machine with a large table), in the server's event loop; it stays as the fallback where
netlink is refused (a sandbox without it, a kernel without ``inet_diag``) or finds nothing.

Where netlink answers, its answer is checked before it is believed: the same connection
(addresses and ports as asked), a full socket. A ``TIME_WAIT`` entry (a connection already
closed) or a half-open one carries no owner and reads as uid 0, root: neither source's such
entry is taken for an owner.
"""

from __future__ import annotations

import socket
import struct
import sys

__all__ = ["peer_uid"]

_SOCK_DIAG_BY_FAMILY = 20
_NLMSG_ERROR = 2
_NLM_F_REQUEST = 1
_NETLINK_SOCK_DIAG = 4
_NO_COOKIE = 0xFFFFFFFF
_ALL_STATES = 0xFFFFFFFF
_OWNERLESS_STATES = frozenset({6, 12})  # TCP_TIME_WAIT, TCP_NEW_SYN_RECV
_HEADER = struct.Struct("=IHHII")  # nlmsghdr: length, type, flags, sequence, port id
_REQUEST = struct.Struct("=BBBBI")  # inet_diag_req_v2 up to its socket id
_ID = struct.Struct("!HH16s16s")  # inet_diag_sockid: ports and addresses, network order
_ID_TAIL = struct.Struct("=III")  # interface, cookie (two words)
_MESSAGE = struct.Struct("=BB2x")  # inet_diag_msg up to its socket id: family, state
_OWNER = struct.Struct("=12xII")  # after the socket id: expires, queues, then uid and inode
_MAPPED = b"\0" * 10 + b"\xff\xff"
_TIMEOUT = 0.5


def peer_uid(client: tuple[str, int], server: tuple[str, int]) -> int | None:
    """The uid that owns the client end of the TCP connection from ``client`` to ``server``
    (addresses as the server's socket reports them); None when it cannot be told (not
    Linux, not found, another namespace)."""
    forms = _forms(client, server)
    if not forms:
        return None
    try:
        if not hasattr(socket, "AF_NETLINK"):
            raise OSError("no netlink here")
        for form in forms:
            uid = _ask_kernel(*form)
            if uid is not None:
                return uid
    except OSError:
        pass
    return _from_proc(client, server)


def _packed(host: str) -> tuple[int, bytes] | None:
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            return family, socket.inet_pton(family, host)
        except (OSError, ValueError):
            continue
    return None


def _forms(
    client: tuple[str, int], server: tuple[str, int]
) -> list[tuple[int, bytes, int, bytes, int]]:
    """``(family, client address, client port, server address, server port)`` to ask for:
    an IPv4 connection as IPv4 and as IPv4-mapped IPv6 (a dual-stack server reports the one,
    the client's socket may be the other)."""
    ours, theirs = _packed(server[0]), _packed(client[0])
    if ours is None or theirs is None:
        return []
    v4 = [_as_v4(a) for a in (theirs, ours)]
    if v4[0] is not None and v4[1] is not None:
        return [
            (socket.AF_INET, v4[0], client[1], v4[1], server[1]),
            (socket.AF_INET6, _MAPPED + v4[0], client[1], _MAPPED + v4[1], server[1]),
        ]
    if theirs[0] == ours[0] == socket.AF_INET6:
        return [(socket.AF_INET6, theirs[1], client[1], ours[1], server[1])]
    return []


def _as_v4(address: tuple[int, bytes]) -> bytes | None:
    family, packed = address
    if family == socket.AF_INET:
        return packed
    return packed[12:] if packed.startswith(_MAPPED) else None


def _ask_kernel(family: int, local: bytes, lport: int, remote: bytes, rport: int) -> int | None:
    """One sock_diag lookup of the socket bound to ``local:lport`` and connected to
    ``remote:rport``: its owner's uid, None when the kernel has no such full socket."""
    wanted = _ID.pack(lport, rport, local.ljust(16, b"\0"), remote.ljust(16, b"\0"))
    request = (
        _REQUEST.pack(family, socket.IPPROTO_TCP, 0, 0, _ALL_STATES)
        + wanted
        + _ID_TAIL.pack(0, _NO_COOKIE, _NO_COOKIE)
    )
    sequence = 1
    message = _HEADER.pack(_HEADER.size + len(request), _SOCK_DIAG_BY_FAMILY,
                           _NLM_F_REQUEST, sequence, 0) + request  # fmt: skip
    with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_SOCK_DIAG) as link:
        link.settimeout(_TIMEOUT)
        link.sendto(message, (0, 0))
        answer = link.recv(8192)
    if len(answer) < _HEADER.size:
        return None
    length, kind, _flags, seq, _port = _HEADER.unpack_from(answer)
    if seq != sequence or kind == _NLMSG_ERROR:
        return None  # ENOENT: no such connection here
    body = _HEADER.size
    end = body + _MESSAGE.size + _ID.size + _ID_TAIL.size + _OWNER.size
    if kind != _SOCK_DIAG_BY_FAMILY or length < end - body or len(answer) < end:
        return None
    got_family, state = _MESSAGE.unpack_from(answer, body)
    got = answer[body + _MESSAGE.size : body + _MESSAGE.size + _ID.size]
    if got_family != family or got != wanted or state in _OWNERLESS_STATES:
        return None
    uid, _inode = _OWNER.unpack_from(answer, body + _MESSAGE.size + _ID.size + _ID_TAIL.size)
    return int(uid)


# -- /proc/net/tcp, where netlink is refused -----------------------------------------------------


def _proc_address(host: str, port: int) -> list[str]:
    """How ``/proc/net/tcp{,6}`` spells ``host:port`` (hex, in host byte order per word)."""
    import ipaddress

    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return []
    forms = []
    if ip.version == 6 and ip.ipv4_mapped is not None:
        # A dual-stack server's IPv4 client: its socket is in the IPv4 table, or in the IPv6
        # one as mapped.
        ip = ip.ipv4_mapped
    if ip.version == 4:
        packed = ip.packed[::-1] if sys.byteorder == "little" else ip.packed
        forms.append(f"{packed.hex().upper()}:{port:04X}")
        mapped = ipaddress.IPv6Address(f"::ffff:{ip}").packed
        forms.append(_v6(mapped, port))
    else:
        forms.append(_v6(ip.packed, port))
    return forms


def _v6(packed: bytes, port: int) -> str:
    step = -1 if sys.byteorder == "little" else 1
    words = [packed[i : i + 4][::step].hex().upper() for i in range(0, 16, 4)]
    return f"{''.join(words)}:{port:04X}"


def _from_proc(client: tuple[str, int], server: tuple[str, int]) -> int | None:
    ours = set(_proc_address(*server))
    theirs = set(_proc_address(*client))
    if not ours or not theirs:
        return None
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii", errors="replace") as handle:
                next(handle, None)
                for line in handle:
                    fields = line.split()
                    if len(fields) > 7 and fields[1] in theirs and fields[2] in ours:
                        if int(fields[3], 16) in _OWNERLESS_STATES:
                            continue
                        return int(fields[7])
        except (OSError, ValueError):
            continue
    return None
