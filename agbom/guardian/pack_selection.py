"""Which rule packs a Guardian started from the command line decides with (``--pack``).

``agbom serve`` and the standalone ``agbom hook`` share this, so both start with the same
protection and read their options the same way:

- no ``--pack``: the runtime baseline pack (:data:`DEFAULT_PACKS`), with the egress check at
  ``auto`` (a warning until ``--egress-allow`` lists a host; docs/rules-runtime.md says why);
- ``--pack none``: no runtime pack at all (what that costs: docs/rules-runtime.md);
- ``--pack NAME``, repeatable, replaces the default: a shipped pack by name, runtime
  (``baseline``) or component/flow (``flow-strict``), never a path into the installed
  package (:func:`agbom.rules.loader.shipped_packs`); ``default`` is the default component
  pack, always loaded unless ``--no-default-rules``;
- ``--pack FILE``: a runtime pack file of the operator's (a copy of ``baseline.yaml``).

Imports nothing heavy: the standalone hook resolves its options before the Guardian loads.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

DEFAULT_PACKS = ("baseline",)
NONE = "none"
EGRESS_MODES = ("auto", "deny", "warn")


class PackChoiceError(ValueError):
    """A usage error in the pack options; the message says which and why."""


def pack_settings(
    packs: Sequence[str],
    egress_allow: Sequence[str] = (),
    known_tools: Sequence[str] = (),
    egress: str | None = None,
) -> dict[str, Any]:
    """The :class:`~agbom.guardian.config.GuardianConfig` fields of ``--pack``,
    ``--egress-allow``, ``--known-tool`` and ``--egress``. A pack file is named by its
    absolute path, so that a decision process started later reads the same one."""
    from agbom.rules.loader import RULES_KIND, shipped_packs

    chosen = list(packs) if packs else list(DEFAULT_PACKS)
    if NONE in chosen and len(chosen) > 1:
        raise PackChoiceError("--pack none turns every pack off; give it alone")
    if egress is not None and egress not in EGRESS_MODES:
        raise PackChoiceError(f"--egress must be one of {', '.join(EGRESS_MODES)}")
    shipped = shipped_packs()
    runtime: list[str] = []
    rules: list[str] = []
    for name in chosen:
        if name == NONE or name == "default":
            continue
        kind = shipped[name][0] if name in shipped else None
        if kind == RULES_KIND:
            rules.append(name)
        elif kind is not None:
            runtime.append(name)
        elif Path(name).is_file():
            runtime.append(str(Path(name).absolute()))
        else:
            known = ", ".join(["none", *shipped])
            raise PackChoiceError(f"{name!r} is neither a shipped pack ({known}) nor a pack file")
    if not runtime and (egress_allow or known_tools):
        raise PackChoiceError(
            "--egress-allow and --known-tool are data for runtime packs; with --pack none "
            "(or only component packs) nothing reads them"
        )
    return {
        "runtime_packs": tuple(dict.fromkeys(runtime)),
        "rule_packs": tuple(dict.fromkeys(rules)),
        "egress_allow": tuple(egress_allow),
        "known_tools": tuple(known_tools),
        "egress": egress or "auto",
    }
