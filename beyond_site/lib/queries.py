"""Small query helpers for the paths every request, page and run takes."""
from __future__ import annotations


def one_or_none(queryset):
    """The row `queryset` finds, or None, for a filter that finds at most one row (a primary key,
    a unique key). Unlike `.first()`, it adds no ORDER BY: while compiling an ordered query Django
    hashes every selected column to match the order against them, about 0.5 ms on a wide row
    (bench/README.md, "Throughput"), for an order that cannot matter here."""
    return next(iter(queryset.order_by()[:1]), None)
