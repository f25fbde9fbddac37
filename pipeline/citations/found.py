"""The record of one citation found in a draft."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Found:
    """A framework citation asserted in a text.

    `ref` is canonical and keeps sub-parts (`Art. 30(1)(a)`, `AC-2(1)`); a range or list item
    expanded from one written form shares that form's `span` and `surface`.
    `title_form` says how a title was written next to it ("paren", "dash", "colon", "table" are
    read leniently as possible commentary; "quote" is a claimed title). `tail_end` is where the
    citation's own text ends, the title or quoted wording written right after it included.
    """

    pack_key: str
    ref: str
    span: tuple[int, int]
    surface: str
    title_quote: str | None = None
    quoted_text: str | None = None
    edition: str | None = None
    title_form: str | None = None
    explicit_edition: bool = False
    tail_end: int | None = None

    @property
    def end(self) -> int:
        return self.tail_end if self.tail_end is not None else self.span[1]
