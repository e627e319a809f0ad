"""The review page under ``/ui/``: server-rendered HTML (Jinja2, autoescaped), one stylesheet
and one small script served from ``/ui/static`` under content-hashed names, no third-party
request of any kind.

Every response carries a strict Content-Security-Policy; templates hold no inline script or
style, and every agent-controlled string goes through autoescaping. Decisions go through
:meth:`Store.set_status`, the method ``agbom skills approve|deny|revoke`` uses, with the
reviewer's name as the actor and ``ui`` as the source, so the history says who and why.

This module is the mount and the skills review: sign-in, sessions, the guard every route
runs behind, the review queue, a skill's page and its decision, the decision log and an
entry's explanation. The server queue and the fleet's pages are :mod:`.fleet_routes`,
mounted here behind the same guard; what every route shares (headers, templates, form
reading, :class:`.web.BadInput`) is :mod:`.web`.
"""

from __future__ import annotations

import asyncio
import hmac
import re
import secrets
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route

from agbom.review import queries
from agbom.review.auth import (
    LOGIN_COOKIE,
    SESSION_COOKIE,
    ReviewSession,
    Sessions,
    cross_site,
)
from agbom.review.fleet_routes import fleet_routes
from agbom.review.reviewers import Reviewer, ReviewerDirectory
from agbom.review.secret import SecretSource
from agbom.review.web import (
    BadInput,
    PageKit,
    Static,
    environment,
    finish,
    query,
    read_form,
)
from agbom.store.interface import (
    MAX_ACTOR,
    MAX_REASON,
    MAX_SKILL_ID,
    Digest,
    SkillStatus,
    Store,
    StoreError,
    parse_timestamp,
    utc_now,
)

