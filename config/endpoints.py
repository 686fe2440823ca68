"""Whether two service URLs name the same server, by where they lead rather than how they
are spelt: ``redis://localhost:6379/13`` and ``redis://127.0.0.1:6379/11`` are one Redis."""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

DEFAULT_PORTS = {"redis": 6379, "rediss": 6379}
_LOOPBACK = "loopback"


def _addresses(host: str) -> set[str]:
    """The addresses ``host`` resolves to, every loopback address counted as one (a server
    on the loopback is reached at 127.0.0.1, ::1 or localhost alike); the lower-cased name
    itself when it does not resolve."""
    host = host.lower().rstrip(".")  # a name with its root dot is the same name
    try:
        found = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except (OSError, UnicodeError):
        return {host}
    addresses = set()
    for address in found:
        try:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
        except ValueError:
            addresses.add(address)
            continue
        if ip.is_loopback or ip.is_unspecified:
            addresses.add(_LOOPBACK)
        else:
            mapped = getattr(ip, "ipv4_mapped", None)
            addresses.add(str(mapped or ip))
    return addresses


def server(url: str) -> tuple[frozenset[str], int] | None:
    """Where ``url`` leads: (its host's addresses, its port); None for a URL of another
    scheme or without a host."""
    parts = urlsplit(url)
    if parts.scheme not in DEFAULT_PORTS:
        return None
    try:
        port = parts.port or DEFAULT_PORTS[parts.scheme]
    except ValueError:
        return None
    return frozenset(_addresses(parts.hostname or "localhost")), port


def same_server(a: str, b: str) -> bool:
    """Whether URLs ``a`` and ``b`` lead to one server: the same port on a host address
    they share."""
    first, second = server(a), server(b)
    return bool(first and second and first[1] == second[1] and first[0] & second[0])
