"""A run's verifier trust status, and the calibration a workspace may require (docs/calibration.md,
"Trust status").

When a run is created it records, once and for good, what was known of its verifier: the latest
completed calibration report, in the run's workspace, of the same verifier with the same settings
(provider, model, endpoint and every setting that changes what it answers: reply length, profile,
effort, window), with its date and its narrow-contract figures; or that it was never calibrated so;
or that the verifier is not a language model (the offline engine), so there is nothing of a model
to calibrate. The snapshot is the run's `verifier_trust` column and part of its `run_requested`
event, so a later calibration does not rewrite what the run was started on, and `beyond_audit
verify` holds the column to the event (runs/provenance.py).

The reports are the calibration app's, a layer above this one (docs/architecture.md): it hands
them over through `use_reports` when the site starts (calibration/apps.py), and this module
decides, in one place, which report matches, what its figures say and whether they meet a
workspace's requirement. `sentence` is the one place the status is put into words, for the chat,
the audit pages and the audit edition of an export.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings

from pipeline import badges
from pipeline.calibration.contracts import NARROW
from pipeline.calibration.report import proportion
from pipeline.providers.registry import reads_with_a_language_model

#: The figures that count are the narrow contract's: the verifier's request exactly as in a run.
CONTRACT = NARROW
PREFIX = "calibration:"


@dataclass(frozen=True)
class StoredReport:
    """A completed calibration report as the calibration app keeps it."""

    id: int
    topology: dict
    finished_at: datetime | None
    figures: dict | None
    #: Whether the report is as it was when it completed (its fingerprint on the workspace's
    #: change log matches): a report changed afterwards, or never logged, counts for nothing.
    intact: bool = True


#: The completed reports of a workspace whose verifier has this provider and model, newest first
#: (set by the calibration app at start-up).
_reports: Callable[[int, str, str], Iterable[StoredReport]] = lambda workspace_id, provider, model: ()  # noqa: E731


def use_reports(source: Callable[[int, str, str], Iterable[StoredReport]]) -> None:
    global _reports
    _reports = source


def verifier_identity(topology: dict | None) -> dict:
    """Who the verifier of a stored topology is: {"provider", "model", "endpoint"}. The endpoint is
    the base URL of an OpenAI-compatible one, the script's file name for the scripted provider
    (never a server path), None when the provider has a single endpoint of its own."""
    cfg = (topology or {}).get("verifier") or {}
    provider = cfg.get("provider") or ""
    endpoint = (cfg.get("base_url") or "").rstrip("/") or None
    if provider == "scripted" and cfg.get("path"):
        endpoint = os.path.basename(cfg["path"])
    return {"provider": provider, "model": cfg.get("model") or "", "endpoint": endpoint}


#: Role settings that change how a call is carried, not what the model answers.
TRANSPORT_ONLY = ("concurrency", "retries")


def verifier_settings(topology: dict | None) -> dict:
    """The verifier's settings that a calibration holds for: its identity and every setting that
    changes what it answers (a report taken with another reply length, profile or effort says
    nothing of this verifier). Unset and transport-only settings are left out, so a topology and
    its stored copy compare equal."""
    cfg = (topology or {}).get("verifier") or {}
    kept = {key: value for key, value in cfg.items() if key not in TRANSPORT_ONLY and value not in (None, "")}
    kept.pop("path", None)
    kept.pop("base_url", None)
    return {**kept, **verifier_identity(topology)}


def _narrow(figures: dict | None) -> dict | None:
    return ((figures or {}).get("contracts") or {}).get(CONTRACT)


def report_figures(block: dict) -> dict:
    """The trust fields of one contract's figures (pipeline.calibration.report): clean drafts
    flagged, verdicts unparseable, and planted violations caught by the model (every type together)."""
    clean = block.get("clean") or {}
    violations = (block.get("violations") or {}).values()
    caught = proportion(sum(v.get("caught", 0) for v in violations), sum(v.get("n", 0) for v in violations))
    unparseable = block.get("unparseable") or {}
    return {"clean_flagged_rate": clean.get("rate"), "clean_flagged_ci95": clean.get("ci95"),
            "clean_drafts": clean.get("n", 0),
            "unparseable_rate": unparseable.get("rate"),
            "caught_rate": caught["rate"], "caught_ci95": caught["ci95"], "planted": caught["n"]}


@dataclass(frozen=True)
class Requirement:
    """A workspace's calibration requirement: rates as fractions (0 to 1), None for no bound."""

    max_clean_flagged: float | None = None
    max_unparseable: float | None = None
    min_caught: float | None = None
    #: The drafts a figure must be measured on to count (settings.BEYOND_CALIBRATION_MIN_DRAFTS): a
    #: rate over two drafts says nothing.
    min_drafts: int = field(default_factory=lambda: settings.BEYOND_CALIBRATION_MIN_DRAFTS)

    FIELDS = ("max_clean_flagged", "max_unparseable", "min_caught")

    @classmethod
    def of(cls, stored: dict | None) -> Requirement | None:
        """The requirement a workspace stores (None: it requires none)."""
        if not stored:
            return None
        return cls(**{name: stored.get(name) for name in cls.FIELDS})

    def as_json(self) -> dict:
        return {name: getattr(self, name) for name in self.FIELDS}

    def shortfalls(self, trust_fields: dict) -> list[str]:
        """What a report's figures (`report_figures`) miss of this requirement, in words; [] when met.
        A rate the report could not measure (no draft of that kind), or measured on fewer than
        `min_drafts` drafts, does not meet a bound."""
        missing = []
        clean, planted = trust_fields.get("clean_drafts") or 0, trust_fields.get("planted") or 0
        for bound, name, words, most, drafts in (
                (self.max_clean_flagged, "clean_flagged_rate", "faithful drafts flagged", True, clean),
                (self.max_unparseable, "unparseable_rate", "verdicts unparseable", True, clean + planted),
                (self.min_caught, "caught_rate", "planted violations caught", False, planted)):
            if bound is None:
                continue
            rate = trust_fields.get(name)
            if rate is not None and drafts < self.min_drafts:
                missing.append(f"{words}: measured on {drafts} draft{'' if drafts == 1 else 's'} only "
                               f"(at least {self.min_drafts} needed)")
            elif rate is None:
                missing.append(f"{words}: not measured (required {'at most' if most else 'at least'} "
                               f"{pct(bound, exact=True)})")
            elif (rate > bound) if most else (rate < bound):
                missing.append(f"{words} {pct(rate, exact=True)} (required {'at most' if most else 'at least'} "
                               f"{pct(bound, exact=True)})")
        return missing

    def describe(self) -> str:
        parts = [f"{words} {pct(getattr(self, name), exact=True)}" for name, words in (
            ("max_clean_flagged", "faithful drafts flagged at most"),
            ("max_unparseable", "verdicts unparseable at most"),
            ("min_caught", "planted violations caught at least")) if getattr(self, name) is not None]
        bounds = "; ".join(parts) or "a completed report, with no threshold on its figures"
        return f"{bounds}; each measured on at least {self.min_drafts} drafts" if parts else bounds


