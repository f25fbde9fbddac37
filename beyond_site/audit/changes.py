"""The "Admin changes" page: a workspace's change log (workspaces/changelog.py), for its auditors
and admins, newest first, filtered by kind of change, by who made it and by date.

Read-only like the other audit pages. Non-members get a 404, members a 403 (access.AUDIT): the
log names people and shows the workspace's settings, which members do not otherwise see. The page
costs the same few queries whatever its length: who acted is stored on the row itself.
"""
from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import render
from django.views.decorators.http import require_safe

from beyond_site.audit.filters import refuse_end_before_start
from beyond_site.workspaces.access import AUDIT, require_membership
from beyond_site.workspaces.models import WorkspaceEvent

PAGE_SIZE = 50
COMMAND = "-command"  # the "who" filter's value for changes made by a command (no user)

#: Kind of change -> (label, {action: what the page calls it}).
KINDS = {
    "members": ("Members and roles", {"member_added": "Member added", "member_role_changed": "Role changed",
                                      "member_removed": "Member removed", "member_left": "Member left"}),
    "invitations": ("Invitations", {"invitation_created": "Invitation created",
                                    "invitation_accepted": "Invitation accepted",
                                    "invitation_revoked": "Invitation withdrawn",
                                    "invitation_declined": "Invitation declined"}),
    "topology": ("Models per role", {"topology_changed": "Models per role changed"}),
    "frameworks": ("Frameworks", {"frameworks_changed": "Enabled frameworks changed",
                                  # Packs are site-wide: logged in each workspace that enabled one.
                                  "framework_pack_imported": "Framework pack imported",
                                  "framework_pack_updated": "Framework pack updated",
                                  "framework_pack_removed": "Framework pack removed"}),
    "budget": ("Budgets", {"budget_changed": "Budget changed"}),
    "settings": ("Workspace settings", {"workspace_created": "Workspace created",
                                        "workspace_renamed": "Workspace renamed",
                                        "workspace_slug_changed": "Web address changed",
                                        "research_default_changed": "Web research default changed",
                                        "export_settings_changed": "Deliverables' settings changed",
                                        "calibration_requirement_changed": "Calibration requirement changed"}),
    "content": ("Memories, files, conversations", {"memory_added": "Memory added", "memory_edited": "Memory edited",
                                                   "memory_deleted": "Memory deleted",
                                                   "document_added": "File added", "document_deleted": "File deleted",
                                                   "conversation_renamed": "Conversation renamed",
                                                   "conversation_deleted": "Conversation deleted",
                                                   "document_marked_final": "Document marked final",
                                                   "document_reopened": "Document reopened as a draft"}),
    "tasks": ("Saved tasks", {"saved_task_added": "Saved task added", "saved_task_edited": "Saved task edited",
                              "saved_task_deleted": "Saved task deleted",
                              "saved_task_promoted": "Saved task moved into the library"}),
}
#: Joining by invitation is also a member added.
ALSO_OF_KIND = {"members": ["invitation_accepted"]}
ACTION_LABELS = {action: label for _, actions in KINDS.values() for action, label in actions.items()}

#: Budget limits by the settings page's names for them.
FIELD_LABELS = {"paper": "paper size", "max_tokens_per_run": "tokens per run", "max_cost_per_run": "cost per run (USD)",
                "max_runs_per_user_per_day": "runs per member in 24 hours",
                "max_runs_in_flight_per_user": "runs at once per member",
                "max_runs_in_flight_per_workspace": "runs at once in the workspace",
                # The calibration requirement's thresholds, stored as fractions of 1.
                "max_clean_flagged": "faithful drafts flagged, at most (fraction)",
                "max_unparseable": "verdicts unparseable, at most (fraction)",
                "min_caught": "planted violations caught, at least (fraction)"}


