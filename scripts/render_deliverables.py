"""Render a page of each edition of a real export, for docs/deliverables.md.

    .venv/bin/python scripts/render_deliverables.py

Builds a throwaway workspace (the "harrowgate" fixture of tests/fixtures/offline: its memories and
its supplier list) in a temporary SQLite database, runs a task with the offline engine through
`beyond_run`, exports the PDF of both editions with `beyond_export`, and renders the first page of
the document's body of each to docs/images/deliverable-<edition>.png.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pypdfium2

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "offline" / "harrowgate"
TASK = "Turn our supplier list into a supplier risk register with DPA status and next review date"
OUT = ROOT / "docs" / "images"


def manage(env: dict, *args: str) -> str:
    done = subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], env=env, cwd=ROOT, check=True,
                          capture_output=True, text=True)
    return done.stdout


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp}/db.sqlite3", "DJANGO_SECRET_KEY": "render",
               "BEYOND_FILES_DIR": f"{tmp}/files"}
        env.pop("REDIS_URL", None)
        manage(env, "migrate", "-v0")
        workspace = json.loads((FIXTURE / "workspace.json").read_text())
        manage(env, "beyond_workspace", "create", "hg", "--name", workspace["name"])
        for memory in workspace["memories"]:
            manage(env, "beyond_workspace", "add-memory", "hg", memory)
        manage(env, "beyond_workspace", "add-file", "hg", str(FIXTURE / "suppliers.csv"))
        run = json.loads(manage(env, "beyond_run", "--workspace", "hg", "--task", TASK, "--json"))["run"]["id"]
        for edition in ("client", "audit"):
            pdf = Path(tmp) / f"{edition}.pdf"
            manage(env, "beyond_export", str(run), "--format", "pdf", "--edition", edition, "--out", str(pdf))
            document = pypdfium2.PdfDocument(str(pdf))
            page = document[1]  # the first page after the title page
            image = page.render(scale=1.4).to_pil()
            image.save(OUT / f"deliverable-{edition}.png", optimize=True)
            print(f"docs/images/deliverable-{edition}.png: page 2 of {len(document)} of run {run}'s {edition} edition")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