def pct(rate: float | None, *, exact: bool = False) -> str:
    """A rate as a percentage: whole, as the figures are read (one decimal near 0% and 100%, so
    0.4% does not read as none, nor 99.6% as all); `exact` to one decimal (a threshold as set)."""
    if rate is None:
        return "n/a"
    value = rate * 100
    if exact or 0 < value < 1 or 99 < value < 100:
        return f"{value:.1f}".removesuffix(".0") + "%"
    return f"{value:.0f}%"


def trust_status(workspace_id: int, topology: dict, requirement: Requirement | None = None) -> dict:
    """The trust status a run of `topology` in the workspace starts with (a plain JSON snapshot).

    `report` is the latest completed report of the same verifier, with the same settings, whose
    figures include the narrow contract; with a requirement, `requirement.met_by` is that report
    when it meets the requirement (None when it does not, or there is none): only the latest
    counts, so a newer report that misses the thresholds is never outvoted by an older one."""
    identity = verifier_identity(topology)
    trust = {"report": None, "calibrated_at": None, "clean_flagged_rate": None, "unparseable_rate": None,
             **identity, "contract": CONTRACT,
             "language_model": reads_with_a_language_model(identity["provider"])}
    if not trust["language_model"]:
        return trust  # nothing of a model to calibrate: the offline engine's checks are mechanical
    wanted = verifier_settings(topology)
    latest = next((stored for stored in _reports(workspace_id, identity["provider"], identity["model"])
                   if stored.intact and _narrow(stored.figures) is not None
                   and verifier_settings(stored.topology) == wanted), None)
    if latest is not None:
        trust.update(report=latest.id, calibrated_at=latest.finished_at.isoformat() if latest.finished_at else None,
                     **report_figures(_narrow(latest.figures)))
    if requirement is not None:
        met = latest is not None and not requirement.shortfalls(trust)
        trust["requirement"] = {**requirement.as_json(), "min_drafts": requirement.min_drafts,
                                "met_by": latest.id if met else None}
    return trust


class CalibrationRequired(Exception):
    """A run refused before it started: the workspace requires a calibration its verifier lacks.
    `message` is for the member; str() starts with "calibration:"."""

    def __init__(self, message: str):
        super().__init__(f"{PREFIX} {message}")
        self.message = message


def check_requirement(trust: dict, requirement: Requirement | None) -> None:
    """CalibrationRequired when the workspace requires a calibration the run's verifier lacks. A
    verifier that is not a language model is not held to it: there is no model to calibrate, and
    its steps are badged as checked mechanically, never as a model's pass."""
    if requirement is None or not trust.get("language_model") or (trust.get("requirement") or {}).get("met_by"):
        return
    who = quoted_label(trust)
    if trust.get("report") is None:
        why = f"the verifier {who} has never been calibrated in this workspace with its present settings"
    else:
        from_latest = requirement.shortfalls(trust)
        why = (f"the latest calibration report of the verifier {who}, report {trust['report']}, does not meet "
               f"them ({'; '.join(from_latest) or 'it meets them only in part'})")
    raise CalibrationRequired(f"this workspace requires a calibrated verifier ({requirement.describe()}), and {why}.")


