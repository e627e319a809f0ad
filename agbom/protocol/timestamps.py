"""RFC 3339 ``date-time`` values (§5.6), as ACS envelopes carry them in ``params.timestamp``.

``datetime.fromisoformat`` is not an RFC 3339 parser: on Python 3.11 it refuses the lower-case
``t`` and ``z`` the grammar allows (§5.6: "T" and "Z" may be lower case), and it accepts forms
the grammar does not (``+0100``, a week date, a space). JSON Schema's ``format: date-time``
check in fastjsonschema lets ``+0100`` through too.
So the Guardian reads timestamps here, by the grammar alone, and a value the grammar refuses
is an invalid request (-32600 ``invalid_timestamp``), never a clock-skew refusal.
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, date, datetime, timedelta

from agbom.protocol.errors import INVALID_REQUEST, AcsError

# full-date "T" partial-time time-offset; §5.6 (ABNF, case-insensitive "T" and "Z"). The
# ranges of month, hour, minute and second are the grammar's; a day valid for its month is
# checked after the match (§5.7). Groups: year, month, day, hour, minute, second, fraction,
# then Z, or the offset's sign, hours and minutes.
_DATE_TIME = re.compile(
    r"(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"
    r"[Tt]"
    r"([01]\d|2[0-3]):([0-5]\d):([0-5]\d|60)"
    r"(?:\.(\d+))?"
    r"(?:([Zz])|([+-])([01]\d|2[0-3]):([0-5]\d))",
    re.ASCII,
)
_EPOCH_DAY = date(1970, 1, 1).toordinal()

MAX_TIMESTAMP_CHARS = 128
"""Longest ``params.timestamp`` read: an RFC 3339 value is 20-35 characters; more is only a
fraction of a second with more digits than any clock has."""


def _invalid(why: str) -> AcsError:
    return AcsError(
        INVALID_REQUEST,
        "invalid_timestamp",
        f"params.timestamp is not an RFC 3339 date-time: {why}",
    )


_ERA_DAYS = 146_097
"""Days in 400 Gregorian years, after which the calendar repeats: the shift that lets year 0000,
which ``datetime`` and ``calendar.timegm`` cannot take, be counted like any other."""


def timestamp_microseconds(value: object) -> int:
    """The instant an RFC 3339 ``date-time`` names, in whole microseconds since the Unix epoch
    (exact: a float of seconds holds a microsecond only within about 285 years of 1970).

    Accepts exactly the §5.6 grammar: upper- or lower-case ``T`` and ``Z``, any number of
    fraction digits (read to the microsecond; the value bounded by
    :data:`MAX_TIMESTAMP_CHARS`), ``-00:00`` as UTC, years 0000 to 9999, and a leap second
    (``:60``, counted as the first instant of the next minute, as POSIX time does). Raises
    -32600 ``invalid_timestamp`` for anything else: a wrong shape, a day its month does not
    have, no offset.
    """
    if not isinstance(value, str):
        raise _invalid("not a string")
    if len(value) > MAX_TIMESTAMP_CHARS:
        raise _invalid(f"longer than {MAX_TIMESTAMP_CHARS} characters")
    return _read(value)


@functools.lru_cache(maxsize=1024)
def _read(value: str) -> int:
    # Cached: a request's timestamp is read when its envelope is checked and again by the
    # skew check (in another process, for a step the HTTP front checked ahead); the second
    # read is then a lookup. Refusals raise and are not cached.
    match = _DATE_TIME.fullmatch(value)
    if match is None:
        raise _invalid("expected YYYY-MM-DDTHH:MM:SS[.fraction] and Z or ±HH:MM")
    year_, month_, day_, hour, minute, second_, fraction_, _, sign, off_h, off_m = match.groups()
    year, second = int(year_), int(second_)
    # date() has no year 0000: years before 0400 are counted 400 years (one era, after
    # which the Gregorian calendar repeats) later, then moved back.
    shift = 400 if year < 400 else 0
    try:
        day = date(year + shift, int(month_), int(day_)).toordinal() - _EPOCH_DAY
    except ValueError:
        raise _invalid(f"{year_}-{month_} has no day {day_}") from None
    local = (day - shift // 400 * _ERA_DAYS) * 86_400 + int(hour) * 3600 + int(minute) * 60
    if sign is not None:
        offset = int(off_h) * 3600 + int(off_m) * 60
        local = local - offset if sign == "+" else local + offset
    if second == 60:
        return (local + 60) * 1_000_000  # the next minute's first instant; no fraction
    micro = int(fraction_[:6].ljust(6, "0")) if fraction_ else 0
    return (local + second) * 1_000_000 + micro


def timestamp_seconds(value: object) -> float:
    """:func:`timestamp_microseconds` in seconds (what the skew check compares with a clock)."""
    return timestamp_microseconds(value) / 1_000_000


def parse_rfc3339(value: object) -> datetime:
    """:func:`timestamp_microseconds` as an aware UTC ``datetime``; -32600
    ``invalid_timestamp`` also for an instant ``datetime`` cannot hold (before 0001 or after
    9999 in UTC)."""
    micro = timestamp_microseconds(value)
    try:
        return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=micro)
    except OverflowError as exc:
        raise _invalid("outside the years 0001 to 9999 in UTC") from exc
