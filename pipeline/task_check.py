"""Check the task against the workspace before planning: frameworks it names that are not enabled,
and files the run could not use because they were still being read.

A workspace cites only the frameworks it enables. A task that names another one ("map our
practices to NIST CSF 2.0" where CSF is off) cannot get what it asks for, and whatever planner
runs must not quietly answer with a different framework: the run says so, for every planner.
"""
from __future__ import annotations

from pipeline.context import Context
from pipeline.frameworks import Pack, named_frameworks, pack_for_framework_name


def frameworks_not_enabled(ctx: Context) -> list[Pack]:
    """The shipped frameworks the task names that the workspace has not enabled.

    A workspace that enables no framework at all restricts nothing, so nothing is reported then.
    """
    if not ctx.enabled_frameworks:
        return []
    enabled = {pack.key for name in ctx.enabled_frameworks if (pack := pack_for_framework_name(name))}
    return [pack for pack in named_frameworks(ctx.task)
            if pack.key not in enabled and pack.name not in ctx.enabled_frameworks]


def task_framework_warnings(ctx: Context) -> list[str]:
    """One run warning per framework the task names that the workspace has not enabled; [] when none."""
    enabled = ", ".join(ctx.enabled_frameworks)
    return [f"The task names {pack.name}, which this workspace has not enabled: the document cannot cite it "
            f"(enabled: {enabled}). A workspace admin can enable it in the workspace settings."
            for pack in frameworks_not_enabled(ctx)]


def unread_file_warnings(ctx: Context) -> list[str]:
    """One run warning per file that was still being read when the run started; [] when none."""
    return [f"The file “{name}” was still being read when this run started: the run did not use it. "
            "Run the task again once the file is ready." for name in ctx.unread_files]