ACTIONS = {
    "approve": SkillStatus.APPROVED,
    "deny": SkillStatus.DENIED,
    "revoke": SkillStatus.REVOKED,
}
_DURATION = re.compile(r"(\d{1,6})([smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_HEADER_NAME = re.compile(r"[A-Za-z0-9-]{1,64}")


@dataclass
class ReviewConfig:
    """How ``agbom serve`` runs the review page (``--reviewers-file``, ``--reviewer-header``,
    ``--ui-secret-file``; without a secret file, sessions are signed with a key of this
    process only)."""

    reviewers_file: Path
    identity_header: str | None = None
    secret_file: Path | None = None
    rules_dir: Path | None = None
    with_default_rules: bool = True
    allowed_origins: frozenset[str] = field(default_factory=frozenset)
    osv_path: Path | None = None  # serve --osv: the skill page's findings include advisories
    vex_paths: tuple[Path, ...] = ()  # serve --vex: statements that suppress those findings
    skill_signers_path: Path | None = None  # serve --skill-signers: who signed, and whether
    sigstore_trust_root_path: Path | None = None  # serve --sigstore-trust-root
    # serve --osv's loaded export, shared with GET /v1/fleet/advisories (one copy in memory);
    # None: the page loads its own from osv_path
    advisory_files: Any = None

    def __post_init__(self) -> None:
        if self.identity_header is not None:
            if not _HEADER_NAME.fullmatch(self.identity_header):
                raise ValueError("the reviewer header must be an HTTP header name")
            self.identity_header = self.identity_header.lower()


def parse_expiry(text: str) -> datetime:
    """``30d``/``12h``/``2w`` from now, or an ISO 8601 date-time; never in the past."""
    now = utc_now()
    match = _DURATION.fullmatch(text.strip())
    try:
        if match:
            moment = now + timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
        else:
            moment = parse_timestamp(text, what="expiry")
    except (StoreError, OverflowError):
        raise BadInput(400, "expiry must be a duration (30d, 12h, 2w) or an ISO 8601 date-time")
    if moment <= now:
        raise BadInput(400, "the expiry is in the past")
    return moment


def _list_field(text: str, what: str) -> list[str]:
    items = [i.strip() for i in re.split(r"[,\n]", text) if i.strip()]
    if len(items) > 64:
        raise BadInput(400, f"at most 64 {what}")
    return items


def _signer_field(text: str) -> str | None:
    """The optional required signer of an approval (``--require-signer`` on the page)."""
    from agbom.store._shared import check_signer

    try:
        return check_signer(text.strip() or None)
    except StoreError as exc:
        raise BadInput(400, str(exc)) from None


REVIEWED_ELSEWHERE = "reviewed_elsewhere"
"""The decision form's checkbox: the approver read elsewhere what the page cannot show."""


def _confirmed(reason: str, unseen: list[Any], fields: dict[str, str]) -> str:
    """The reason an approval is recorded with. When the page cannot show the digest's
    SKILL.md or a script, the approver must have ticked :data:`REVIEWED_ELSEWHERE`, and the
    history says so, naming the files; otherwise the approval is refused."""
    paths = [u.path for u in unseen if u.blocking]
    if not paths:
        return reason
    if fields.get(REVIEWED_ELSEWHERE) != "yes":
        raise BadInput(
            400,
            f"the page cannot show {', '.join(paths[:5])}{' and more' if len(paths) > 5 else ''}"
            ": approve only after reading them elsewhere, and confirm so on the form",
        )
    named = ", ".join(paths)
    if len(named) > 512:
        named = named[:511] + "…"
    note = f" [reviewed elsewhere, not shown on the page: {named}]"
    return reason[: MAX_REASON - len(note)] + note


def root_redirect() -> BaseRoute:
    """``GET /`` of a server whose page is on: a redirect to the page (``/ui/``)."""

    def to_page(request: Request) -> Response:
        return RedirectResponse("/ui/", status_code=303)

    return Route("/", to_page, methods=["GET"])


def review_mount(store: Callable[[], Store], config: ReviewConfig) -> BaseRoute:
    """The ``/ui`` routes, reading and deciding through ``store()``."""
    env = environment()
    static = Static()
    directory = ReviewerDirectory(config.reviewers_file)
    source = SecretSource(config.secret_file)
    sessions = Sessions(directory, source)
    reported: list[str | None] = [None]
    rules_cache: list[Any] = []

    def rules() -> Any:
        if not rules_cache:
            from agbom.rules import load_rules

            try:
                rules_cache.append(
                    load_rules(config.rules_dir, with_default=config.with_default_rules)
                )
            except Exception:  # noqa: BLE001 - the page still shows the entry without rules
                rules_cache.append(None)
        return rules_cache[0]

    # serve --osv: loaded on the first page that needs it (an export takes seconds), again
    # when a file changes; a failed load shows no advisories rather than an error page.
    osv_files = config.advisory_files
    if osv_files is None and config.osv_path is not None:
        from agbom.advisories.fleet import AdvisoryFiles

        osv_files = AdvisoryFiles(config.osv_path, tuple(config.vex_paths))

    def advisories() -> Any:
        return None if osv_files is None else osv_files.current()

    def own_origin(request: Request) -> str:
        host = request.headers.get("host", "")
        return f"{request.url.scheme}://{host}".lower()

    def secure(request: Request) -> bool:
        return request.url.scheme == "https"

    def page(
        request: Request,
        template: str,
        *,
        http_status: int = 200,
        who: tuple[ReviewSession, Reviewer] | None = None,
        **values: Any,
    ) -> Response:
        body = env.get_template(template).render(
            static=static.urls,
            session=who[0] if who else None,
            reviewer=who[1] if who else None,
            **values,
        )
        return finish(
            Response(body, status_code=http_status, media_type="text/html; charset=utf-8")
        )

    def error(request: Request, status: int, message: str, who: Any = None) -> Response:
        return page(request, "error.html", http_status=status, who=who, message=message)

    def set_cookie(response: Response, request: Request, name: str, value: str, age: int) -> None:
        response.set_cookie(
            name,
            value,
            max_age=age,
            path="/ui",
            httponly=True,
            samesite="strict",
            secure=secure(request),
        )

    def keys_problem() -> None:
        """Say once on stderr why the secret file stopped working (it never holds a secret)."""
        if source.problem != reported[0]:
            reported[0] = source.problem
            if source.problem is not None:
                print(f"agbom: review page: {source.problem}; nobody can sign in", file=sys.stderr)

    def new_session(reviewer: Reviewer, *, via_proxy: bool) -> ReviewSession:
        session = sessions.create(reviewer, via_proxy=via_proxy)
        keys_problem()
        if session is None:
            raise BadInput(503, "sign-in is off: the server's ui secret file is unusable")
        return session

    def signed_in(request: Request) -> tuple[ReviewSession, Reviewer] | None:
        """The session (its ``cookie`` set when the answer must carry a new one), or None."""
        current = sessions.get(request.cookies.get(SESSION_COOKIE))
        keys_problem()
        if config.identity_header is not None:
            name = request.headers.get(config.identity_header)
            if name is not None:
                reviewer = directory.by_name(name.strip())
                if reviewer is None:
                    raise BadInput(403, "the name the proxy gave is not a reviewer here")
                if current is not None and current[0].via_proxy and current[1] == reviewer:
                    return current
                return new_session(reviewer, via_proxy=True), reviewer
        if current is not None and current[0].via_proxy:
            return None  # a proxy session is only good with the proxy's header
        return current

    def set_session_cookie(response: Response, request: Request, session: ReviewSession) -> None:
        if session.cookie is not None:
            age = max(0, session.expires - int(time.time()))
            set_cookie(response, request, SESSION_COOKIE, session.cookie, age)

    def refuse_cross_site(request: Request) -> None:
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw]
        why = cross_site(
            headers, own_origin=own_origin(request), allowed_origins=config.allowed_origins
        )
        if why is not None:
            raise BadInput(403, why)

    # Page work (store reads, a decision, rendering) runs on one thread of its own with a
    # store handle of its own, so a slow page never holds up the event loop that forwards
    # every decision; one thread keeps SQLite's one-connection-per-thread rule simple.
    pages = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agbom-review")
    handles: dict[str, Store] = {}
    current_base: list[Store] = []

    def reader() -> Store:
        """The page thread's own handle on the server's store."""
        handle = handles.get("store")
        if handle is None:
            handle = handles["store"] = current_base[0].reopen()
        return handle

    def guarded(
        handler: Callable[..., Response],
        *,
        post: bool = False,
        decide: bool = False,
        offload: bool = True,
        signs_out: bool = False,
    ) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            who: tuple[ReviewSession, Reviewer] | None = None
            try:
                if post:
                    refuse_cross_site(request)
                who = signed_in(request)
                if who is None:
                    if post:
                        raise BadInput(403, "sign in first")
                    return finish(RedirectResponse("/ui/login", status_code=303))
                fields: dict[str, str] = {}
                if post:
                    fields = await read_form(request)
                    if not sessions.csrf_matches(who[0], fields.get("csrf")):
                        raise BadInput(403, "the form's CSRF token is missing or wrong")
                if decide and not who[1].may_decide:
                    raise BadInput(403, f"{who[1].name} is a viewer and cannot decide")
                args = (request, who, fields) if post else (request, who)
                if offload:
                    if not current_base:
                        current_base.append(store())  # opened on the loop's thread
                    loop = asyncio.get_running_loop()
                    response = await loop.run_in_executor(pages, handler, *args)
                else:
                    response = handler(*args)
                if not signs_out:  # (the answer clears the cookie)
                    set_session_cookie(response, request, who[0])
                return response
            except BadInput as exc:
                return error(request, exc.status, str(exc), who)
            except StoreError as exc:
                return error(request, 400, str(exc), who)
            except Exception as exc:  # noqa: BLE001 - one line, never a traceback
                print(
                    f"agbom: review page: internal error: {type(exc).__name__}: {exc}",
                    file=sys.stderr,
                )
                return error(request, 500, "internal error (the server log says more)", who)

        return endpoint

    # -- sign-in --------------------------------------------------------------------------

    async def login_form(request: Request) -> Response:
        try:
            who = signed_in(request)
        except BadInput as exc:
            return error(request, exc.status, str(exc))
        if who is not None:
            response = finish(RedirectResponse("/ui/queue", status_code=303))
            set_session_cookie(response, request, who[0])
            return response
        nonce = request.cookies.get(LOGIN_COOKIE)
        if not nonce or len(nonce) > 128:
            nonce = secrets.token_urlsafe(32)
        token = sessions.login_token(nonce)
        keys_problem()
        if token is None:
            return error(request, 503, "sign-in is off: the server's ui secret file is unusable")
        response = page(request, "login.html", login_csrf=token, message=None)
        set_cookie(response, request, LOGIN_COOKIE, nonce, 900)
        return response

    async def login(request: Request) -> Response:
        try:
            refuse_cross_site(request)
            fields = await read_form(request)
            nonce = request.cookies.get(LOGIN_COOKIE)
            if not sessions.login_matches(nonce, fields.get("csrf")):
                raise BadInput(403, "the sign-in form expired: load it again")
            reviewer = directory.by_token(fields.get("token", "").strip())
            if reviewer is None:
                return page(
                    request,
                    "login.html",
                    http_status=401,
                    login_csrf=fields.get("csrf", ""),
                    message="that token is not a reviewer's token here",
                )
            session = new_session(reviewer, via_proxy=False)
            response = finish(RedirectResponse("/ui/queue", status_code=303))
            set_session_cookie(response, request, session)
            set_cookie(response, request, LOGIN_COOKIE, "", 0)
            return response
        except BadInput as exc:
            return error(request, exc.status, str(exc))

    def logout(request: Request, who: Any, fields: dict[str, str]) -> Response:
        # The cookie is all a session is, so signing out clears it here; a copy taken
        # earlier stays good until its idle or absolute expiry (docs/reviewing.md).
        response = finish(RedirectResponse("/ui/login", status_code=303))
        set_cookie(response, request, SESSION_COOKIE, "", 0)
        return response

    # -- pages ----------------------------------------------------------------------------

    async def home(request: Request) -> Response:
        return finish(RedirectResponse("/ui/queue", status_code=303))

    def queue_page(request: Request, who: Any) -> Response:
        status = query(request, "status", "pending")
        sort = query(request, "sort", "first_seen")
        order = query(request, "order", "desc")
        if status not in queries.QUEUE_STATUSES or sort not in queries.QUEUE_SORTS:
            raise BadInput(400, "unknown status or sort")
        if order not in ("asc", "desc"):
            raise BadInput(400, "order is asc or desc")
        text = query(request, "q")
        data = queries.queue(
            reader(), status=status, text=text, sort=sort, descending=order == "desc"
        )
        return page(
            request,
            "queue.html",
            who=who,
            queue=data,
            status=status,
            sort=sort,
            order=order,
            text=text,
            statuses=queries.QUEUE_STATUSES,
            sorts=queries.QUEUE_SORTS,
            limit=queries.MAX_ROWS,
        )

    def pair_from(skill_id: str, digest_text: str) -> tuple[str, Digest | None]:
        if not skill_id or len(skill_id) > MAX_SKILL_ID:
            raise BadInput(400, "a skill id of 1 to 512 characters is needed")
        digest = Digest.parse(digest_text) if digest_text else None
        return skill_id, digest

    def skill(request: Request, who: Any) -> Response:
        skill_id, digest = pair_from(query(request, "id"), query(request, "digest"))
        db = reader()
        data = queries.skill_page(db, skill_id, digest, rules(), advisories())
        if data is None:
            raise BadInput(404, "no such skill or digest in the store")
        shown = query(request, "done")
        done = shown if shown in ("approved", "denied", "revoked") else None
        following = queries.next_pending(db, (data.record.skill_id, data.record.digest))
        return page(
            request,
            "skill.html",
            who=who,
            p=data,
            done=done,
            next_pending=following,
            signature=signature_of(db, data.record),
        )

    def signature_of(db: Any, record: Any) -> Any:
        """Who signed the pair's carried definition, and whether it verifies now."""
        if config.skill_signers_path is None:
            return None
        from agbom.guardian.skill_trust import signers_of, stored_signature

        root = config.sigstore_trust_root_path
        trust = signers_of(str(config.skill_signers_path), None if root is None else str(root))
        if trust is None:
            return None
        return stored_signature(db, record.skill_id, record.digest, trust)

    def decide(request: Request, who: Any, fields: dict[str, str]) -> Response:
        action = fields.get("action", "")
        if action not in ACTIONS:
            raise BadInput(400, "the action is approve, deny or revoke")
        skill_id = queries.skill_id_from_hex(fields.get("skill_id_hex", ""))
        if skill_id is None:
            raise BadInput(400, "the form does not name a skill (skill_id_hex)")
        skill_id, digest = pair_from(skill_id, fields.get("digest", ""))
        if digest is None:
            raise BadInput(400, "the digest is missing")
        if not hmac.compare_digest(fields.get("pair_key", ""), queries.pair_key(skill_id, digest)):
            # The pair that came back is not the pair the page was rendered for: decide
            # nothing rather than another registration.
            raise BadInput(400, "the form's pair key does not match its skill and digest")
        reason = fields.get("reason", "").strip()
        if not reason:
            raise BadInput(400, "a decision needs a reason")
        if len(reason) > MAX_REASON:
            raise BadInput(400, f"the reason is longer than {MAX_REASON} characters")
        expires = fields.get("expires", "").strip()
        agents = _list_field(fields.get("agents", ""), "agent patterns")
        tenants = _list_field(fields.get("tenants", ""), "tenant patterns")
        capabilities = _list_field(fields.get("capabilities", ""), "capabilities")
        signer = _signer_field(fields.get("required_signer", ""))
        status = ACTIONS[action]
        if status is not SkillStatus.APPROVED and (
            expires or agents or tenants or capabilities or signer
        ):
            raise BadInput(
                400, "scopes, an expiry, capabilities and a required signer belong to an approval"
            )
        name = who[1].name
        assert len(name) <= MAX_ACTOR
        db = reader()
        current = db.get_skill(skill_id, digest)
        if current is None:
            raise BadInput(404, "no such skill or digest in the store")
        if action not in queries.TRANSITIONS.get(current.status, ()):
            # Someone decided it meanwhile, or a form was built by hand: nothing changes.
            raise BadInput(
                409,
                f"a {current.status} registration cannot be {ACTIONS[action]} from this page",
            )
        if status is SkillStatus.APPROVED:
            reason = _confirmed(reason, queries.cannot_show(db, current), fields)
        db.set_status(
            skill_id,
            digest,
            status,
            actor=name,
            reason=reason,
            expires_at=parse_expiry(expires) if expires else None,
            scope_agents=agents,
            scope_tenants=tenants,
            source="ui",
            capabilities=capabilities or None,
            required_signer=signer,
        )
        target = "/ui/skill?" + urlencode(
            {"id": skill_id, "digest": str(digest), "done": str(status)}
        )
        return finish(RedirectResponse(target, status_code=303))

    def decisions(request: Request, who: Any) -> Response:
        decision = query(request, "decision")
        if decision not in ("", "allow", "deny", "modify", "ask", "defer"):
            raise BadInput(400, "unknown decision")
        reason = query(request, "reason")
        agent_id = query(request, "agent")
        log = queries.decision_log(reader(), decision=decision, reason=reason, agent=agent_id)
        return page(
            request,
            "decisions.html",
            who=who,
            log=log,
            decision=decision,
            reason=reason,
            agent=agent_id,
            limit=queries.MAX_ROWS,
        )

    def explain(request: Request, who: Any) -> Response:
        session_id, entry_id = query(request, "session"), query(request, "entry")
        if not session_id or not entry_id:
            raise BadInput(400, "a session id and an entry id are needed")
        data = queries.explain(reader(), session_id, entry_id, rules())
        if data is None:
            raise BadInput(404, "no such chain entry")
        return page(request, "explain.html", who=who, x=data)

    async def static_file(request: Request) -> Response:
        found = static.files.get(request.path_params["name"])
        if found is None:
            return finish(Response("not found", status_code=404, media_type="text/plain"))
        data, media = found
        response = Response(data, media_type=media)
        response.headers["Cache-Control"] = "public, max-age=31536000, immutable"
        return finish(response)

    return Mount(
        "/ui",
        routes=[
            Route("/", home, methods=["GET"]),
            Route("/login", login_form, methods=["GET"]),
            Route("/login", login, methods=["POST"]),
            Route(
                "/logout",
                guarded(logout, post=True, offload=False, signs_out=True),
                methods=["POST"],
            ),
            Route("/queue", guarded(queue_page), methods=["GET"]),
            Route("/skill", guarded(skill), methods=["GET"]),
            Route("/skill/decide", guarded(decide, post=True, decide=True), methods=["POST"]),
            *(
                Route(
                    path,
                    guarded(handler, post=decides, decide=decides),
                    methods=["POST" if decides else "GET"],
                )
                for path, handler, decides in fleet_routes(PageKit(page, reader, advisories))
            ),
            Route("/decisions", guarded(decisions), methods=["GET"]),
            Route("/explain", guarded(explain), methods=["GET"]),
            Route("/static/{name}", static_file, methods=["GET"]),
        ],
    )
