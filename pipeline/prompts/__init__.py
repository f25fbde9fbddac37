"""Load the role prompts from the Markdown files beside this module.

Templates use `string.Template` ($name) so that the JSON and Markdown inside them need no escaping.
"""
from __future__ import annotations

from functools import cache
from pathlib import Path
from string import Template

PROMPT_DIR = Path(__file__).resolve().parent


@cache
def load(name: str) -> str:
    """The text of `name`.md, without its trailing newline."""
    return (PROMPT_DIR / f"{name}.md").read_text(encoding="utf-8").rstrip("\n")


def render(name: str, **values: object) -> str:
    """Fill the template `name`.md; a missing value is an error, never an empty hole."""
    return Template(load(name)).substitute({k: str(v) for k, v in values.items()})
