"""The deliverables of a finished run: a DOCX and a Markdown file a compliance officer can send as
they are (title page, verification summary, the document with real structure, warnings on their
section, citations at the end), with model-made HTML inert."""
from __future__ import annotations

import datetime as dt
import io
import re

import pytest
from django.test import Client
from docx import Document as Docx
from markdown_it import MarkdownIt

from pipeline import events as ev
from pipeline.events import Event
from beyond_site.runs.queue import conversation_title, start_run
from beyond_site.workspaces.models import Conversation
from tests import scripting
from tests.browser.scenarios import EVIL
from tests.site.chat_support import new_run, record, released, workspace_with

pytestmark = pytest.mark.django_db(transaction=True)

INVENTORY = """## Asset register

The register lists **every** asset in scope, see [the policy](https://example.org/policy).

| ID | Asset | Owner |
|---|---|---|
| A-1 | Payroll system | Finance |
| A-2 | Laptops \\| fleet | IT |

1. Review it *quarterly*.
2. Record changes.
"""


@pytest.fixture
def finished(alice):
    workspace = workspace_with(member=alice)
    run = new_run(workspace, alice, task='Access "policy" / v2 <draft>')
    brief = scripting.brief(3, citations=[
        {"id": "C1", "framework": "ISO/IEC 27001:2022", "ref": "A.5.15", "title": "Access control"},
        {"id": "C2", "framework": "GDPR", "ref": "Art. 32", "title": "Security of processing"}])
    del brief["title"]  # a brief written before briefs had titles: the document is named after its task
    record(run, Event(ev.BriefReady(brief=brief)),
           released(1, INVENTORY),
           released(2, "Managers approve.", badge="warning", warnings=["Issues: [step_contract] misses B"]),
           Event(ev.StepHalted(step=3, reason="the verifier gave no parseable verdict")),
           Event(ev.RunHalted(step=3, reason="step 3: the verifier gave no parseable verdict")))
    return run


def get(user, run, ext):
    client = Client()
    client.force_login(user)
    return client.get(f"/w/{run.workspace.slug}/runs/{run.pk}/export.{ext}")


def docx_of(response) -> Docx:
    assert response.status_code == 200
    assert response["Content-Type"] == "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    return Docx(io.BytesIO(response.content))


def test_the_docx_has_a_title_page_with_the_models_and_the_verification_summary(finished, alice):
    doc = docx_of(get(alice, finished, "docx"))
    paragraphs = [(p.style.name, p.text) for p in doc.paragraphs]
    assert paragraphs[0] == ("Title", 'Access "policy" / v2 <draft>')
    text = "\n".join(t for _, t in paragraphs)
    assert "Organisation: Acme" in text and "Date: " in text and "Version: 1" in text and "Status: Draft" in text
    assert ("Sections: 1 passed, 1 released with a warning, 1 not released. "
            "Each warning is a comment on its section.") in text
    assert "It does not mean the content is true, complete or correct" in text
    assert "1 of 3 sections" not in text and "2 of 3 sections were released" in text
    assert ("the others are missing from this document. 1 section was released with a warning: the verifier "
            "found issues in both drafts") in text  # said with the outcome, not only in the counts
    models = [[c.text for c in row.cells] for row in doc.tables[0].rows]
    assert models[0] == ["Role", "Model"] and models[1][0] == "Planner"
    levels = [int(style.removeprefix("Heading ")) for style, _ in paragraphs if style.startswith("Heading ")]
    assert levels[:2] == [1, 1] and all(b <= a + 1 for a, b in zip(levels, levels[1:]))  # no level skipped
    props = doc.core_properties
    assert props.author == props.last_modified_by == "Beyond" and props.comments == f"Prepared with Beyond, run {finished.pk}"
    finished.refresh_from_db()
    assert props.created.replace(tzinfo=None) == finished.finished_at.astimezone(dt.timezone.utc).replace(
        tzinfo=None, microsecond=0)