class ChangeFilterForm(forms.Form):
    kind = forms.ChoiceField(required=False, label="Kind of change")
    who = forms.ChoiceField(required=False, label="Who")
    date_from = forms.DateField(required=False, label="From", widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(required=False, label="to", widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, data, *, people):
        super().__init__(data)
        self.fields["kind"].choices = [("", "any"), *((key, label) for key, (label, _) in KINDS.items())]
        self.fields["who"].choices = [("", "anyone"), *((name, name) for name in people),
                                      (COMMAND, "a command on the server")]

    def clean(self):
        data = super().clean()
        refuse_end_before_start(self, data)
        return data


def filtered_changes(workspace, params):
    """(rows newest first, form): the filters in `params` that are valid narrow the rows; an invalid
    one is shown with its error and ignored, so that a bookmark still opens."""
    people = (WorkspaceEvent.objects.filter(workspace=workspace).exclude(actor_name="")
              .order_by("actor_name").values_list("actor_name", flat=True).distinct())
    form = ChangeFilterForm(params, people=list(people))
    form.is_valid()
    f = form.cleaned_data
    rows = WorkspaceEvent.objects.filter(workspace=workspace)
    if f.get("kind"):
        rows = rows.filter(action__in=[*KINDS[f["kind"]][1], *ALSO_OF_KIND.get(f["kind"], [])])
    if f.get("who") == COMMAND:
        rows = rows.filter(via=WorkspaceEvent.COMMAND)
    elif f.get("who"):
        rows = rows.filter(actor_name=f["who"])
    if f.get("date_from"):
        rows = rows.filter(at__date__gte=f["date_from"])
    if f.get("date_to"):
        rows = rows.filter(at__date__lte=f["date_to"])
    return rows.order_by("-seq"), form


def shown(value) -> str:
    """A stored value in a few plain words (the template escapes it)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):
        return ", ".join(shown(v) for v in value) or "none"
    if isinstance(value, dict):
        return ", ".join(f"{FIELD_LABELS.get(k, k)}: {shown(v)}" for k, v in sorted(value.items())) or "none"
    return str(value)


def _flat(value, prefix: str = "") -> dict:
    """{"executor.model": "x", ...} for nested objects, so that only what changed is shown."""
    if isinstance(value, dict):
        out = {}
        for key, inner in value.items():
            label = FIELD_LABELS.get(key, key)
            out.update(_flat(inner, f"{prefix}{label}.") if isinstance(inner, dict) else {f"{prefix}{label}": inner})
        return out
    return {prefix.rstrip("."): value}


def _cell(value) -> str:
    """A side of a before -> after line; empty for none (the page says "(none)")."""
    return "" if value is None else shown(value)


#: What a settings object's absence and presence are called: the topology and the budget fall back
#: to the server's; an imported framework pack is simply there or not.
SIDES = ("server default", "set")
PACK_SIDES = ("none", "imported")
TASK_SIDES = ("none", "saved")
SIDES_OF = {"framework_pack_imported": PACK_SIDES, "framework_pack_removed": PACK_SIDES,
            "saved_task_added": TASK_SIDES, "saved_task_deleted": TASK_SIDES}


def differences(before, after, sides: tuple[str, str] = SIDES) -> list[tuple[str, str, str]]:
    """(what, before, after) lines: one per changed field of an object, one for a plain value."""
    if isinstance(before, dict) or isinstance(after, dict):
        old, new = _flat(before or {}), _flat(after or {})
        lines = [(key, _cell(old.get(key)), _cell(new.get(key)))
                 for key in sorted(set(old) | set(new)) if old.get(key) != new.get(key)]
        if before is None or after is None:  # e.g. the topology from or back to the server default
            absent, present = sides
            lines.insert(0, ("", absent if before is None else present, absent if after is None else present))
        return lines
    if before is None and after is None:
        return []
    return [("", _cell(before), _cell(after))]


def change_rows(rows) -> list[dict]:
    return [{
        "row": row,
        "what": ACTION_LABELS.get(row.action, row.action.replace("_", " ")),
        "who": row.actor_name or "a command on the server",
        "by_command": row.via == WorkspaceEvent.COMMAND,
        "through_admin": row.via == WorkspaceEvent.ADMIN_SITE,
        "details": [(key.replace("_", " "), shown(value)) for key, value in sorted((row.detail or {}).items())],
        "lines": differences(row.before, row.after, SIDES_OF.get(row.action, SIDES)),
        "iso": row.at.isoformat(timespec="microseconds"),
    } for row in rows]


@require_safe
@login_required
def change_list(request, slug: str):
    membership = require_membership(request, slug, AUDIT)
    rows, form = filtered_changes(membership.workspace, request.GET)
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "audit/changes.html", {
        "workspace": membership.workspace, "membership": membership, "form": form, "page": page,
        "rows": change_rows(page.object_list),
    })
