"""A finished run with everything an export must place or leave out: model names, a run warning,
a section released with a warning, a recap with findings, the offline engine's citation line,
tables (one long enough to run over pages), curly quotes, dashes and names in other scripts."""
from __future__ import annotations

import io
import zipfile

from pypdf import PdfReader

from pipeline import events as ev
from pipeline.events import Event
from beyond_site.runs.models import Run
from tests import scripting
from tests.site.chat_support import new_run, record, released

MODEL = "z-ai/glm-5.3"
TOPOLOGY = {role: {"provider": "openrouter", "model": MODEL, "effort": "low"}
            for role in ("planner", "executor", "verifier", "summarizer")}
TASK = ("Draft our records of processing for the HR department. Use the employee handbook and the payroll "
        "contract we uploaded, list every processing activity with its legal basis, and keep it short.")

REGISTER = """## Register of processing

The register covers “every” processing activity — as agreed with Zoë Łukasiewicz and Дмитрий Соколов.

| Activity | Legal basis | Retention (years) | Review date |
|---|---|---|---|
| Payroll | Art. 6(1)(b) | 6 | 2027-03-14 |
| Recruitment | Art. 6(1)(a) | 2 | 2026-11-30 |
| =HYPERLINK("http://evil.example","x") | Consent | 1 | n/a |

This section addresses GDPR Art. 30.
"""
ROWS = 70  # enough rows for the table to run over a page
ASSETS = "## Assets\n\n| ID | Asset | Owner |\n|---|---|---|\n" + "".join(
    f"| A-{n:03d} | Laptop {n} | IT team {n % 4} |\n" for n in range(1, ROWS + 1))
STEP_WARNING = "Issues: [step_contract] the retention of recruitment files is missing"
RUN_WARNING = "The approved citation C2 may not match its catalogue entry"
RECAP = "The register lists three activities; see ISO 27001 clause 99.9."
RECAP_FINDING = {"type": "invented_citation", "detail": "clause 99.9 is not in the approved set", "quote": "99.9"}


def rich_run(workspace, user, task: str = TASK) -> Run:
    run = new_run(workspace, user, task=task)
    Run.objects.filter(pk=run.pk).update(topology=TOPOLOGY, offline=False)
    brief = scripting.brief(3, citations=[
        {"id": "C1", "framework": "GDPR", "ref": "Art. 30", "title": "Records of processing activities"},
        {"id": "C2", "framework": "ISO/IEC 27001:2022", "ref": "A.5.34", "title": "Privacy and protection of PII"}])
    brief["title"] = "Records of processing for the HR department"  # the planner's title, not the prompt
    record(run, Event(ev.BriefReady(brief=brief)), Event(ev.BriefChecked(warnings=[RUN_WARNING])),
           released(1, REGISTER),
           released(2, "Managers approve the register every *year*.", badge="warning", warnings=[STEP_WARNING]),
           released(3, ASSETS, badge="passed_after_rerender"),
           Event(ev.SummaryReady(summary=RECAP, findings=[RECAP_FINDING])), Event(ev.RunCompleted()))
    run.refresh_from_db()
    return run


def docx_text(body: bytes) -> str:
    """Every piece of text in a DOCX: body, headers, footers, comments and properties."""
    with zipfile.ZipFile(io.BytesIO(body)) as z:
        return "\n".join(z.read(name).decode("utf-8", "replace") for name in z.namelist() if name.endswith(".xml"))


def pdf_pages(body: bytes) -> list[str]:
    return [page.extract_text() for page in PdfReader(io.BytesIO(body)).pages]
