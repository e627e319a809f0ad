"""The RFC 3339 §5.6 ``date-time`` reader of ``params.timestamp``, against the grammar.

Valid values are built from their parts (so the instant they name is known without parsing
anything), with every choice the grammar leaves open: "T" or "t", "Z", "z" or a numeric
offset, a fraction of any length, a leap second. Invalid ones are valid ones broken in one
place the grammar fixes. Every refusal must be -32600 ``invalid_timestamp``: a value the
skew check cannot read is never reported as clock skew.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from agbom.protocol import AcsError, parse_rfc3339, timestamp_seconds, validate_envelope
from tests.guardian.acs import new_session_id, request


@dataclass(frozen=True)
class Parts:
    year: int
    month: int
    day: int
    hour: int
    minute: int
    second: int
    fraction: str  # the digits after ".", or "" for none
    separator: str  # "T" or "t"
    offset: str  # "Z", "z" or "+HH:MM" / "-HH:MM"

    def text(self) -> str:
        dot = f".{self.fraction}" if self.fraction else ""
        return (
            f"{self.year:04d}-{self.month:02d}-{self.day:02d}{self.separator}"
            f"{self.hour:02d}:{self.minute:02d}:{self.second:02d}{dot}{self.offset}"
        )

    def seconds(self) -> float:
        """The instant, computed from the parts (a leap second is the next minute's start)."""
        offset = 0
        if self.offset not in ("Z", "z"):
            sign = -1 if self.offset[0] == "-" else 1
            offset = sign * (int(self.offset[1:3]) * 3600 + int(self.offset[4:6]) * 60)
        # Python's proleptic calendar repeats every 400 years; year 0000 is counted as 0400.
        era = 400 if self.year == 0 else 0
        naive = datetime(self.year + era, self.month, self.day, self.hour, self.minute)
        whole = (naive - datetime(1970, 1, 1)).total_seconds() - era * 365.2425 * 86400
        micro = 0 if self.second == 60 else int(self.fraction[:6].ljust(6, "0") or 0)
        return whole + self.second - offset + micro / 1e6


@st.composite
def valid_parts(draw: st.DrawFn) -> Parts:
    year = draw(st.integers(0, 9999))
    month = draw(st.integers(1, 12))
    days = calendar.monthrange(year + 400 if year < 400 else year, month)[1]
    offset = draw(
        st.one_of(
            st.sampled_from(["Z", "z", "+00:00", "-00:00"]),
            st.builds(
                lambda sign, h, m: f"{sign}{h:02d}:{m:02d}",
                st.sampled_from("+-"),
                st.integers(0, 23),
                st.integers(0, 59),
            ),
        )
    )
    return Parts(
        year=year,
        month=month,
        day=draw(st.integers(1, days)),
        hour=draw(st.integers(0, 23)),
        minute=draw(st.integers(0, 59)),
        second=draw(st.integers(0, 60)),
        fraction=draw(st.text("0123456789", max_size=20)),
        separator=draw(st.sampled_from("Tt")),
        offset=offset,
    )


def refused(value: object) -> AcsError:
    with pytest.raises(AcsError) as caught:
        timestamp_seconds(value)
    assert caught.value.code == -32600 and caught.value.reason == "invalid_timestamp"
    return caught.value


@given(valid_parts())
@example(Parts(2026, 12, 2, 8, 19, 0, "699", "T", "z"))  # the value
@example(Parts(2024, 2, 29, 23, 59, 60, "5", "t", "-00:00"))
@example(Parts(0, 1, 1, 0, 0, 0, "", "T", "Z"))
@example(Parts(9999, 12, 31, 23, 59, 59, "999999999", "T", "+23:59"))
def test_every_valid_date_time_is_read_as_the_instant_it_names(parts: Parts) -> None:
    assert timestamp_seconds(parts.text()) == pytest.approx(parts.seconds(), abs=1e-4)


@given(valid_parts())
def test_case_of_t_and_z_does_not_change_the_instant(parts: Parts) -> None:
    text = parts.text()
    assert timestamp_seconds(text.lower()) == timestamp_seconds(text.upper())


@given(valid_parts().filter(lambda p: 2 <= p.year <= 9998 and p.second < 60))
def test_the_datetime_form_agrees_with_python_where_python_can_read_it(parts: Parts) -> None:
    # fromisoformat (3.11) reads upper-case T/Z and at most 6 fraction digits.
    trimmed = Parts(**{**parts.__dict__, "fraction": parts.fraction[:6], "separator": "T"})
    text = trimmed.text().replace("z", "Z")
    assert parse_rfc3339(text) == datetime.fromisoformat(text).astimezone(UTC)


# One place the grammar fixes, broken: (what to replace, what with) on a valid value's text.
BREAKS = [
    lambda p: p.text()[: -len(p.offset)],  # no offset
    lambda p: p.text().replace(p.separator, " ", 1),  # a space for T (RFC 3339 §5.6 NOTE)
    lambda p: p.text().replace(p.separator, "x", 1),
    lambda p: p.text()[:-3] + p.text()[-2:] if p.offset not in ("Z", "z") else p.text() + "0",
    lambda p: p.text()[:2] + p.text()[4:],  # a two-digit year
    lambda p: f"{p.text()[:5]}13{p.text()[7:]}",  # month 13
    lambda p: f"{p.text()[:5]}00{p.text()[7:]}",  # month 00
    lambda p: f"{p.text()[:8]}32{p.text()[10:]}",  # day 32
    lambda p: f"{p.text()[:8]}00{p.text()[10:]}",  # day 00
    lambda p: f"{p.text()[:11]}24{p.text()[13:]}",  # hour 24
    lambda p: f"{p.text()[:14]}60{p.text()[16:]}",  # minute 60
    lambda p: f"{p.text()[:17]}61{p.text()[19:]}",  # second 61
    lambda p: f"{p.text()[:19]}.{p.offset}",  # a dot with no digits
    lambda p: p.text() + " ",
    lambda p: "\u0662" + p.text()[1:],  # ARABIC-INDIC DIGIT TWO: \d, but not DIGIT
    lambda p: p.text().replace("-", "/", 1),
]


@given(valid_parts(), st.integers(0, len(BREAKS) - 1))
def test_a_value_broken_where_the_grammar_is_fixed_is_invalid(parts: Parts, which: int) -> None:
    refused(BREAKS[which](parts))


@pytest.mark.parametrize(
    "value",
    [
        "2023-02-29T00:00:00Z",  # not a leap year
        "1900-02-29T00:00:00Z",  # a century, not a leap year
        "2026-04-31T00:00:00Z",
        "2026-12-02T08:19:00+0100",  # the schema format check (fastjsonschema) accepts it
        "2026-12-02T08:19:00+24:00",
        "2026-W49-3T08:19:00Z",
        "20261202T081900Z",
        "",
        "2026-12-02T08:19:00.699Z" + "0" * 200,
    ],
)
def test_values_outside_the_grammar(value: str) -> None:
    refused(value)


@pytest.mark.parametrize("value", [None, 1796199540, ["2026-12-02T08:19:00Z"]])
def test_a_timestamp_that_is_not_a_string_is_invalid(value: object) -> None:
    refused(value)


@given(st.text(max_size=60))
def test_any_text_is_read_or_refused_as_invalid_never_anything_else(text: str) -> None:
    try:
        timestamp_seconds(text)
    except AcsError as exc:
        assert exc.code == -32600 and exc.reason == "invalid_timestamp"


def test_parse_rfc3339_refuses_instants_datetime_cannot_hold() -> None:
    assert timestamp_seconds("0000-06-01T00:00:00Z") < timestamp_seconds("0001-01-01T00:00:00Z")
    with pytest.raises(AcsError) as caught:
        parse_rfc3339("0000-06-01T00:00:00Z")
    assert caught.value.reason == "invalid_timestamp"


def test_the_envelope_check_refuses_what_the_grammar_refuses() -> None:
    envelope = request("steps/userMessage", {}, session_id=new_session_id())
    envelope["params"]["timestamp"] = "2026-12-02T08:19:00+0100"  # the schema format passes it
    with pytest.raises(AcsError) as caught:
        validate_envelope(envelope)
    assert (caught.value.code, caught.value.reason) == (-32600, "invalid_timestamp")
    envelope["params"]["timestamp"] = "2026-12-02t08:19:00.699z"
    validate_envelope(envelope)
