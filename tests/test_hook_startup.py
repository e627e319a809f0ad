"""What the standalone hook's rule-pack compile relies on instead of importing the scan layer."""

from __future__ import annotations

import pytest

from agbom.rules import load_rules
from agbom.rules.matchers import MatchSpecError
from agbom.rules.signal_matchers import CONTENT_CHECKS, ContentIs
from agbom.scan.content import CHECKS


def test_the_content_check_names_are_the_scan_layers() -> None:
    # ``content:`` is compiled in every standalone hook process, so it names the checks from a
    # list of its own; a check added to (or renamed in) the scan layer must be added here too.
    assert CONTENT_CHECKS == CHECKS


def test_every_content_check_compiles_and_an_unknown_one_is_refused() -> None:
    assert ContentIs(list(CHECKS)).checks == frozenset(CHECKS)
    with pytest.raises(MatchSpecError, match="unknown content check 'no-such-check'"):
        ContentIs(["no-such-check"])


def test_the_default_pack_compiles() -> None:
    assert load_rules(None, with_default=True).rules
