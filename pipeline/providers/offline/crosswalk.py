"""A cross-framework mapping: each requirement of the framework mapped from, with the requirements
of the framework mapped to that govern the same topic, and the practice that meets both.

Two requirements correspond when the curated topic map (topics.py) files them under one topic; a
subcategory counts with its category (PR.AA-03 with PR.AA). No correspondence is invented: a
requirement with none in the cited set says so.
"""
from __future__ import annotations

import re

from pipeline.frameworks import Pack, named_frameworks
from pipeline.schemas import Citation

from .topics import TOPICS

_TARGET = re.compile(r"\b(?:to|onto|against|with)\s+(?P<tail>.+)$", re.I)


def _same(ref: str, listed: str) -> bool:
    return ref == listed or ref.startswith(listed + "-") or listed.startswith(ref + "-")


def topics_of(pack_key: str, ref: str) -> set[str]:
    return {topic for topic, refs in TOPICS.items() if any(_same(ref, r) for r in refs.get(pack_key, ()))}


def direction(task: str, packs: tuple[Pack, ...]) -> tuple[Pack, Pack] | None:
    """(mapped from, mapped to) when the task names two frameworks: the one after "to" is the target."""
    if len(packs) < 2:
        return None
    tail = _TARGET.search(task)
    after = [p for p in named_frameworks(tail["tail"]) if p in packs] if tail else []
    target = after[-1] if after else packs[-1]
    source = next(p for p in packs if p is not target)
    return source, target


def counterparts(citation: Citation, source: Pack, target: Pack, cited: list[Citation]) -> list[Citation]:
    """The cited requirements of `target` filed under a topic `citation` is filed under."""
    topics = topics_of(source.key, citation.ref)
    return [c for c in cited if c.framework == target.name and topics & topics_of(target.key, c.ref)]
