"""Analysis of code a skill ships or a tool call runs, read on a parse rather than as lines
of text: shell command lines and scripts (:mod:`agbom.analysis.shell`) and what their
commands do (:mod:`agbom.analysis.shell_risks`).

The lowest layer with the inventory: it imports no other agbom layer, so the scanner, the
Guardian and the hooks can all use it.
"""

from agbom.analysis.shell import DEFAULT_LIMITS, Analysis, Command, Flow, Limits, Word, analyse
from agbom.analysis.shell_risks import Assessment, Destination, Risk, assess, destinations, risks

__all__ = [
    "DEFAULT_LIMITS",
    "Analysis",
    "Assessment",
    "Command",
    "Destination",
    "Flow",
    "Limits",
    "Risk",
    "Word",
    "analyse",
    "assess",
    "destinations",
    "risks",
]
