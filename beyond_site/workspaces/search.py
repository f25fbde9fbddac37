"""Rank document chunks by relevance to a task with the database's own full-text search.

The database does the ranking so that a large workspace's text never has to be loaded into
Python: SQLite FTS5 (bm25) in the embedded mode, PostgreSQL full-text search (ts_rank over a
stored tsvector with a GIN index) when on PostgreSQL. See migration 0003 for the indexes.
"""
from __future__ import annotations

from django.db import connection

from pipeline.words import topic_words

MAX_QUERY_WORDS = 40

# Scope: the workspace's files plus this conversation's uploads (documents of other
# conversations are not this run's business).
_SCOPE = "d.workspace_id = %s AND (d.conversation_id IS NULL OR d.conversation_id = %s)"

_SQLITE = f"""
    SELECT c.id FROM workspaces_chunk_fts f
    JOIN workspaces_documentchunk c ON c.id = f.rowid
    JOIN workspaces_document d ON d.id = c.document_id
    WHERE workspaces_chunk_fts MATCH %s AND {_SCOPE}
    ORDER BY bm25(workspaces_chunk_fts), d.name, d.sha256, c.ordinal
"""

# websearch_to_tsquery with "or" between words: OR semantics (a chunk need not contain every
# word of the task) and no syntax error whatever the task says.
_POSTGRES = f"""
    SELECT c.id FROM workspaces_documentchunk c
    JOIN workspaces_document d ON d.id = c.document_id,
    websearch_to_tsquery('english', %s) q
    WHERE c.search @@ q AND {_SCOPE}
    ORDER BY ts_rank(c.search, q, 1) DESC, d.name, d.sha256, c.ordinal
"""


def ranked_chunk_ids(task: str, workspace_id: int, conversation_id: int | None) -> list[int]:
    """Ids of the chunks in scope that match the task's words, most relevant first.
    Chunks that match none of the words are not listed."""
    words = topic_words(task)[:MAX_QUERY_WORDS]
    if not words:
        return []
    if connection.vendor == "postgresql":
        sql, query = _POSTGRES, " or ".join(words)
    elif connection.vendor == "sqlite":
        # Each word quoted: FTS5 then reads it as a plain term, never as query syntax.
        sql, query = _SQLITE, " OR ".join(f'"{w}"' for w in words)
    else:  # no full-text search on this backend: the caller falls back to document order
        return []
    with connection.cursor() as cursor:
        cursor.execute(sql, [query, workspace_id, conversation_id or 0])
        return [row[0] for row in cursor.fetchall()]
