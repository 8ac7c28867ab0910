"""A small corpus with three planted themes, and a planted-partition graph, for the community tests."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

from medgraph.schemas import Chunk, Entity, Mention

# three themes of MeSH descriptors; each document names entities of one theme only
THEMES = {
    "cardio": [("D009203", "myocardial infarction"), ("D006973", "hypertension"), ("D001241", "aspirin"),
               ("D013927", "thrombosis")],
    "diabetes": [("D003924", "type 2 diabetes"), ("D008687", "metformin"), ("D007328", "insulin"),
                 ("D005947", "glucose")],
    "infection": [("D011014", "pneumonia"), ("D005334", "fever"), ("D000900", "antibiotics"),
                  ("D013203", "staphylococcus")],
}
TEMPLATES = [
    "Patients with {a} often present with {b}. In this cohort {c} was studied together with {d}.",
    "The review found that {b} and {c} were linked. Treatment of {a} changed the course of {d}.",
    "Guidelines discuss {c} for {a}. Clinicians also monitor {d} and {b} closely.",
]


def vocab_tsv(path: Path) -> list[dict[str, str]]:
    """A multilingual_terms TSV of the theme entities; returns the vocabulary sources."""
    lines = ["mesh_id\tlang\tterm\tsource"]
    for entities in THEMES.values():
        lines += [f"{mesh_id}\ten\t{term}\ttest" for mesh_id, term in entities]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [{"kind": "multilingual_terms", "path": str(path)},
            {"kind": "mesh_tree", "path": "pkg:mesh_tree_numbers.tsv.gz"}]


def theme_records(themes: list[str] | None = None, prefix: str = "") -> list[dict[str, Any]]:
    """Three documents per theme, each naming the theme's four entities in a different order."""
    out = []
    for theme in themes or list(THEMES):
        terms = [t for _, t in THEMES[theme]]
        for i, template in enumerate(TEMPLATES):
            a, b, c, d = terms[i:] + terms[:i]
            out.append({"doc_id": f"{prefix}{theme}-{i}", "title": f"{theme} {i}", "language": "en",
                        "text": template.format(a=a, b=b, c=c, d=d)})
    return out


def planted_partition(groups: int = 4, size: int = 25, p_in: float = 0.4, p_out: float = 0.01,
                      seed: int = 7) -> tuple[list[tuple[str, str, int]], dict[str, str]]:
    """A weighted planted-partition graph and its true partition (node -> group)."""
    rng = random.Random(seed)
    nodes = [f"g{g}n{i:02d}" for g in range(groups) for i in range(size)]
    truth = {n: n.split("n")[0] for n in nodes}
    edges = []
    for i, a in enumerate(nodes):
        for b in nodes[i + 1:]:
            if rng.random() < (p_in if truth[a] == truth[b] else p_out):
                edges.append((a, b, rng.randint(1, 3)))
    return edges, truth


def planted_chunks(groups: int = 3, size: int = 12, chunks_per_group: int = 30, noise: int = 4,
                   seed: int = 11) -> tuple[list[Chunk], list[Mention], list[Entity], dict[str, str]]:
    """A bipartite corpus whose co-occurrence graph has planted communities: each chunk names
    3-5 entities of one group; ``noise`` chunks name one entity from each of two groups."""
    rng = random.Random(seed)
    truth: dict[str, str] = {}
    entities = []
    for g in range(groups):
        for i in range(size):
            mesh_id = f"DP{g}{i:03d}"
            truth[mesh_id] = f"group{g}"
            entities.append(Entity(mesh_id, f"Planted {g}-{i}", "Disease"))
    by_group = {g: [e.mesh_id for e in entities if truth[e.mesh_id] == f"group{g}"] for g in range(groups)}
    chunks, mentions = [], []

    def add(doc: int, members: list[str]) -> None:
        words = [f"term{m}" for m in members]
        text = "Text about " + " and ".join(words) + "."
        chunk = Chunk(f"pc{len(chunks):04d}", f"pdoc{doc}", len(chunks), text, ["Planted"], "", text, 10, "en",
                      title=f"Planted {doc}", doc_hash="h")
        chunks.append(chunk)
        for m, w in zip(members, words, strict=True):
            start = text.index(w)
            mentions.append(Mention(start, start + len(w), w, m, "Disease", "exact", 1.0, chunk.chunk_id))

    for g in range(groups):
        for _c in range(chunks_per_group):
            add(g, rng.sample(by_group[g], rng.randint(3, 5)))
    for n in range(noise):
        g1, g2 = rng.sample(range(groups), 2)
        add(100 + n, [rng.choice(by_group[g1]), rng.choice(by_group[g2])])
    return chunks, mentions, entities, truth


def assert_listed_a_page_at_a_time(store: Any) -> None:
    """The contract of a graph store's community listing: ``community_levels`` counts what
    ``communities()`` lists, and ``limit`` / ``offset`` read one page of the same order."""
    listed = store.communities()
    assert store.community_levels() == dict(sorted(Counter(c.level for c in listed).items()))
    page = store.communities(limit=2, offset=1)  # a page of the whole order, read as a page
    assert [c.community_id for c in page] == [c.community_id for c in listed[1:3]]
    assert store.communities(level=0, limit=1) == [c for c in listed if c.level == 0][:1]
    assert store.communities(offset=len(listed)) == []