def test_the_docx_body_has_word_headings_tables_lists_and_links_and_no_pipeline_chatter(finished, alice):
    response = get(alice, finished, "docx")
    doc = docx_of(response)
    headings = [(p.style.name, p.text) for p in doc.paragraphs if p.style.name.startswith("Heading")]
    assert ("Heading 1", "Asset register") in headings  # the step's own heading, not "Step 1: Part 1"
    assert ("Heading 1", "Part 2") in headings  # a step without a heading gets its title once
    assert ("Heading 1", "Appendix: approved citations") in headings
    assert [h for _, h in headings].count("Asset register") == 1
    register = [[c.text for c in row.cells] for row in doc.tables[1].rows]
    assert register == [["ID", "Asset", "Owner"], ["A-1", "Payroll system", "Finance"],
                        ["A-2", "Laptops | fleet", "IT"]]
    body = "\n".join(p.text for p in doc.paragraphs)
    for chatter in ("Badge:", "Step 1", "Step 2", "Passed:", "passed_after"):
        assert chatter not in body
    every = next(p for p in doc.paragraphs if p.text.startswith("The register lists"))
    assert [r.text for r in every.runs if r.bold] == ["every"]
    assert "example.org/policy" in [rel.target_ref for rel in doc.part.rels.values() if rel.is_external][0]
    assert "the policy" in every.text  # the link's words, inside a w:hyperlink
    numbered = [p.text for p in doc.paragraphs if p.style.name == "List Paragraph"]
    assert numbered == ["1.\tReview it quarterly.", "2.\tRecord changes."]
    assert "This section was not released: it could not be inspected (the verifier gave no parseable verdict)." in body
    citations = [[c.text for c in row.cells] for row in doc.tables[-1].rows]
    assert citations[0] == ["ID", "Framework", "Reference", "Title"] and citations[2][2] == "Art. 32"


def test_a_warning_is_a_word_comment_on_its_section(finished, alice):
    doc = docx_of(get(alice, finished, "docx"))
    comments = list(doc.comments)
    assert [(c.author, c.text) for c in comments] == [
        ("Beyond verification", "Warning: Issues: [step_contract] misses B")]
    anchored = re.findall(r'<w:commentRangeStart w:id="(\d+)"/>\s*<w:r>.*?<w:t>([^<]*)</w:t>',
                          doc.element.body.xml, re.S)
    assert anchored[0][1] == "Part 2"


def test_the_markdown_export_has_the_same_shape(finished, alice):
    response = get(alice, finished, "md")
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="beyond-run-{finished.pk}-access-policy-v2-draft.md"'
    text = response.content.decode()
    assert text.startswith('# Access "policy" / v2 \\<draft\\>\n')
    assert "Sections: 1 passed, 1 released with a warning, 1 not released." in text
    assert "## Asset register" in text and "| A-2 | Laptops \\| fleet | IT |" in text
    assert "## Part 2[^n1]\n\nManagers approve." in text and "[^n1]: Warning: Issues: \\[step\\_contract\\] misses B" in text
    assert "[the policy](https://example.org/policy)" in text and "**every**" in text
    assert "| C2 | GDPR | Art. 32 | Security of processing |" in text
    assert text.index("## Verification") < text.index("## Asset register") < text.index("## Appendix")
    assert "Badge" not in text and "Step 1" not in text and "verified" not in text.lower()
    # Read back by a Markdown renderer, it is the same document.
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert "<td>Laptops | fleet</td>" in html and "<h2>Asset register</h2>" in html
    levels = [int(n) for n in re.findall(r"<h([1-6])>", html)]
    assert levels[0] == 1 and all(b <= a + 1 for a, b in zip(levels, levels[1:]))  # no level skipped


def test_raw_html_and_script_links_in_model_output_stay_inert_in_the_markdown(alice):
    workspace = workspace_with(member=alice)
    run = new_run(workspace, alice, task="<img src=x onerror=alert(1)> task")
    record(run, Event(ev.BriefReady(brief=scripting.brief(1))), released(1, EVIL),
           Event(ev.SummaryReady(summary=EVIL)), Event(ev.RunCompleted()))
    text = get(alice, run, "md").content.decode()
    # A renderer that passes raw HTML through (as many Markdown viewers do) finds none in the file.
    html = MarkdownIt("commonmark", {"html": True, "linkify": True}).render(text)
    assert "<script" not in html and "<img" not in html and "<a href=\"javascript" not in html
    assert not re.search(r"<[a-z][^>]*\son\w+=", html)  # no tag carries an event handler
    assert not re.search(r'href="(?!https://example\.org/policy")', html)
    assert "&lt;script&gt;window.pwned = 1" in html  # shown as the text the model wrote
    assert '<a href="https://example.org/policy">a fine link</a>' in html


