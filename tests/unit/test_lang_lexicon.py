"""The lexicon section of every language pack (the built-ins and the French test pack) drives the
gazetteer, the linker and the vocabulary build: names in the language link, the pack's entity stop
words are never matched in its text, and a pack without morphology hooks still links exact names."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from medgraph import lang
from medgraph.config.models import LinkingConfig
from medgraph.extract.ner import GazetteerNER
from medgraph.lang import LanguagePack
from medgraph.lang.sections.lexicon import AbbreviationTable
from medgraph.link.dense import index_names
from medgraph.link.devset import held_out
from medgraph.link.linker import Linker
from medgraph.ontology.sources import read_mesh_translation_xml
from medgraph.ontology.vocabulary import Vocabulary
from tests.helpers import terms_vocabulary
from tests.lang_fr import french_pack, registered

CODES = (*lang.codes(), "fr")  # the built-in packs and the French test pack
KIDNEY = "D007674"
# one name of Kidney Diseases in each language, and text that names it
NAMES = {"en": "Kidney Diseases", "de": "Nierenerkrankung", "zh": "肾脏疾病", "fr": "Maladie rénale"}
TEXTS = {
    "en": "She has {} since childhood.",
    "de": "Die Patientin hat seit der Kindheit {}.",
    "zh": "患者自幼患有{}。",
    "fr": "La patiente a {} depuis l'enfance.",
}
STOP_ID = "D900{:03d}"  # descriptors whose English names are the packs' stop words


def _stop_words() -> list[str]:
    words = {w for p in (*lang.packs(), french_pack()) for w in p.lexicon.stop_words}
    return sorted(w for w in words if w.isalpha() and len(w) >= 4)


@pytest.fixture(scope="module")
def vocab(tmp_path_factory: pytest.TempPathFactory) -> Vocabulary:
    rows = [(KIDNEY, "en", NAMES["en"]), *((KIDNEY, code, name) for code, name in NAMES.items() if code != "en")]
    rows += [(STOP_ID.format(i), "en", word) for i, word in enumerate(_stop_words())]
    built: Vocabulary = terms_vocabulary(tmp_path_factory.mktemp("lexicon"), rows)
    return built


@contextmanager
def _pack(code: str, pack: LanguagePack | None = None) -> Iterator[LanguagePack]:
    """The pack of ``code`` (the French test pack, or ``pack``, registered for the block)."""
    if code == "fr" or pack is not None:
        with registered(pack) as found:
            yield found
    else:
        yield lang.get(code)


def _found(ner: GazetteerNER, text: str, language: str) -> set[str]:
    return {m.surface.lower() for m in ner.find(text, language)}


@pytest.mark.parametrize("code", CODES)
def test_the_linker_links_a_name_written_in_the_language(vocab: Vocabulary, code: str) -> None:
    with _pack(code):
        res = Linker(vocab, LinkingConfig(tfidf=False)).link(NAMES[code], code)
        mentions = GazetteerNER(vocab).find(TEXTS[code].format(NAMES[code]), code)
    assert (res.mesh_id, res.method) == (KIDNEY, "exact")
    assert [(m.surface, m.mesh_id) for m in mentions] == [(NAMES[code], KIDNEY)]


@pytest.mark.parametrize("code", CODES)
def test_the_packs_entity_stop_words_are_not_matched_in_its_text(vocab: Vocabulary, code: str) -> None:
    with _pack(code) as pack:
        ner = GazetteerNER(vocab)
        pivot_words = sorted(w for w in lang.pivot().lexicon.stop_words if w in _stop_words())[:3]
        own = sorted(w for w in pack.lexicon.stop_words - lang.pivot().lexicon.stop_words if w in _stop_words())
        for word in pivot_words:  # the pivot's stop words hold in every language's text
            assert word not in _found(ner, TEXTS[code].format(word.capitalize()), code)
        for word in own:  # the pack's own: in its text only (English text matches the MeSH term)
            text = TEXTS[code].format(word.capitalize())
            assert word not in _found(ner, text, code)
            assert word in _found(ner, text, lang.PIVOT)
    assert pivot_words
    assert own or code in (lang.PIVOT, "zh")  # every other pack names some of its own


def test_a_pack_without_morphology_hooks_still_links_exact_names(vocab: Vocabulary) -> None:
    german = "Nierenerkrankungen"  # a plural the German pack's generated forms know
    with _pack("fr") as french:
        assert french.lexicon.forms is None and french.lexicon.compounds is None and french.lexicon.compose is None
        linker = Linker(vocab, LinkingConfig(tfidf=False))
        assert linker.link("maladie rénale", "fr").mesh_id == KIDNEY
        assert linker.link(german, "de").mesh_id == KIDNEY
        assert linker.link(german, "fr").mesh_id is None  # German morphology is German text's only
        ner = GazetteerNER(vocab)
        assert _found(ner, TEXTS["de"].format(german), "de") == {german.lower()}
        assert _found(ner, TEXTS["fr"].format(german), "fr") == set()


def _plural_forms(surface: str) -> list[str]:
    """French plurals to singulars: every word without its final -s / -x."""
    return [" ".join(w[:-1] if w.endswith(("s", "x")) and len(w) > 3 else w for w in surface.split())]


def test_a_pack_adds_its_morphology_through_its_lexicon(vocab: Vocabulary) -> None:
    plural = "Maladies rénales"
    with _pack("fr"):
        assert Linker(vocab, LinkingConfig(tfidf=False)).link(plural, "fr").method != "language"
    french = french_pack()
    with _pack("fr", dataclasses.replace(french, lexicon=dataclasses.replace(french.lexicon, forms=_plural_forms))):
        res = Linker(vocab, LinkingConfig(tfidf=False)).link(plural, "fr")
        other = Linker(vocab, LinkingConfig(tfidf=False)).link(plural, lang.PIVOT)
    assert (res.mesh_id, res.method) == (KIDNEY, "language")
    assert other.method != "language"


@dataclass(frozen=True)
class _Row:
    mesh_id: str


def test_a_packs_curated_abbreviations_are_read_in_its_text_only(vocab: Vocabulary, tmp_path: Path) -> None:
    table = tmp_path / "fr_abbreviations.tsv"
    table.write_text("abbreviation\tmesh_id\nIRC\t" + KIDNEY + "\n", encoding="utf-8")
    french = french_pack()
    spec = AbbreviationTable(path=table, read=lambda: {"IRC": _Row(KIDNEY)}, source="test", licence="test")
    with _pack("fr", dataclasses.replace(french, lexicon=dataclasses.replace(french.lexicon, abbreviations=spec))):
        linker = Linker(vocab, LinkingConfig(tfidf=False))
        ner = GazetteerNER(vocab)
        assert (linker.link("IRC", "fr").mesh_id, linker.link("IRC", "fr").method) == (KIDNEY, "abbreviation")
        assert linker.link("IRC", lang.PIVOT).mesh_id is None
        assert [(m.mesh_id, m.method) for m in ner.find("Une IRC connue.", "fr")] == [(KIDNEY, "abbreviation")]
        assert ner.find("Une irc connue.", "fr") == []  # case-sensitive
        assert ner.find("A known IRC.", lang.PIVOT) == []


def test_translated_mesh_records_name_their_language_by_record_code(tmp_path: Path) -> None:
    xml = tmp_path / "fr.xml"
    xml.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<DescriptorRecordSet LanguageCode="fre"><DescriptorRecord>'
        f"<DescriptorUI>{KIDNEY}</DescriptorUI><DescriptorName><String>Néphropathies</String></DescriptorName>"
        "</DescriptorRecord></DescriptorRecordSet>", encoding="utf-8")
    assert {row.lang for row in read_mesh_translation_xml(xml, "xx")} == {"xx"}  # no French pack: the default
    with _pack("fr"):
        assert {row.lang for row in read_mesh_translation_xml(xml, "xx")} == {"fr"}


def test_every_registered_language_has_its_names_in_the_dense_index_and_the_dev_set(vocab: Vocabulary) -> None:
    assert NAMES["fr"] not in index_names(vocab)[0]
    with _pack("fr"):
        names, _ = index_names(vocab)
        _, queries = held_out(vocab, fraction=0.9, seed=0)  # the one descriptor with names beyond English
    assert {NAMES[c] for c in CODES} <= set(names)
    assert {(q[0], q[1]) for q in queries} == {(c, NAMES[c]) for c in CODES if c != lang.PIVOT}
