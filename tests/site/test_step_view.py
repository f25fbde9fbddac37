"""A released step as the chat draws it: its header shows the title, so the content's first heading
is not shown again when it only repeats it."""
from __future__ import annotations

import pytest

from beyond_site.chat.presenting import step_view, without_title_heading
from beyond_site.runs.models import Step


@pytest.mark.parametrize("content", ["## Scope\n\nEvery laptop.", "# **Scope:**\nEvery laptop.",
                                     "  ### scope ##\n\nEvery laptop."])
def test_a_first_heading_that_repeats_the_title_is_not_shown_again(content):
    assert without_title_heading(content, "Scope").strip() == "Every laptop."


@pytest.mark.parametrize("content", ["## Scope and exclusions\n\nEvery laptop.", "Scope\n\nEvery laptop.",
                                     "Intro.\n\n## Scope\n\nEvery laptop.", "#Scope\n\nEvery laptop."])
def test_any_other_content_is_kept_whole(content):
    assert without_title_heading(content, "Scope") == content


def test_the_chat_draws_the_title_once():
    step = Step(index=1, title="Asset register", status=Step.RELEASED, badge="passed",
                content="## Asset register\n\n| Asset | Owner |\n| --- | --- |\n| Laptops | IT |")
    html = step_view(step, {}).html
    assert "Asset register" not in html and "<td>Laptops</td>" in html
