from __future__ import annotations

import pytest

from medgraph.extract.normalise import normalise, normalise_units, timing_code


@pytest.mark.parametrize("phrase,code", [
    ("twice daily", "BID"), ("bid", "BID"), ("b.i.d.", "BID"), ("twice a day", "BID"),
    ("每日两次", "BID"), ("每天2次", "BID"), ("zweimal täglich", "BID"), ("2x täglich", "BID"),
    ("three times daily", "TID"), ("tid", "TID"), ("dreimal täglich", "TID"), ("一日三次", "TID"),
    ("four times a day", "QID"), ("qid", "QID"), ("每日四次", "QID"),
    ("once daily", "QD"), ("einmal täglich", "QD"), ("每日一次", "QD"),
    ("every other day", "QOD"), ("隔日一次", "QOD"),
    ("every 8 hours", "Q8H"), ("q6h", "Q6H"), ("alle 4 Stunden", "Q4H"), ("每8小时一次", "Q8H"),
    ("at bedtime", "BED"), ("zur Nacht", "BED"), ("weekly", "WK"),
])
def test_frequencies_map_to_fhir_timing_codes(phrase, code):
    assert timing_code(phrase) == code


def test_no_timing_in_plain_text():
    assert timing_code("Patients with diabetes were enrolled in the study.") is None
    assert timing_code("every 5 hours") is None  # not a FHIR timing abbreviation


@pytest.mark.parametrize("raw,expected", [
    ("500mg", "500 mg"), ("2.5mg/kg", "2.5 mg/kg"), ("5ml", "5 mL"), ("10μg", "10 µg"), ("20ug", "20 µg"),
    ("2,5mg", "2,5 mg"), ("每次500mg", "每次500 mg"), ("1000 IU", "1000 IU"), ("A500mg", "A500mg"),
])
def test_units(raw, expected):
    assert normalise_units(raw) == expected


def test_normalise_reports_spans_in_normalised_text():
    out = normalise("Metformin 500mg twice daily, then 1000mg bid.")
    assert out.text == "Metformin 500 mg twice daily, then 1000 mg bid."
    assert [(t.code, out.text[t.start:t.end]) for t in out.timings] == [("BID", "twice daily"), ("BID", "bid.")]
