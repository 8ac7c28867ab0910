"""Language-generic checks of the text rules of every pack, the built-in ones and a French one
registered only here: detection, index terms, stemming, OCR codes, record codes, the API's and the
config's language fields and the web interface's strings all come from the pack."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from pydantic import ValidationError

from medgraph import lang
from medgraph.config.models import OcrConfig, RetrievalConfig
from medgraph.embed.lexical import fold, stem, tokenize
from medgraph.ingest.model_tier import paddle_language
from medgraph.ingest.ocr import _language_codes
from medgraph.ingest.text import detect_language
from medgraph.ingest.xml_articles import _language
from serve.api_models import ChatRequest
from serve.webui import Assets
from tests.lang_fr import registered

# one sentence per language, and a plural noun in it whose stem the index must hold
SAMPLES = {
    "en": ("The patients received metformin for the treatment of type 2 diabetes in this randomized trial.",
           "patients"),
    "de": ("Die Patienten erhielten Metformin zur Behandlung des Typ-2-Diabetes in dieser randomisierten Studie.",
           "Patienten"),
    "zh": ("患者在这项随机试验中接受二甲双胍治疗2型糖尿病。", "metformins"),
    "fr": ("Les patients ont reçu de la metformine pour le traitement du diabète de type 2 dans cet essai randomisé.",
           "patients"),
}
CODES = ["en", "de", "zh", "fr"]


@pytest.fixture(params=CODES)
def pack(request: pytest.FixtureRequest) -> Iterator[lang.LanguagePack]:
    if request.param == "fr":
        with registered() as french:
            yield french
    else:
        yield lang.get(request.param)


def test_the_text_of_each_language_is_detected_as_it(pack: lang.LanguagePack) -> None:
    text, _ = SAMPLES[pack.code]
    assert detect_language(text) == pack.code


def test_index_terms_drop_the_packs_stop_words_and_stem_with_its_stemmer(pack: lang.LanguagePack) -> None:
    text, plural = SAMPLES[pack.code]
    terms = tokenize(text, language=pack.code)
    assert terms, text
    assert not set(terms) & pack.text.index_stopwords
    assert stem(fold(plural), pack.code) != fold(plural)  # the pack's Snowball stemmer strips the plural
    if pack.spaced:
        assert stem(fold(plural), pack.code) in terms


def test_ocr_reads_each_language_with_its_packs_models(pack: lang.LanguagePack) -> None:
    assert _language_codes(pack.code, OcrConfig()) == pack.text.tesseract
    assert _language_codes(pack.code, OcrConfig(languages={pack.code: "osd"})) == "osd"  # the config overrides
    latin = _language_codes("default", OcrConfig()).split("+")
    assert (pack.text.tesseract in latin) == (not pack.text.script)
    assert paddle_language(pack.text.tesseract) == pack.text.paddle


def test_records_name_the_language_by_their_codes(pack: lang.LanguagePack) -> None:
    for code in (pack.code, *pack.record_codes):
        assert lang.by_record_code(code.upper()) == pack.code
        assert _language(code, "") == pack.code


def test_the_api_and_the_config_take_the_packs_code(pack: lang.LanguagePack) -> None:
    assert ChatRequest(message="x", language=pack.code).language == pack.code
    assert RetrievalConfig(languages=(pack.code,)).languages == (pack.code,)
    assert pack.code in RetrievalConfig().languages  # the default: every registered pack


def test_an_unknown_language_is_a_clear_error() -> None:
    with pytest.raises(ValidationError, match="unknown language 'xx'"):
        ChatRequest(message="x", language="xx")
    with pytest.raises(ValidationError, match="registered languages are en, de, zh"):
        RetrievalConfig(languages=("en", "xx"))
    with pytest.raises(lang.UnknownLanguage):
        lang.get("xx")
    assert lang.get_or_pivot("xx").code == lang.PIVOT


def test_the_web_interface_gets_its_languages_and_strings_from_the_packs(pack: lang.LanguagePack) -> None:
    asset = Assets().get("i18n.json")
    assert asset is not None and asset.media_type == "application/json"
    data = json.loads(asset.body)
    assert {"code": pack.code, "name": pack.native_name, "html_lang": pack.html_lang} in data["languages"]
    assert data["strings"][pack.code] == dict(pack.ui)
    assert data["pivot"] == lang.PIVOT
    if pack.code != "fr":  # the built-in packs translate every string; French falls back to English
        assert set(pack.ui) == set(lang.pivot().ui)


def test_registering_is_reversible_and_refuses_a_second_pack_of_one_code() -> None:
    before = lang.codes()
    with registered() as french:
        assert lang.codes() == (*before, "fr")
        with pytest.raises(ValueError, match="already registered"):
            lang.register(french)
    assert lang.codes() == before
    with pytest.raises(ValueError, match="pivot"):
        lang.unregister(lang.PIVOT)
