"""The one month table: the months' English names and what each name and abbreviation numbers.

Dates are read in drafts and sources (pipeline/specifics/dates.py), in the offline engine's tasks
and facts, in calibration's planted changes, and in the spreadsheets an export writes; all of them
read the months here. (Not the standard library's `calendar.month_name`: it follows the process's
locale.)
"""
from __future__ import annotations

MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
               "November", "December")
_ABBREVIATIONS = {"September": ("sep", "sept")}
#: Each month's name and usual abbreviations, in lower case, to its number ("sept" -> 9).
MONTH_NUMBERS = {spelling: number for number, name in enumerate(MONTH_NAMES, start=1)
                 for spelling in (name.lower(), *_ABBREVIATIONS.get(name, (name[:3].lower(),)))}
#: The full names as alternatives of a regular expression (to be grouped by the caller).
MONTH_PATTERN = "|".join(MONTH_NAMES)
