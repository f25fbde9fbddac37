"""The full-text index over document chunks, one per database vendor.

SQLite: an external-content FTS5 table (porter stemming) kept in sync by triggers, so every
insert or delete of a chunk, cascades included, updates the index in the same transaction.
PostgreSQL: a stored generated tsvector column and a GIN index on it, so ranking reads the
precomputed vector instead of re-parsing the text.
Note: if a later migration rebuilds workspaces_documentchunk on SQLite (Django remakes tables to
alter columns), the triggers must be recreated.
"""
from django.db import migrations

SQLITE_UP = [
    """CREATE VIRTUAL TABLE workspaces_chunk_fts USING fts5(
           text, content='workspaces_documentchunk', content_rowid='id', tokenize='porter unicode61')""",
    """CREATE TRIGGER workspaces_chunk_fts_ai AFTER INSERT ON workspaces_documentchunk BEGIN
           INSERT INTO workspaces_chunk_fts(rowid, text) VALUES (new.id, new.text); END""",
    """CREATE TRIGGER workspaces_chunk_fts_ad AFTER DELETE ON workspaces_documentchunk BEGIN
           INSERT INTO workspaces_chunk_fts(workspaces_chunk_fts, rowid, text) VALUES ('delete', old.id, old.text); END""",
    """CREATE TRIGGER workspaces_chunk_fts_au AFTER UPDATE ON workspaces_documentchunk BEGIN
           INSERT INTO workspaces_chunk_fts(workspaces_chunk_fts, rowid, text) VALUES ('delete', old.id, old.text);
           INSERT INTO workspaces_chunk_fts(rowid, text) VALUES (new.id, new.text); END""",
    "INSERT INTO workspaces_chunk_fts(workspaces_chunk_fts) VALUES ('rebuild')",
]
SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS workspaces_chunk_fts_au",
    "DROP TRIGGER IF EXISTS workspaces_chunk_fts_ad",
    "DROP TRIGGER IF EXISTS workspaces_chunk_fts_ai",
    "DROP TABLE IF EXISTS workspaces_chunk_fts",
]
POSTGRES_UP = [
    """ALTER TABLE workspaces_documentchunk ADD COLUMN search tsvector
           GENERATED ALWAYS AS (to_tsvector('english', text)) STORED""",
    "CREATE INDEX workspaces_documentchunk_search ON workspaces_documentchunk USING GIN (search)",
]
POSTGRES_DOWN = [
    "DROP INDEX IF EXISTS workspaces_documentchunk_search",
    "ALTER TABLE workspaces_documentchunk DROP COLUMN IF EXISTS search",
]


def _runner(statements_by_vendor):
    def run(apps, schema_editor):
        for statement in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)
    return run


class Migration(migrations.Migration):

    dependencies = [("workspaces", "0001_initial")]

    operations = [
        migrations.RunPython(
            _runner({"sqlite": SQLITE_UP, "postgresql": POSTGRES_UP}),
            _runner({"sqlite": SQLITE_DOWN, "postgresql": POSTGRES_DOWN}),
        ),
    ]
