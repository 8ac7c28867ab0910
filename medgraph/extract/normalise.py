"""Clinical text normaliser: dose units and dosing frequencies.

Input: chunk text and its language. Output: ``NormalisedText`` — the text with units spaced
and unified ("500mg" → "500 mg", "5ml" → "5 mL", "μg"/"ug" → "µg") and the dosing frequencies
found in it as HL7 FHIR ``TimingAbbreviation`` codes ("twice daily" / "bid" / "每日两次" /
"zweimal täglich" → ``BID``), each with its span in the normalised text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_UNIT_CANON = {
    "mg": "mg", "g": "g", "kg": "kg", "mcg": "mcg", "µg": "µg", "μg": "µg", "ug": "µg",
    "ml": "mL", "l": "L", "dl": "dL", "iu": "IU", "ie": "IE", "mmol": "mmol", "mol": "mol",
    "meq": "mEq", "u": "U", "mg/kg": "mg/kg", "mg/dl": "mg/dL", "mmol/l": "mmol/L",
    "mg/ml": "mg/mL", "µg/kg": "µg/kg", "mmhg": "mmHg", "%": "%",
}
_UNIT_RE = re.compile(
    r"(?<![A-Za-z0-9_.,])(\d+(?:[.,]\d+)?)\s*("
    + "|".join(sorted((re.escape(u) for u in _UNIT_CANON if u != "%"), key=len, reverse=True))
    + r")(?![\w/])",
    re.IGNORECASE,
)

# (pattern, code). Order matters only for overlapping alternatives; longer phrases first.
_TIMING_PATTERNS: list[tuple[str, str]] = [
    # English
    (r"\b(?:twice|two times)\s+(?:a|per|each)?\s*day\b|\btwice daily\b|\bb\.?i\.?d\b\.?", "BID"),
    (r"\b(?:three times|thrice)\s+(?:a|per|each)?\s*day\b|\b(?:three times|thrice) daily\b|\bt\.?i\.?d\b\.?", "TID"),
    (r"\bfour times\s+(?:a|per|each)?\s*day\b|\bfour times daily\b|\bq\.?i\.?d\b\.?", "QID"),
    (r"\bevery other day\b|\bq\.?o\.?d\b\.?", "QOD"),
    (r"\b(?:at bedtime|before sleep)\b|\bq\.?h\.?s\b\.?", "BED"),
    (r"\bonce\s+(?:a|per)\s+day\b|\bonce daily\b|\bq\.?d\b\.?", "QD"),
    (r"\bonce\s+(?:a|per)\s+week\b|\bweekly\b", "WK"),
    (r"\bonce\s+(?:a|per)\s+month\b|\bmonthly\b", "MO"),
    # German
    (r"\b(?:zweimal|2\s*[x×-]\s*(?:mal)?)\s*(?:täglich|tgl\.?|am tag|pro tag)", "BID"),
    (r"\b(?:dreimal|3\s*[x×-]\s*(?:mal)?)\s*(?:täglich|tgl\.?|am tag|pro tag)", "TID"),
    (r"\b(?:viermal|4\s*[x×-]\s*(?:mal)?)\s*(?:täglich|tgl\.?|am tag|pro tag)", "QID"),
    (r"\b(?:einmal|1\s*[x×-]\s*(?:mal)?)\s*(?:täglich|tgl\.?|am tag|pro tag)", "QD"),
    (r"\bjeden zweiten tag\b", "QOD"),
    (r"\b(?:zur nacht|vor dem schlafengehen)\b", "BED"),
    (r"\b(?:einmal )?wöchentlich\b", "WK"),
    # Chinese
    (r"(?:每日|每天|一日|一天)(?:两|二|2)次|每12小时一次", "BID"),
    (r"(?:每日|每天|一日|一天)(?:三|3)次|每8小时一次", "TID"),
    (r"(?:每日|每天|一日|一天)(?:四|4)次|每6小时一次", "QID"),
    (r"(?:每日|每天|一日|一天)(?:一|1)次", "QD"),
    (r"隔日一次|隔天一次", "QOD"),
    (r"睡前", "BED"),
    (r"每周一次", "WK"),
]
_EVERY_N_HOURS = [
    (re.compile(r"\bevery\s+(\d{1,2})\s*(?:h|hrs?|hours?)\b|\bq\s?(\d{1,2})\s?h\b", re.IGNORECASE), "Q{}H"),
    (re.compile(r"\balle\s+(\d{1,2})\s*(?:h|std\.?|stunden)\b", re.IGNORECASE), "Q{}H"),
    (re.compile(r"每(\d{1,2})小时(?:一次)?"), "Q{}H"),
]
_FHIR_HOURS = {1, 2, 3, 4, 6, 8}
_COMPILED = [(re.compile(p, re.IGNORECASE), code) for p, code in _TIMING_PATTERNS]


@dataclass(frozen=True)
class Timing:
    start: int
    end: int
    surface: str
    code: str


@dataclass(frozen=True)
class NormalisedText:
    text: str
    timings: tuple[Timing, ...]


def normalise_units(text: str) -> str:
    """"500mg" → "500 mg"; unit spellings unified; the number is kept as written."""

    def repl(m: re.Match[str]) -> str:
        unit = _UNIT_CANON.get(m.group(2).lower(), m.group(2))
        return f"{m.group(1)} {unit}"

    return _UNIT_RE.sub(repl, text)


def find_timings(text: str) -> list[Timing]:
    """Dosing frequencies as FHIR timing codes, non-overlapping, in text order."""
    found: list[Timing] = []
    taken: list[tuple[int, int]] = []

    def add(start: int, end: int, code: str) -> None:
        if any(s < end and start < e for s, e in taken):
            return
        taken.append((start, end))
        found.append(Timing(start, end, text[start:end], code))

    for pattern, template in _EVERY_N_HOURS:
        for m in pattern.finditer(text):
            hours = int(next(g for g in m.groups() if g))
            if hours in _FHIR_HOURS:
                add(m.start(), m.end(), template.format(hours))
    for pattern, code in _COMPILED:
        for m in pattern.finditer(text):
            add(m.start(), m.end(), code)
    return sorted(found, key=lambda t: t.start)


def normalise(text: str) -> NormalisedText:
    spaced = normalise_units(text)
    return NormalisedText(spaced, tuple(find_timings(spaced)))


def timing_code(phrase: str) -> str | None:
    """The FHIR code of a phrase that is (or contains) one dosing frequency, else None."""
    timings = find_timings(normalise_units(phrase))
    return timings[0].code if timings else None


__all__ = ["NormalisedText", "Timing", "find_timings", "normalise", "normalise_units", "timing_code"]
