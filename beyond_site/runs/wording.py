"""Words a run is shown with, wherever it is shown (the chat, exports, the audit pages).

The badge vocabulary itself lives with the release rules (pipeline.badges).
"""
from __future__ import annotations

OFFLINE_TIP = ("Drafted by Beyond's built-in offline engine (templates and rules, no language model): "
               "useful for trying the product, not a substitute for a model-drafted document.")
