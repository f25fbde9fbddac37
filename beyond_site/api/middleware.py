"""Every error under /api/ as application/problem+json, whoever answered it (docs/api.md, "Errors").

The API's own operations answer their errors as problems already (api/base.py). This catches what
answers before or around them: an unknown path (the URL resolver's 404), a method an operation does
not take (405), a refusal by a middleware (a NUL in a query string, a busy server), a crash.
"""
from __future__ import annotations

from asgiref.sync import iscoroutinefunction, markcoroutinefunction

from beyond_site.api.problems import CONTENT_TYPE, problem
from beyond_site.lib.bodies import API_PATHS

#: Headers of the original answer a client still needs from its problem.
KEPT_HEADERS = ("Allow", "Retry-After", "WWW-Authenticate")


def as_problem(request, response):
    if (response.status_code < 400 or not request.path.startswith(API_PATHS)
            or response.get("Content-Type", "").startswith(CONTENT_TYPE)):
        return response
    reason = getattr(response, "reason_phrase", "") or "Error"
    detail = {404: "No such address in the API.", 405: f"This address does not take {request.method}."}.get(
        response.status_code, f"{reason}.")
    if response.status_code == 400 and not getattr(response, "streaming", False) and response.content:
        detail = response.content.decode("utf-8", "replace")[:500]
    answer = problem(response.status_code, detail)
    for name in KEPT_HEADERS:
        if name in response:
            answer[name] = response[name]
    return answer


class ProblemMiddleware:
    async_capable = sync_capable = True

    def __init__(self, get_response):
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request):
        if iscoroutinefunction(self):
            return self._acall(request)
        return as_problem(request, self.get_response(request))

    async def _acall(self, request):
        return as_problem(request, await self.get_response(request))
