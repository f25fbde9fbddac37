"""A person's API tokens page (docs/api.md, "Tokens"): make one (shown once), see them all with
their last use, revoke one at once. Each person sees and revokes only their own: another's token is
a 404, like one that does not exist."""
from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from beyond_site.workspaces import tokens
from beyond_site.workspaces.access import workspaces_for
from beyond_site.workspaces.models import ApiToken


#: The session key a new token waits under until the page shows it.
SHOW_ONCE = "beyond_new_api_token"


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="What uses it, to tell it apart: “GRC sync”, “CI export”.")
    days = forms.IntegerField(min_value=tokens.MIN_DAYS, max_value=tokens.MAX_DAYS, initial=90,
                              label="Expires after (days)")
    read_only = forms.BooleanField(required=False, label="Read-only (reads and downloads; starts and changes nothing)")
    workspaces = forms.ModelMultipleChoiceField(queryset=None, required=False,
                                                widget=forms.CheckboxSelectMultiple,
                                                label="Limited to these workspaces (none ticked: all of yours)")

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["workspaces"].queryset = workspaces_for(user)


def state_of(row: ApiToken, now) -> str:
    if row.revoked_at is not None:
        return "revoked"
    if row.expires_at <= now:
        return "expired"
    return "active"


def _page(request, form: TokenForm, *, made: str | None = None, status: int = 200):
    now = timezone.now()
    rows = ApiToken.objects.filter(user=request.user).prefetch_related("workspaces")
    response = render(request, "accounts/tokens.html",
                      {"form": form, "made": made, "tokens": [(row, state_of(row, now)) for row in rows]},
                      status=status)
    return response


@never_cache  # the page that shows a new token once is never kept by a browser or a proxy
@login_required
@require_http_methods(["GET", "POST"])
def tokens_page(request):
    if request.method == "POST":
        form = TokenForm(request.POST, user=request.user)
        if form.is_valid():
            try:
                _, secret = tokens.create_token(request.user, form.cleaned_data["name"], days=form.cleaned_data["days"],
                                                read_only=form.cleaned_data["read_only"],
                                                workspaces=list(form.cleaned_data["workspaces"]))
            except tokens.TokenRefused as exc:
                form.add_error(None, str(exc))
            else:
                # Post, redirect, get: a reload never makes a second token. The secret waits in the
                # session for the one page that shows it, and leaves it there.
                request.session[SHOW_ONCE] = secret
                return redirect("api_tokens")
        return _page(request, form, status=400)
    return _page(request, TokenForm(user=request.user), made=request.session.pop(SHOW_ONCE, None))


@login_required
@require_POST
def revoke(request, token_id: int):
    row = ApiToken.objects.filter(user=request.user, pk=token_id).first()
    if row is None:
        raise Http404("No such token of yours")
    tokens.revoke_token(row, request.user)
    messages.success(request, f"Token “{row.name}” ({row.prefix}…) is revoked: it no longer works.")
    return redirect("api_tokens")
