"""How a workspace is set up: its creation and name, its models per role, enabled frameworks,
research default, budget and calibration requirement. Every change is logged in the change log (changelog.py)."""
from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.conf import settings
from django.db import transaction
from django.db.backends.base.operations import BaseDatabaseOperations
from django.utils.text import slugify

from pipeline.topology import ROLES, Topology, TopologyError, parse_shorthand, parse_topology
from beyond_site.lib.endpoints import endpoint_refusal
from beyond_site.workspaces.changelog import record_change
from beyond_site.workspaces.frameworks import canonical_keys
from beyond_site.workspaces.models import Membership, Workspace, WorkspaceBudget


def create_workspace(slug: str, name: str | None = None, user=None) -> tuple[Workspace, bool]:
    """The workspace `slug`, made (and logged) if it does not exist yet (the commands' way)."""
    with transaction.atomic():
        workspace, created = Workspace.objects.get_or_create(
            slug=slug, defaults={"name": name or slug.replace("-", " ").title()})
        if created:
            record_change(workspace, user, "workspace_created", after={"name": workspace.name, "slug": slug})
    return workspace, created


@transaction.atomic
def rename_workspace(workspace: Workspace, name: str, user=None) -> Workspace:
    """Give the workspace another display name (logged); ValueError for an empty one."""
    name = " ".join((name or "").split())[:200]
    if not name:
        raise ValueError("Give the workspace a name.")
    workspace = Workspace.objects.select_for_update().get(pk=workspace.pk)
    if name != workspace.name:
        record_change(workspace, user, "workspace_renamed", before=workspace.name, after=name)
        workspace.name = name
        workspace.save(update_fields=["name"])
    return workspace


#: How many numbered addresses ("acme-2" .. ) are tried for a name whose own address is taken.
DERIVED_SLUG_TRIES = 50


def _free_slug(base: str) -> str:
    """`base`, or the first of base-2, base-3, ... that no workspace has (each within 60 characters)."""
    taken = set(Workspace.objects.filter(slug__startswith=base[:50]).values_list("slug", flat=True))
    for n in range(1, DERIVED_SLUG_TRIES + 1):
        suffix = "" if n == 1 else f"-{n}"
        candidate = base[:60 - len(suffix)].strip("-") + suffix
        if candidate not in taken:
            return candidate
    raise ValueError(f"The address {base} and its numbered variants are taken: choose an address.")


def new_workspace(name: str, slug: str = "", *, user) -> Workspace:
    """A workspace made in the app (by a user with the site's staff flag): its maker is its first
    admin, and the change log says who made it. An address typed in is used as it is (ValueError if
    taken); one made from the name gets a number when the name's own is taken ("acme-2"), since the
    person chose no address. ValueError, changing nothing, for an empty name or a malformed or taken
    typed address."""
    name = " ".join((name or "").split())[:200]
    if not name:
        raise ValueError("Give the workspace a name.")
    typed = bool((slug or "").strip())
    slug = slugify(slug or name)[:60].strip("-")
    if not slug:
        raise ValueError("Choose a web address with letters or digits (e.g. acme-clinics).")
    with transaction.atomic():
        if not typed:
            slug = _free_slug(slug)
        elif Workspace.objects.filter(slug=slug).exists():
            raise ValueError(f"The address {slug} is taken: choose another.")
        workspace = Workspace.objects.create(slug=slug, name=name)
        Membership.objects.create(user=user, workspace=workspace, role=Membership.ADMIN)
        record_change(workspace, user, "workspace_created", after={"name": name, "slug": slug}, admin=user.get_username())
    return workspace


def _locked_workspace(workspace: Workspace) -> Workspace:
    """The workspace re-read under a lock on its row (call inside a transaction): the value logged
    as "before" is the one this change replaces, even when two admins save at once."""
    return Workspace.objects.select_for_update().get(pk=workspace.pk)


def _set_field(workspace: Workspace, field: str, value, user, action: str) -> None:
    with transaction.atomic():
        locked = _locked_workspace(workspace)
        before = getattr(locked, field)
        if value != before:
            record_change(locked, user, action, before=before, after=value)
            setattr(locked, field, value)
            locked.save(update_fields=[field])
    setattr(workspace, field, value)


def set_research_default(workspace: Workspace, on: bool, user=None) -> bool:
    """Whether new conversations start with web research on (logged like every admin change)."""
    on = bool(on)
    _set_field(workspace, "research_default", on, user, "research_default_changed")
    return on


CALIBRATION_BOUNDS = ("max_clean_flagged", "max_unparseable", "min_caught")


def set_calibration_requirement(workspace: Workspace, bounds: dict | None, user=None) -> dict | None:
    """Require a calibration of the workspace's runs' verifiers (docs/calibration.md), or none
    (None). `bounds` holds rates as fractions from 0 to 1, None for no bound on one; ValueError on
    anything else, leaving the workspace as it was. Logged like every admin change."""
    value = None
    if bounds is not None:
        unknown = set(bounds) - set(CALIBRATION_BOUNDS)
        if unknown:
            raise ValueError(f"unknown calibration thresholds: {', '.join(sorted(unknown))}")
        value = {}
        for name in CALIBRATION_BOUNDS:
            rate = bounds.get(name)
            if rate is not None:
                try:
                    rate = float(rate)
                except (TypeError, ValueError):
                    raise ValueError(f"{name}: give a rate between 0 and 1") from None
                if not 0 <= rate <= 1:
                    raise ValueError(f"{name}: give a rate between 0 and 1")
            value[name] = rate
    _set_field(workspace, "calibration_requirement", value, user, "calibration_requirement_changed")
    return value