def verifier_label(trust: dict) -> str:
    model = trust.get("model") or ""
    if trust.get("provider") == "scripted":
        return f"scripted ({trust.get('endpoint') or 'script'})"
    return model or trust.get("provider") or "?"


#: What a verifier's name may not bring into a sentence about it: quotes, brackets and line breaks
#: that could close the quote and go on as if the sentence said something else.
_UNQUOTABLE = re.compile(r"[\"“”„«»‘’'`()\[\]{}<>\r\n\t\x00-\x1f]+")
LABEL_CHARS = 60


def quoted_label(trust: dict) -> str:
    """The verifier's name as a sentence quotes it: an admin chooses the model's name, so it is
    only ever a quoted name, cut short, after the words that say what the status is."""
    label = " ".join(_UNQUOTABLE.sub(" ", verifier_label(trust)).split())
    if len(label) > LABEL_CHARS:
        label = label[:LABEL_CHARS - 1].rstrip() + "…"
    return f"“{label or '?'}”"


def _day(iso: str | None) -> str:
    if not iso:
        return "on an unknown date"
    at = datetime.fromisoformat(iso)
    return f"{at.day} {at:%b %Y}"


def _interval(ci: list | None) -> str:
    if not ci or len(ci) != 2:
        return ""
    lo, hi = (f"{pct(x)}" for x in ci)
    return f" [{lo.removesuffix('%')}–{hi}]"


def sentence(trust: dict | None) -> str:
    """The trust status in words: the one sentence the chat, the run page and the audit edition of
    an export give. "" for a run recorded before trust statuses were (it has none)."""
    if not trust:
        return ""
    if not trust.get("language_model"):
        return ("No model verifier: the offline engine checks steps mechanically, so there is no model to "
                "calibrate.")
    # The status comes first, in our words; the verifier's name (an admin's choice) only after,
    # quoted, so no name can make the sentence read as another status.
    who = f"verifier {quoted_label(trust)}"
    if trust.get("report") is None:
        return f"Never calibrated in this workspace with these settings ({who})."
    parts = []
    if trust.get("clean_flagged_rate") is not None:
        parts.append(f"flagged {pct(trust['clean_flagged_rate'])}{_interval(trust.get('clean_flagged_ci95'))} "
                     "of faithful drafts")
    if trust.get("caught_rate") is not None:
        parts.append(f"caught {pct(trust['caught_rate'])}{_interval(trust.get('caught_ci95'))} of planted violations")
    if trust.get("unparseable_rate") is not None:
        parts.append(f"{pct(trust['unparseable_rate'])} of its verdicts unparseable")
    figures = "; ".join(parts) or "no figures measured"
    return f"Calibrated {_day(trust.get('calibrated_at'))} (report {trust['report']}, {who}): {figures}."


# -- a model's pass at a glance --------------------------------------------------------------------

#: How far a model's pass can be trusted, when not as far as a plain pass says.
UNCALIBRATED, BELOW_THRESHOLDS = "uncalibrated", "below_thresholds"
STANDING_WORDS = {UNCALIBRATED: "uncalibrated verifier", BELOW_THRESHOLDS: "verifier below thresholds"}


def site_requirement() -> Requirement:
    """The bar a model verifier's report must meet for its passes to show as plain passes, where a
    workspace requires no calibration of its own (settings.BEYOND_TRUSTED_VERIFIER)."""
    return Requirement(**{name: settings.BEYOND_TRUSTED_VERIFIER.get(name) for name in Requirement.FIELDS})


def pass_standing(trust: dict | None) -> str | None:
    """None when a model's pass from this run's verifier may show as a plain pass (its report meets
    the workspace's requirement, or the site's bar), or when the verifier is not a model (its steps
    are `checked`, never passed); else UNCALIBRATED or BELOW_THRESHOLDS."""
    if not trust or not trust.get("language_model"):
        return None
    if trust.get("report") is None:
        return UNCALIBRATED
    required = trust.get("requirement")
    if required is not None:
        return None if required.get("met_by") else BELOW_THRESHOLDS
    return BELOW_THRESHOLDS if site_requirement().shortfalls(trust) else None


def badge_standing(badge: str | None, trust: dict | None) -> str | None:
    """`pass_standing` for a model's pass (`passed`, `passed_after_rerender`); None for any other badge."""
    return pass_standing(trust) if badge in (badges.PASSED, badges.PASSED_AFTER_RERENDER) else None


def standing_label(label: str, standing: str | None) -> str:
    """A pass's label with how far it can be trusted: "Passed · uncalibrated verifier"."""
    return f"{label} · {STANDING_WORDS[standing]}" if standing else label
