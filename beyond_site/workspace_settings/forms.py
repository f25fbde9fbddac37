"""Forms of the workspace settings page (enabled frameworks, the model per role, members and
invitations) and of a new workspace.

No form takes an API key: keys come from the environment only. The topology form offers the
providers a web user may choose; `scripted` (a file read on the server) is not one of them.
"""
from __future__ import annotations

from django import forms
from pydantic import ValidationError

from beyond_site.workspaces.models import Membership
from beyond_site.workspaces.members import INVITATION_DAYS
from pipeline.providers.profiles import profile_choices
from pipeline.topology import DEFAULT_EFFORT, ROLES, RoleConfig, TopologyError, parse_topology

WEB_PROVIDERS = [("offline", "Offline (no model; canned text)"), ("openrouter", "OpenRouter"),
                 ("openai", "OpenAI-compatible endpoint")]
EFFORTS = [("high", "High"), ("medium", "Medium"), ("low", "Low")]
ROLE_FIELDS = ("provider", "model", "effort", "base_url", "profile", "max_tokens")
#: The model servers an OpenAI-compatible endpoint may be (docs/model-servers.md).
PROFILES = [("", "Default for the provider"), *((name, f"{name}: {text}") for name, text in profile_choices())]
DEFAULT, CUSTOM = "default", "custom"


