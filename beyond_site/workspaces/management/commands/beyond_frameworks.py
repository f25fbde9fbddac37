"""Framework packs: list what workspaces can enable, import an OSCAL catalogue as a new pack.

    python manage.py beyond_frameworks list
    python manage.py beyond_frameworks import-oscal FILE [--key KEY] [--name NAME]
"""
from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils.text import slugify

from pipeline.frameworks import ALL_FRAMEWORKS
from pipeline.frameworks.oscal import pack_from_oscal
from beyond_site.workspaces import knowledge
from beyond_site.workspaces.frameworks import available_packs


def read_catalogue(path: Path) -> dict:
    """The `catalog` object of an OSCAL catalogue file, or CommandError saying what is wrong."""
    if not path.is_file():
        raise CommandError(f"no such file: {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CommandError(f"{path.name} is not valid JSON ({exc})") from None
    catalog = data.get("catalog") if isinstance(data, dict) else None
    if not isinstance(catalog, dict) or not isinstance(catalog.get("metadata", {}), dict):
        raise CommandError(f"{path.name} is not an OSCAL catalogue (no \"catalog\" object); "
                           "profiles and component definitions are not supported")
    if not catalog.get("groups") and not catalog.get("controls"):
        raise CommandError(f"{path.name}: the catalogue has no groups or controls: nothing to import")
    return catalog


class Command(BaseCommand):
    help = "List framework packs, or import an OSCAL catalogue (JSON) as a pack workspaces can enable."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        sub.add_parser("list", help="shipped and imported packs")
        importer = sub.add_parser("import-oscal", help="convert and store an OSCAL catalogue")
        importer.add_argument("file")
        importer.add_argument("--key", help="pack key (default: from the catalogue title)")
        importer.add_argument("--name", help="display name (default: the catalogue title)")

    def handle(self, *args, **opts):
        if opts["action"] == "list":
            for key, pack in available_packs().items():
                origin = "shipped" if key in ALL_FRAMEWORKS else "imported"
                self.stdout.write(f"{key:<24} {pack.name} ({len(pack.entries)} entries, {origin})")
            return
        catalog = read_catalogue(Path(opts["file"]))
        title = (catalog.get("metadata") or {}).get("title") or Path(opts["file"]).stem
        key = opts["key"] or slugify(title)[:60]
        name = opts["name"] or title
        if not key or slugify(key) != key:
            raise CommandError(f"--key must be a slug (letters, digits, hyphens): {key!r}")
        try:
            pack = pack_from_oscal({"catalog": catalog}, key, name)
            row, created = knowledge.save_framework_pack(pack)
        except (KeyError, TypeError, AttributeError) as exc:
            raise CommandError(f"{Path(opts['file']).name}: malformed OSCAL catalogue ({type(exc).__name__}: {exc})"
                               ) from None
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        verb = "Imported" if created else "Updated"
        self.stdout.write(f"{verb} framework pack {row.key} ({row.name}): {len(pack['entries'])} entries. "
                          f"Enable it for a workspace in the admin or with set_enabled_frameworks.")
