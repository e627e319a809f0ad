"""The stages of the Guardian's decision path, one module each, in order.

:mod:`agbom.guardian` lists them; each module's docstring says what it guarantees to the
next. A stage takes the request's :class:`~agbom.guardian.stages.request.RequestContext` and
the parts of the Guardian it needs, never the Guardian itself.
"""
