"""The API's frame (docs/api.md): personal tokens as the only way in, the pages' own permission
rules, a rate limit per token, and every error as application/problem+json.

A request is its token's person: the token is checked (live, its person active), then each
operation asks for a membership exactly as the pages do (workspaces/access.py), narrowed by the
token: a token limited to some workspaces finds no other (404, as for a workspace one is not a
member of), and a read-only token is refused what would write (403).
"""
from __future__ import annotations

import logging
import math
import time

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import BadRequest, PermissionDenied, RequestDataTooBig, SuspiciousOperation
from django.http.multipartparser import MultiPartParserError
from django.http import Http404
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, Throttled, ValidationError
from ninja.security import HttpBearer
from ninja.throttling import BaseThrottle

from beyond_site.api.problems import CONTENT_TYPE, problem
from beyond_site.runs.models import Run
from beyond_site.workspaces import tokens
from beyond_site.workspaces.access import AUDIT, READ, require_membership
from beyond_site.workspaces.models import Membership

log = logging.getLogger("beyond.api")


class Token(HttpBearer):
    """`Authorization: Bearer <token>`; a session cookie never authenticates the API."""

    def authenticate(self, request, token):
        row = tokens.authenticate(token)
        if row is None:
            return None
        request.user = row.user
        request.api_token = row
        return row


class PerToken(BaseThrottle):
    """So many requests per period per token (BEYOND_API_RATE, e.g. "240/min"): 429 with
    Retry-After beyond it. A fixed window counted with the cache's atomic increment, so it holds
    across threads and, on the Redis cache, across processes; no state is kept on this object,
    which every request shares."""

    PERIODS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600, "hour": 3600,
               "d": 86400, "day": 86400}

    def rate(self) -> tuple[int, int]:
        count, _, period = settings.BEYOND_API_RATE.partition("/")
        return int(count), self.PERIODS[period.strip().lower()]

    def allow_request(self, request) -> bool:
        auth = getattr(request, "auth", None)
        if auth is None:
            return True  # no token, no operation: the 401 comes first
        limit, period = self.rate()
        window = int(time.time() // period)
        key = f"beyond:api-rate:{auth.digest[:32]}:{window}"
        cache.add(key, 0, period * 2)
        try:
            count = cache.incr(key)
        except ValueError:  # the key expired between the two calls
            cache.add(key, 1, period * 2)
            count = 1
        return count <= limit

    def wait(self) -> float:
        """Seconds until the current window ends."""
        _, period = self.rate()
        return period - time.time() % period


class BeyondAPI(NinjaAPI):
    def get_openapi_operation_id(self, operation) -> str:
        """An operation is named after its view (`start_run`, `run_events`): names a client keeps."""
        return operation.view_func.__name__

    def get_openapi_schema(self, *args, **kwargs):
        """The generated document, with the errors' media type as they are sent (problem+json)."""
        schema = super().get_openapi_schema(*args, **kwargs)
        for operations in schema["paths"].values():
            for operation in operations.values():
                for status, answer in operation.get("responses", {}).items():
                    if str(status).startswith(("4", "5")) and "application/json" in answer.get("content", {}):
                        answer["content"] = {CONTENT_TYPE: answer["content"]["application/json"]}
        return schema


api = BeyondAPI(title="Beyond API", version="1", urls_namespace="api", auth=Token(),
               throttle=[PerToken()], docs_url="/docs", openapi_url="/openapi.json",
               description="Start and follow document runs, read their trace, download their deliverables "
                           "(docs/api.md).")

WRITE_NEEDS = ("write", "admin")


def membership(request, slug: str, need: str = READ) -> Membership:
    """The caller's membership of workspace `slug`, as the pages ask for it, narrowed by the token."""
    row = getattr(request, "api_token", None)
    if row is not None and not tokens.allows_workspace(row, slug):
        raise Http404("No such workspace")
    found = require_membership(request, slug, need)
    if row is not None and row.read_only and need in WRITE_NEEDS:
        raise PermissionDenied("This token is read-only: it cannot change anything.")
    return found


def run_for(request, run_id: int, need: str = READ) -> tuple[Run, Membership]:
    """Run `run_id` and the caller's membership of its workspace; 404 for a run of a workspace the
    caller (or the token) does not reach, whether or not it exists."""
    slug = Run.objects.filter(pk=run_id).values_list("workspace__slug", flat=True).first()
    try:
        if slug is None:
            raise Http404
        found = membership(request, slug, need)
    except Http404:
        raise Http404("No such run") from None
    return Run.objects.select_related("workspace", "conversation").get(pk=run_id), found


# -- every error as problem+json --------------------------------------------------------------------

@api.exception_handler(AuthenticationError)
def _unauthenticated(request, exc):
    return problem(401, "A valid API token is needed: send it as Authorization: Bearer <token>.",
                   headers={"WWW-Authenticate": 'Bearer realm="beyond"'})


@api.exception_handler(Throttled)
def _throttled(request, exc):
    wait = max(1, math.ceil(exc.wait or 1))
    return problem(429, f"Too many requests with this token: try again in {wait} s.",
                   headers={"Retry-After": str(wait)})


@api.exception_handler(ValidationError)
def _invalid(request, exc):
    details = [f"{'.'.join(str(p) for p in e.get('loc', []))}: {e.get('msg', '')}" for e in exc.errors[:10]]
    return problem(400, "The request does not validate: " + "; ".join(details), errors=details)


@api.exception_handler(Http404)
def _not_found(request, exc):
    return problem(404, str(exc) or "Not found.")


@api.exception_handler(PermissionDenied)
def _forbidden(request, exc):
    return problem(403, str(exc) or "Your role cannot do this here.")


@api.exception_handler(RequestDataTooBig)
def _too_large(request, exc):
    return problem(413, "Too large: a request's data (other than its files) may carry at most "
                        f"{settings.DATA_UPLOAD_MAX_MEMORY_SIZE // 1024} KB.")


@api.exception_handler(SuspiciousOperation)
@api.exception_handler(BadRequest)
@api.exception_handler(MultiPartParserError)
def _unreadable(request, exc):
    return problem(400, f"The request cannot be read: {exc}" if str(exc) else "The request cannot be read.")


@api.exception_handler(HttpError)
def _http_error(request, exc):
    return problem(exc.status_code, str(exc.message))


@api.exception_handler(Exception)
def _crash(request, exc):
    log.exception("API request %s %s failed", request.method, request.path)
    return problem(500, f"The server failed to answer ({type(exc).__name__}); nothing was changed by a failed read.")


__all__ = ["api", "membership", "run_for", "AUDIT", "READ"]