def set_enabled_frameworks(workspace: Workspace, keys, user=None) -> list[str]:
    """Enable exactly the packs `keys` (shipped or imported), in display order; ValueError on an
    unknown key, leaving the workspace as it was."""
    enabled = canonical_keys(list(keys))
    _set_field(workspace, "enabled_frameworks", enabled, user, "frameworks_changed")
    return enabled


def set_topology(workspace: Workspace, topology, user=None, *, operator: bool = False) -> dict | None:
    """Store the workspace's model per role (validated with parse_topology; TopologyError leaves the
    workspace as it was), or None for "BEYOND_PROVIDER for every role".

    Workspace admins are not the server's operator: from them (operator=False) a scripted provider
    (it reads a file on the server) is refused, and so is an endpoint on this machine or its
    private network unless the operator configured it (beyond_site/lib/endpoints.py), so a
    workspace setting cannot make the server probe its own network. This check says so when the
    topology is saved; the guarded transport of its runs checks every connection again."""
    stored = None
    if topology is not None:
        parsed = parse_topology(topology)
        scripted = [role for role in ROLES if parsed.role(role).provider == "scripted"]
        if scripted and not operator:
            raise TopologyError(f"a scripted provider cannot be set here ({', '.join(scripted)})")
        for role in ROLES:
            url = parsed.role(role).base_url
            refused = endpoint_refusal(url) if url and not operator else None
            if refused:
                raise TopologyError(f"{role}: {url} is refused ({refused}): the server connects only to public "
                                    "endpoints and to those the operator lists in BEYOND_ALLOWED_BASE_URLS")
        stored = parsed.as_json()
    _set_field(workspace, "topology", stored, user, "topology_changed")
    return stored


#: The smallest value each budget limit may take (None clears a limit): a run needs a token and
#: a fraction of a cent at least; a cap on runs may be 0, which stops new runs altogether.
BUDGET_MINIMUMS = {"max_tokens_per_run": 1, "max_cost_per_run": Decimal("0.0001"), "max_runs_per_user_per_day": 0,
                   "max_runs_in_flight_per_user": 0, "max_runs_in_flight_per_workspace": 0}


BUDGET_MAXIMUM = 10**15


def _column_maximum(name: str):
    """The largest value the limit's column holds on every database Beyond runs on (a run cap
    past 2^31-1 is a DataError on PostgreSQL, a 500)."""
    field = WorkspaceBudget._meta.get_field(name)
    if field.get_internal_type() == "DecimalField":
        return Decimal(10) ** (field.max_digits - field.decimal_places) - Decimal(1).scaleb(-field.decimal_places)
    return BaseDatabaseOperations.integer_field_ranges[field.get_internal_type()][1]


#: The largest value each limit may take: its column's, and never past BUDGET_MAXIMUM.
BUDGET_MAXIMA = {name: min(BUDGET_MAXIMUM, _column_maximum(name)) for name in WorkspaceBudget.LIMITS}


def _budget_value(name: str, value):
    if value is None:
        return None
    try:
        number = Decimal(str(value)).quantize(Decimal("0.0001")) if name == "max_cost_per_run" else int(value)
    except (InvalidOperation, TypeError, ValueError):
        raise ValueError(f"{name.replace('_', ' ')}: {value!r} is not a number") from None
    if not BUDGET_MINIMUMS[name] <= number <= BUDGET_MAXIMA[name]:
        raise ValueError(f"{name.replace('_', ' ')}: at least {BUDGET_MINIMUMS[name]} and at most "
                         f"{BUDGET_MAXIMA[name]} (or no limit)")
    return number


def resolve_topology(workspace: Workspace, override: Topology | None = None) -> Topology:
    """The models a run of the workspace uses: the override (an operator's `--topology`), else the
    workspace's own topology, else BEYOND_PROVIDER for all roles."""
    if override is not None:
        return override
    if workspace.topology:
        return parse_topology(workspace.topology)
    return parse_shorthand(settings.BEYOND_PROVIDER)


@transaction.atomic
def set_budget(workspace: Workspace, limits: dict, user=None) -> WorkspaceBudget:
    """Change the limits named in `limits` ({limit: value, None for no limit}; the others stay as
    they are), logged in the workspace's history; ValueError leaves the budget as it was."""
    unknown = set(limits) - set(WorkspaceBudget.LIMITS)
    if unknown:
        raise ValueError(f"unknown budget limits: {', '.join(sorted(unknown))}")
    values = {name: _budget_value(name, value) for name, value in limits.items()}
    Workspace.objects.select_for_update().filter(pk=workspace.pk).first()
    budget = WorkspaceBudget.of(workspace)
    before = budget.limits()
    for name, value in values.items():
        setattr(budget, name, value)
    if budget.limits() != before:
        record_change(workspace, user, "budget_changed", before=before, after=budget.limits())
        budget.save()
    return budget
