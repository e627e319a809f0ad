"""The detection corpus of issue 41 (``tests/scan/detect_corpus/``), scored through ``agbom
scan`` and the default pack by ``detect_corpus_score.py``:

- the development split, which the checks were written against, stays at recall 1.00 and no
  false alarm in every class;
- the held-out split, written before the second round of detector changes and never tuned
  to, keeps at least what it measured after them (docs/rules.md gives both tables). The
  floors are the measured figures, not targets: a change that loses a held-out skill fails
  here, one that gains lets the floor be raised.
"""

from __future__ import annotations

import pytest

from tests.scan import detect_corpus_score as scorer

# Held-out split, measured at the end of the second round (docs/rules.md).
HOLDOUT_MIN_DETECTED = 39  # of 40 malicious
HOLDOUT_MAX_FALSE_ALARMS = 1  # of 36 benign


def _scores(split: str) -> dict[str, scorer.ClassScore]:
    skills = scorer.skills_of(split)
    report = scorer.scan([scorer.CORPUS / split])
    scores, _ = scorer.score(report, skills, "medium")
    return scores


@pytest.fixture(scope="module")
def dev() -> dict[str, scorer.ClassScore]:
    return _scores("dev")


def test_every_class_of_the_dev_split_is_caught_without_false_alarms(
    dev: dict[str, scorer.ClassScore],
) -> None:
    missed = {c: sorted(set(s.malicious) - set(s.detected)) for c, s in dev.items()}
    flagged = {c: s.false_positives for c, s in dev.items()}
    assert not any(missed.values()), missed
    assert not any(flagged.values()), flagged
    assert sum(len(s.malicious) for s in dev.values()) == 139
    assert sum(len(s.benign) for s in dev.values()) == 119


def _totals(scores: dict[str, scorer.ClassScore]) -> tuple[int, int, int, int]:
    """Malicious, detected, benign and false alarms over every class of a split."""
    return (
        sum(len(s.malicious) for s in scores.values()),
        sum(len(s.detected) for s in scores.values()),
        sum(len(s.benign) for s in scores.values()),
        sum(len(s.false_positives) for s in scores.values()),
    )


def test_the_held_out_split_keeps_its_measured_floor() -> None:
    scores = _scores("holdout")
    malicious, detected, benign, false_alarms = _totals(scores)
    assert (malicious, benign) == (40, 36)
    assert detected >= HOLDOUT_MIN_DETECTED, detected
    assert false_alarms <= HOLDOUT_MAX_FALSE_ALARMS, false_alarms
    # every class has at least three malicious skills, and each class is caught at least once
    assert all(len(s.malicious) >= 3 for c, s in scores.items() if c != "general")
    assert all(s.detected for c, s in scores.items() if c != "general")


# Third held-out split (docs/rules.md, "Held-out split, third round"): written by an author who
# read neither the checks nor the other splits; scored on main before and after the third
# round, which did not move it. Floors, not targets.
HOLDOUT3_MIN_DETECTED = 38  # of 48 malicious
HOLDOUT3_MAX_FALSE_ALARMS = 6  # of 52 benign


def test_the_blind_held_out_split_keeps_its_measured_floor() -> None:
    scores = _scores("holdout3")
    malicious, detected, benign, false_alarms = _totals(scores)
    assert (malicious, benign) == (48, 52)
    assert detected >= HOLDOUT3_MIN_DETECTED, detected
    assert false_alarms <= HOLDOUT3_MAX_FALSE_ALARMS, false_alarms
    assert all(len(s.malicious) == 4 for c, s in scores.items() if c != "general")
