"""Regenerate the two NIST packs from the OSCAL catalogues.

Usage: python -m pipeline.frameworks.build_packs [OSCAL_DIR]   (default tests/fixtures/oscal)
The generated JSON is committed, so nothing reads the OSCAL folder at run time.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from . import DATA_DIR
from .oscal import pack_from_oscal

DEFAULT_OSCAL_DIR = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "oscal"

# (catalogue file, pack key, display name, aliases)
NIST_CATALOGUES = [
    ("NIST_SP-800-53_rev5_catalog-min_v5.0.1.json", "nist-800-53r5", "NIST SP 800-53 Rev. 5",
     ["NIST SP 800-53 Rev. 5", "NIST SP 800-53r5", "NIST 800-53", "SP 800-53", "800-53", "NIST SP 800-53",
      "NIST SP 800-53 Revision 5", "800-53 Rev. 5", "800-53r5"]),
    ("NIST_CSF_v2.0_catalog-min.json", "nist-csf-2.0", "NIST CSF 2.0",
     ["NIST CSF 2.0", "CSF 2.0", "NIST CSF", "CSF", "NIST Cybersecurity Framework 2.0",
      "Cybersecurity Framework 2.0", "NIST Cybersecurity Framework"]),
]


def build_nist_packs(oscal_dir: Path = DEFAULT_OSCAL_DIR) -> dict[str, dict]:
    """Convert each NIST catalogue in `oscal_dir` into its pack dict."""
    packs = {}
    for filename, key, name, aliases in NIST_CATALOGUES:
        with open(oscal_dir / filename, encoding="utf-8") as handle:
            pack = pack_from_oscal(json.load(handle), key, name)
        pack["aliases"] = aliases
        packs[key] = pack
    return packs


def main(argv: list[str]) -> int:
    oscal_dir = Path(argv[1]) if len(argv) > 1 else DEFAULT_OSCAL_DIR
    for key, pack in build_nist_packs(oscal_dir).items():
        target = DATA_DIR / f"{key}.json"
        target.write_text(json.dumps(pack, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {target} ({len(pack['entries'])} entries)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
