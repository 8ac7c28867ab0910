from __future__ import annotations

from medgraph.config.models import ChunkingConfig
from medgraph.ingest.chunking import Chunker, section_paths
from medgraph.ingest.text import count_tokens, detect_language, language_shares, split_sentences
from medgraph.schemas import Document, Section


def _doc(sections, language="en"):
    return Document(doc_id="d1", title="T", language=language, sections=sections)


def test_section_paths_follow_levels():
    secs = [Section("Intro", "a", 1), Section("Methods", "b", 1), Section("Dosing", "c", 2),
            Section("Renal", "d", 3), Section("Safety", "e", 2), Section("Results", "f", 1)]
    assert section_paths(secs) == [
        ["Intro"], ["Methods"], ["Methods", "Dosing"], ["Methods", "Dosing", "Renal"],
        ["Methods", "Safety"], ["Results"],
    ]


def test_children_respect_max_tokens_and_keep_parent_text():
    sentence = "Metformin lowers hepatic glucose production in type 2 diabetes. "
    long_para = sentence * 60  # ~ 660 tokens
    doc = _doc([Section("Background", "Short intro paragraph about diabetes care.", 1),
                Section("Pharmacology", long_para + "\n\n" + "Second paragraph on lactic acidosis risk.", 2)])
    chunks = Chunker(ChunkingConfig(max_tokens=100, parent_max_tokens=400, min_tokens=1)).chunk(doc)
    assert all(c.token_count <= 100 for c in chunks)
    pharm = [c for c in chunks if c.section_path == ["Background", "Pharmacology"]]
    assert len(pharm) >= 7
    for c in pharm:
        assert c.text in c.parent_text  # the child is inside its parent
        assert count_tokens(c.parent_text) <= 400
    assert len({c.parent_id for c in pharm}) >= 2  # the long section is cut into several parents
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert all(c.doc_chunk_count == len(chunks) for c in chunks)
    # nothing is lost: every sentence of the input appears in some chunk
    assert "lactic acidosis" in " ".join(c.text for c in chunks)


def test_chunk_ids_are_stable_and_change_with_content():
    doc = _doc([Section("A", "Aspirin reduces the risk of myocardial infarction.", 1)])
    ids1 = [c.chunk_id for c in Chunker(ChunkingConfig(min_tokens=1)).chunk(doc)]
    ids2 = [c.chunk_id for c in Chunker(ChunkingConfig(min_tokens=1)).chunk(doc)]
    changed = _doc([Section("A", "Aspirin reduces the risk of stroke.", 1)])
    ids3 = [c.chunk_id for c in Chunker(ChunkingConfig(min_tokens=1)).chunk(changed)]
    assert ids1 == ids2 and ids1 != ids3


def test_chinese_is_counted_per_character_and_split_on_cjk_punctuation():
    text = "二甲双胍是治疗2型糖尿病的一线药物。" * 30
    assert count_tokens("二甲双胍") == 4
    assert len(split_sentences(text)) == 30
    chunks = Chunker(ChunkingConfig(max_tokens=50, min_tokens=1)).chunk(_doc([Section("药物", text)], "zh"))
    assert all(c.token_count <= 50 for c in chunks)
    assert " " not in chunks[0].text  # Chinese sentences are joined without spaces


def test_untitled_sections_get_a_path():
    chunks = Chunker(ChunkingConfig(min_tokens=1)).chunk(_doc([Section("", "Some text about insulin therapy.")]))
    assert chunks[0].section_path == ["Main text"]


def test_detect_language():
    assert detect_language("Der Patient wurde mit Metformin behandelt und die Blutzuckerwerte sind stabil.") == "de"
    assert detect_language("The patient was treated with metformin and glucose levels are stable.") == "en"
    assert detect_language("患者接受二甲双胍治疗，血糖稳定。") == "zh"
    # short questions, where function-word counts say little
    assert detect_language("Wie wird Bluthochdruck behandelt?") == "de"
    assert detect_language("Welche Behandlung bekommen Patienten nach einem Herzinfarkt?") == "de"
    assert detect_language("Is diabetes a risk factor for stroke?") == "en"
    assert detect_language("心肌梗死患者可以服用Aspirin吗？") == "zh"  # a Latin drug name inside Chinese
    assert detect_language("Aspirin", default="de") == "de"  # a lone name is not evidence: the default


def test_language_shares_of_mixed_input():
    text = ("Der Patient wurde nach dem Herzinfarkt mit Aspirin behandelt und entlassen. "
            "The patient was discharged on dual antiplatelet therapy after the infarction. "
            "患者出院后继续服用阿司匹林。")
    shares = language_shares(text)
    assert set(shares) == {"de", "en", "zh"}
    assert abs(sum(shares.values()) - 1.0) < 1e-3
    assert shares["en"] > shares["zh"] and shares["de"] > shares["zh"]


def test_a_chunk_mostly_in_another_language_gets_its_own_language():
    from medgraph.config.models import ChunkingConfig
    from medgraph.ingest.chunking import Chunker
    from medgraph.schemas import Document, Section

    german = "Der Patient wurde mit Metformin behandelt und die Nierenfunktion wurde regelmäßig kontrolliert."
    english = ("Metformin is the first-line drug for type 2 diabetes and its most common side effects are "
               "diarrhea and nausea in the first weeks of treatment.")
    doc = Document(doc_id="d", title="Arztbrief", language="de", source_id="d",
                   sections=[Section(title="Verlauf", text=german), Section(title="Quoted abstract", text=english)])
    chunks = Chunker(ChunkingConfig(min_tokens=1)).chunk(doc)
    languages = {c.section_path[-1]: c.language for c in chunks}
    assert languages == {"Verlauf": "de", "Quoted abstract": "en"}