class FrameworksForm(forms.Form):
    frameworks = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple,
                                           label="Enabled frameworks")

    def __init__(self, *args, packs: dict, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["frameworks"].choices = [(key, pack.name) for key, pack in packs.items()]


class TopologyForm(forms.Form):
    """`mode` default: the workspace uses BEYOND_PROVIDER (topology null); custom: one provider,
    model, effort, base_url (openai only) and max_tokens per role, checked with parse_topology."""

    mode = forms.ChoiceField(choices=[(DEFAULT, "Use the server default (BEYOND_PROVIDER) for every role"),
                                      (CUSTOM, "Choose a model per role")],
                             widget=forms.RadioSelect, initial=DEFAULT)

    def __init__(self, *args, current: dict | None = None, **kwargs):
        self.current = current if isinstance(current, dict) else None
        super().__init__(*args, initial=self._initial(self.current), **kwargs)
        for role in ROLES:
            self.fields[f"{role}_provider"] = forms.ChoiceField(choices=[("", "Choose…"), *WEB_PROVIDERS],
                                                                required=False, label="Provider")
            self.fields[f"{role}_model"] = forms.CharField(max_length=200, required=False, label="Model",
                                                           help_text="e.g. z-ai/glm-5.3")
            self.fields[f"{role}_effort"] = forms.ChoiceField(choices=EFFORTS, initial=DEFAULT_EFFORT[role],
                                                              required=False, label="Reasoning effort")
            self.fields[f"{role}_base_url"] = forms.CharField(
                max_length=500, required=False, label="Base URL",
                help_text="openai only (e.g. http://localhost:11434/v1); no key in the URL")
            self.fields[f"{role}_profile"] = forms.ChoiceField(
                choices=PROFILES, required=False, label="Server profile",
                help_text="what the endpoint accepts (structured output, effort, concurrency); openai and openrouter only")
            self.fields[f"{role}_max_tokens"] = forms.IntegerField(min_value=1, max_value=1_000_000,
                                                                   required=False, label="Max tokens")

    @staticmethod
    def _initial(current: dict | None) -> dict:
        if not current:
            return {"mode": DEFAULT}
        initial = {"mode": CUSTOM}
        for role in ROLES:
            cfg = current.get(role) or {}
            if cfg.get("provider") in dict(WEB_PROVIDERS):
                initial[f"{role}_provider"] = cfg["provider"]
            for name in ("model", "effort", "base_url", "max_tokens"):
                if cfg.get(name) is not None:
                    initial[f"{role}_{name}"] = cfg[name]
            if isinstance(cfg.get("profile"), str):
                initial[f"{role}_profile"] = cfg["profile"]
        return initial

    def role_rows(self):
        """(role, [bound fields]) for the template."""
        return [(role, [self[f"{role}_{name}"] for name in ROLE_FIELDS]) for role in ROLES]

    def _role_config(self, role: str) -> dict:
        data = self.cleaned_data
        cfg = {"provider": data.get(f"{role}_provider") or "", "model": (data.get(f"{role}_model") or "").strip(),
               "effort": data.get(f"{role}_effort") or DEFAULT_EFFORT[role]}
        if cfg["provider"] == "openai":
            cfg["base_url"] = (data.get(f"{role}_base_url") or "").strip() or None
        if data.get(f"{role}_max_tokens"):
            cfg["max_tokens"] = data[f"{role}_max_tokens"]
        old = (self.current or {}).get(role) or {}
        if data.get(f"{role}_profile") and cfg["provider"] in ("openai", "openrouter"):
            cfg["profile"] = data[f"{role}_profile"]
        elif isinstance(old.get("profile"), dict) and old.get("provider") == cfg["provider"]:
            cfg["profile"] = old["profile"]  # overrides set outside this page are kept while the provider is
        return {k: v for k, v in cfg.items() if v not in (None, "")}

    def full_clean(self):
        super().full_clean()
        # A refused base_url may hold a key ("https://user:KEY@host"): do not echo it back.
        scrub = [f"{role}_base_url" for role in ROLES if self.is_bound and self.has_error(f"{role}_base_url")]
        if scrub:
            self.data = self.data.copy()
            for name in scrub:
                self.data[name] = ""

    def _field_for(self, role: str, error: dict) -> str:
        loc = [str(p) for p in error.get("loc", ())]
        if loc and loc[0] in ROLE_FIELDS:
            return f"{role}_{loc[0]}"
        message = error.get("msg", "")
        for name in ("base_url", "model"):
            if name in message:
                return f"{role}_{name}"
        return f"{role}_provider"

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("mode") != CUSTOM:
            cleaned["topology"] = None
            return cleaned
        topology = {}
        for role in ROLES:
            if self.has_error(f"{role}_provider") or self.has_error(f"{role}_max_tokens"):
                continue
            if not cleaned.get(f"{role}_provider"):
                self.add_error(f"{role}_provider", "Choose a provider for this role.")
                continue
            cfg = self._role_config(role)
            try:
                RoleConfig.model_validate(cfg)
            except ValidationError as exc:
                for error in exc.errors():
                    message = error.get("msg", "").removeprefix("Value error, ")
                    self.add_error(self._field_for(role, error), message[:1].upper() + message[1:] + ".")
                continue
            topology[role] = cfg
        if self.errors:
            return cleaned
        try:
            cleaned["topology"] = parse_topology(topology).as_json()
        except TopologyError as exc:  # every role passed alone: this is a whole-topology problem
            raise forms.ValidationError(str(exc)) from None
        return cleaned


class AddMemberForm(forms.Form):
    username = forms.CharField(max_length=150, label="Username")
    role = forms.ChoiceField(choices=Membership.ROLES, initial=Membership.MEMBER, label="Role")


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Membership.ROLES, label="Role")


class InviteForm(forms.Form):
    role = forms.ChoiceField(choices=Membership.ROLES, initial=Membership.MEMBER, label="Role")
    days = forms.TypedChoiceField(choices=[(d, f"{d} day{'s' if d > 1 else ''}") for d in INVITATION_DAYS],
                                  coerce=int, initial=7, label="Valid for")
    note = forms.CharField(max_length=200, required=False, label="For (optional)",
                           help_text="A name or an address, to recognise the invitation in the list")


class NewWorkspaceForm(forms.Form):
    name = forms.CharField(max_length=200, label="Name")
    slug = forms.SlugField(max_length=60, required=False, label="Web address (optional)",
                           help_text="Letters, digits and dashes; made from the name if left empty")
