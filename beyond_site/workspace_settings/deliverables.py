"""The settings page's Deliverables section: the paper size of the DOCX and PDF exports, the
classification printed in every footer, and the organisation named on the title page. Changes go
through workspaces.export_settings, which logs them."""
from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from beyond_site.workspaces import access
from beyond_site.workspaces.export_settings import (CLASSIFICATION_CHARS, ORGANISATION_CHARS, PAPERS,
                                                    set_export_settings)


class DeliverablesForm(forms.Form):
    paper = forms.ChoiceField(choices=list(PAPERS.items()), label="Paper size",
                              help_text="Of the Word and PDF exports.")
    classification = forms.CharField(required=False, max_length=CLASSIFICATION_CHARS, label="Classification",
                                     help_text="Printed in every page's footer, e.g. Internal or Confidential; "
                                               "empty for none.")
    organisation = forms.CharField(required=False, max_length=ORGANISATION_CHARS, label="Organisation",
                                   help_text="Named on the title page; empty for the workspace's name.")

    @classmethod
    def for_workspace(cls, workspace) -> DeliverablesForm:
        return cls(initial={"paper": workspace.export_paper, "classification": workspace.export_classification,
                            "organisation": workspace.export_organisation}, auto_id="id_deliverables_%s")


@login_required
@require_POST
def deliverables(request, slug):
    membership = access.require_membership(request, slug, access.ADMIN)
    form = DeliverablesForm(request.POST, auto_id="id_deliverables_%s")
    url = reverse("workspace_settings:settings", args=[slug]) + "#deliverables"
    if not form.is_valid():
        messages.error(request, "Deliverables not saved: " + " ".join(e for errors in form.errors.values() for e in errors))
        return redirect(url)
    try:
        set_export_settings(membership.workspace, user=request.user, **form.cleaned_data)
    except ValueError as exc:
        messages.error(request, f"Deliverables not saved: {exc}.")
    else:
        messages.success(request, "Deliverables saved: the next export follows them.")
    return redirect(url)
