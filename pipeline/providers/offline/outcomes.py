"""Data: short labels and practice words for the NIST CSF 2.0 subcategories a mapping expands to.

The CSF catalogue gives its subcategories no short titles; these labels summarise each outcome in a
few words so a mapping table can name its rows, and the words find the practices that meet it.
"""
from __future__ import annotations

#: ref -> (short label, words that show a practice meets the outcome)
CSF_OUTCOMES: dict[str, tuple[str, tuple[str, ...]]] = {
    "PR.AA-01": ("Identities and credentials are managed",
                 ("account", "identity", "identities", "credential", "joiner", "leaver", "service account", "disabled",
                  "created", "keys")),
    "PR.AA-02": ("Identities are proofed and bound to credentials",
                 ("proofed", "verified", "contract", "onboarding", "signed", "named person", "bound")),
    "PR.AA-03": ("Users, services and hardware are authenticated",
                 ("authentication", "multi-factor", "mfa", "password", "device", "posture", "certificate", "hardware key")),
    "PR.AA-04": ("Identity assertions are protected and verified",
                 ("assertion", "token", "session", "single sign-on", "sso", "federation", "saml")),
    "PR.AA-05": ("Access permissions are defined, managed, enforced and reviewed",
                 ("least privilege", "permission", "access review", "reviewed", "approved", "elevation", "role",
                  "privileged", "need-to-know", "removed")),
    "PR.AA-06": ("Physical access to assets is managed, monitored and enforced",
                 ("physical", "badge", "visitor", "reception", "office", "escorted", "premises", "kiosk")),
}