def test_a_run_that_released_nothing_has_no_export_links(alice):
    workspace = workspace_with(member=alice)
    run = new_run(workspace, alice)
    record(run, Event(ev.BriefReady(brief=scripting.brief(2))),
           Event(ev.StepHalted(step=1, reason="the verifier timed out")),
           Event(ev.RunHalted(step=1, reason="step 1: the verifier timed out")))
    client = Client()
    client.force_login(alice)
    page = client.get(f"/w/{workspace.slug}/c/{run.conversation_id}/").content.decode()
    assert 'data-run-status="halted"' in page and "export.docx" not in page


def test_a_finished_run_with_a_released_step_offers_the_exports(finished, alice):
    client = Client()
    client.force_login(alice)
    page = client.get(f"/w/{finished.workspace.slug}/c/{finished.conversation_id}/").content.decode()
    assert f"/runs/{finished.pk}/export.docx" in page and f"/runs/{finished.pk}/export.md" in page


def test_an_unfinished_run_cannot_be_exported_yet(alice):
    run = new_run(workspace_with(member=alice), alice)
    assert get(alice, run, "md").status_code == 409


def test_exports_are_404_for_non_members(finished, bob):
    assert get(bob, finished, "md").status_code == 404
    assert get(bob, finished, "docx").status_code == 404


def finished_run(run):
    brief = scripting.brief(1)
    del brief["title"]  # named after the task that began the conversation, as before briefs had titles
    record(run, Event(ev.BriefReady(brief=brief)), released(1, "The revised register."), Event(ev.RunCompleted()))
    return run


def test_a_follow_up_is_exported_under_its_documents_name_with_its_own_instruction_below(finished, alice):
    """A follow-up asks for a revision: the document keeps the name the conversation began with."""
    follow_up, _ = start_run(finished.workspace, "Add a section on cloud assets", user=alice,
                             conversation=finished.conversation)
    finished_run(follow_up)
    doc = docx_of(get(alice, follow_up, "docx"))
    assert [(p.style.name, p.text) for p in doc.paragraphs[:2]] == [
        ("Title", 'Access "policy" / v2 <draft>'), ("Normal", "Task: Add a section on cloud assets")]
    assert doc.core_properties.title == 'Access "policy" / v2 <draft>'
    response = get(alice, follow_up, "md")
    assert response.content.decode().startswith(
        '# Access "policy" / v2 \\<draft\\>\n\n**Task:** Add a section on cloud assets  \n**Organisation:** ')
    assert response["Content-Disposition"] == f'attachment; filename="beyond-run-{follow_up.pk}-access-policy-v2-draft.md"'
    # The conversation's first run says its task once: as the title.
    assert "Task:" not in get(alice, finished, "md").content.decode()


def test_a_renamed_conversation_names_the_document_and_a_long_first_task_gives_a_short_title(alice):
    workspace = workspace_with(member=alice)
    task = ("Draft our ISO/IEC 27001:2022 asset-register overview for the three clinics, the head office "
            "and the cloud services we run")
    run = new_run(workspace, alice, task=task)
    run.conversation.title = conversation_title(task)  # as the chat names it: cut to fit the list
    run.conversation.save()
    finished_run(run)
    assert run.conversation.title.endswith("…")
    short = "ISO/IEC 27001:2022 asset-register overview for the three clinics, the head"  # whole words, no ellipsis
    # Never the whole prompt as the title: the task itself is on the audit edition's title page.
    assert get(alice, run, "md").content.decode().startswith(f"# {short}\n\n**Task:** {task}  \n**Organisation:** ")
    client = get(alice, run, "md?edition=client").content.decode()
    assert client.startswith(f"# {short}\n\n**Organisation:** ") and "Draft our" not in client

    Conversation.objects.filter(pk=run.conversation_id).update(title="Asset register <overview>")
    text = get(alice, run, "md").content.decode()
    assert text.startswith(f"# Asset register \\<overview\\>\n\n**Task:** {task}  \n")
    assert get(alice, run, "docx")["Content-Disposition"].endswith(f'-{run.pk}-asset-register-overview.docx"')
    assert get(alice, run, "docx?edition=client")["Content-Disposition"].endswith('"asset-register-overview-v1.docx"')
