"""Beyond's offline engine: deterministic templates and framework packs serving all four roles."""
from pipeline.providers.offline.provider import MODEL, OfflineProvider

__all__ = ["MODEL", "OfflineProvider"]
