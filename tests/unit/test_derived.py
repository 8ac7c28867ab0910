"""Tables kept beside a saved vocabulary (medgraph.ontology.derived): derived once, read back,
derived again when what they are made of changes, never trusted when torn, pruned."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from medgraph.config.models import VocabularyConfig, VocabularySource
from medgraph.ontology import derived as derived_module
from medgraph.ontology.build import build_vocabulary
from medgraph.ontology.derived import derived
from medgraph.ontology.vocabulary import Vocabulary

XML = Path(__file__).resolve().parents[1] / "fixtures" / "mesh" / "desc_fixture.xml"


@pytest.fixture()
def vocab(tmp_path: Path) -> Vocabulary:
    built = build_vocabulary(VocabularyConfig(sources=[VocabularySource(kind="mesh_xml", path=str(XML))]))
    built.save(tmp_path / "vocab")
    return Vocabulary.load(tmp_path / "vocab")


def test_derived_once_then_read_and_again_when_its_inputs_change(vocab: Vocabulary, tmp_path: Path) -> None:
    calls: list[int] = []

    def build() -> dict[str, int]:
        calls.append(1)
        return {"entities": len(vocab.entities)}

    source = tmp_path / "code.py"
    source.write_text("A = 1\n")
    assert derived(vocab, "table", [1], [source], build) == ({"entities": len(vocab.entities)}, False)
    assert derived(vocab, "table", [1], [source], build) == ({"entities": len(vocab.entities)}, True)
    assert len(calls) == 1
    assert derived(vocab, "table", [2], [source], build)[1] is False  # other settings
    source.write_text("A = 2\n")
    assert derived(vocab, "table", [2], [source], build)[1] is False  # other code
    vocab.save(vocab.directory)  # the vocabulary written again
    assert derived(vocab, "table", [2], [source], build)[1] is False
    assert len(calls) == 4
    # the newest KEEP of the name stay; another name is not touched
    assert derived(vocab, "other", [], [], build)[1] is False
    kept = sorted(p.name for p in Path(vocab.directory).glob("table-*.pkl"))
    assert len(kept) == derived_module.KEEP and len(list(Path(vocab.directory).glob("other-*.pkl"))) == 1


def test_torn_or_foreign_files_are_derived_again(vocab: Vocabulary) -> None:
    path = derived_module.table_file(vocab, "table", [], [])
    assert path is not None
    derived(vocab, "table", [], [], lambda: "first")
    path.write_bytes(path.read_bytes()[:5])
    assert derived(vocab, "table", [], [], lambda: "second") == ("second", False)
    path.write_bytes(pickle.dumps(("another format", "x")))
    assert derived(vocab, "table", [], [], lambda: "third") == ("third", False)
    assert derived(vocab, "table", [], [], lambda: "fourth") == ("third", True)


def test_a_file_that_cannot_be_written_costs_only_the_derivation(vocab: Vocabulary) -> None:
    path = derived_module.table_file(vocab, "table", [], [])
    assert path is not None
    path.with_name(f"{path.name}.{os.getpid()}.tmp").mkdir()  # where the table would be written
    assert derived(vocab, "table", [], [], lambda: 1) == (1, False)
    assert derived(vocab, "table", [], [], lambda: 2) == (2, False) and not path.exists()


def test_a_vocabulary_built_in_memory_keeps_nothing() -> None:
    built = build_vocabulary(VocabularyConfig(sources=[VocabularySource(kind="mesh_xml", path=str(XML))]))
    assert derived_module.table_file(built, "table", [], []) is None
    assert derived(built, "table", [], [], lambda: 1) == (1, False)


def test_the_linkers_tables_are_read_back_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The compose step's glosses and the fuzzy index: derived by the first process, read by the next."""
    from medgraph.link.compose import Composer
    from medgraph.link.tfidf import CharNgramIndex

    built = build_vocabulary(VocabularyConfig(sources=[
        VocabularySource(kind="mesh_xml", path=str(XML)),
        VocabularySource(kind="multilingual_terms", path="pkg:seed_terms.tsv")]))
    built.save(tmp_path / "vocab")
    vocab = Vocabulary.load(tmp_path / "vocab")
    composer, index = Composer.for_vocabulary(vocab), CharNgramIndex.for_vocabulary(vocab)
    glosses = composer.glosses("急性心肌梗死", "zh")
    fuzzy = index.search(["myocardal infarction", "metformine"])
    assert glosses and fuzzy[0][0] and fuzzy[1][0]

    def derive(*args: object, **kwargs: object) -> None:
        raise AssertionError("derived although saved")

    monkeypatch.setattr(Composer, "__init__", derive)
    monkeypatch.setattr(CharNgramIndex, "__init__", derive)
    again = Composer.for_vocabulary(vocab)
    assert again.glosses("急性心肌梗死", "zh") == glosses and again.vocab is vocab
    assert again.state() == composer.state()
    assert CharNgramIndex.for_vocabulary(vocab).search(["myocardal infarction", "metformine"]) == fuzzy
