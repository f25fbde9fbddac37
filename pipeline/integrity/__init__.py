"""The integrity gate for runs with web research: every URL and price in a draft or the recap
must come from the evidence the brief approves. Plain Python, no Django.

Entry points: `check_integrity(brief, draft, evidence)`, `find_urls`, `normalise_url`, `find_prices`.
"""
from __future__ import annotations

from .gate import IntegrityGate, check_brief_evidence, check_integrity
from .prices import Price, find_prices, same_price
from .urls import FoundUrl, find_urls, normalise_url, same_source

__all__ = ["FoundUrl", "IntegrityGate", "Price", "check_brief_evidence", "check_integrity", "find_prices",
           "find_urls", "normalise_url", "same_price", "same_source"]
