"""agbom: know and control what your AI agents are made of.

Kept import-free on purpose: ``agbom hook --server`` starts a process per tool call and
must not pay for the heavy layers it never uses.
"""

__version__ = "0.1.0"
