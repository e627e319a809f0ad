"""The reviewers' web page (``/ui/`` of ``agbom serve``): the queue of pending skills, what
changed since the approved digest, approve/deny/revoke with a name and a reason, the fleet and
the decision log. See docs/reviewing.md.

Nothing is imported here: ``agbom reviewers`` needs only :mod:`agbom.review.reviewers`, and
the server imports :mod:`agbom.review.app` (starlette, Jinja2) when the page is on.
"""
