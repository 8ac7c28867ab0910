"""Section-aware chunking.

Input: a ``Document`` (sections with titles and levels). Output: ``Chunk`` records.

The document is walked section → sub-section → paragraph. Each section is cut into *parent*
blocks of at most ``parent_max_tokens`` (paragraph-packed); each parent is cut into *child*
chunks of at most ``max_tokens`` (paragraphs, then sentences, then a hard token cut). Retrieval
searches children and returns the parent text for context. Every chunk carries its
``section_path`` (titles from the top-level section down) and its page when known.
"""

from __future__ import annotations

from collections.abc import Iterator

from medgraph import lang
from medgraph.config.models import ChunkingConfig
from medgraph.ingest.text import (
    chunk_language,
    count_tokens,
    split_paragraphs,
    split_sentences,
    split_tokens_hard,
)
from medgraph.schemas import Chunk, Document, Section, content_hash

UNTITLED = "Main text"


def section_paths(sections: list[Section]) -> list[list[str]]:
    """The title path of each section, from its level and the sections before it."""
    stack: list[tuple[int, str]] = []
    paths = []
    for section in sections:
        while stack and stack[-1][0] >= section.level:
            stack.pop()
        stack.append((section.level, section.title.strip() or UNTITLED))
        paths.append([title for _, title in stack])
    return paths


def _units(paragraph: str, max_tokens: int) -> Iterator[str]:
    """Pieces of a paragraph that each fit in ``max_tokens``."""
    if count_tokens(paragraph) <= max_tokens:
        yield paragraph
        return
    for sentence in split_sentences(paragraph):
        if count_tokens(sentence) <= max_tokens:
            yield sentence
        else:
            yield from split_tokens_hard(sentence, max_tokens)


def pack(texts: list[str], max_tokens: int, joiner: str) -> list[str]:
    """Greedily join consecutive texts while the result stays within ``max_tokens``."""
    out: list[str] = []
    current: list[str] = []
    size = 0
    for text in texts:
        n = count_tokens(text)
        if current and size + n > max_tokens:
            out.append(joiner.join(current))
            current, size = [], 0
        current.append(text)
        size += n
    if current:
        out.append(joiner.join(current))
    return out


def _joiner(language: str) -> str:
    return lang.get_or_pivot(language).text.word_separator


class Chunker:
    """Cuts documents into child chunks with parent context; see the module docstring."""

    def __init__(self, cfg: ChunkingConfig) -> None:
        if cfg.max_tokens > cfg.parent_max_tokens:
            raise ValueError("chunking.max_tokens must not exceed chunking.parent_max_tokens")
        self.cfg = cfg

    def chunk(self, doc: Document) -> list[Chunk]:
        doc_hash = doc.content_hash
        joiner = _joiner(doc.language)
        chunks: list[Chunk] = []
        for s_index, (section, path) in enumerate(zip(doc.sections, section_paths(doc.sections), strict=True)):
            for p_index, parent_units in enumerate(self._parents(section.text)):
                parent_id = content_hash(doc.doc_id, doc_hash, "parent", str(s_index), str(p_index))
                parent = joiner.join(parent_units)
                for child in pack(parent_units, self.cfg.max_tokens, joiner):
                    chunks.append(self._make(doc, doc_hash, len(chunks), child, path, parent_id, parent, section))
        chunks = [c for c in chunks if c.token_count >= self.cfg.min_tokens] or chunks
        for i, c in enumerate(chunks):
            c.index = i
            c.chunk_id = content_hash(doc.doc_id, doc_hash, str(i))
            c.doc_chunk_count = len(chunks)
        return chunks

    def _parents(self, text: str) -> list[list[str]]:
        """Child-sized units of the section, grouped into parents of at most parent_max_tokens."""
        units = [u for p in split_paragraphs(text) for u in _units(p, self.cfg.max_tokens)]
        parents: list[list[str]] = []
        size = 0
        for unit in units:
            n = count_tokens(unit)
            if not parents or size + n > self.cfg.parent_max_tokens:
                parents.append([])
                size = 0
            parents[-1].append(unit)
            size += n
        return parents

    @staticmethod
    def _make(
        doc: Document, doc_hash: str, index: int, text: str, path: list[str],
        parent_id: str, parent: str, section: Section,
    ) -> Chunk:
        return Chunk(
            chunk_id="", doc_id=doc.doc_id, index=index, text=text, section_path=list(path),
            parent_id=parent_id, parent_text=parent, token_count=count_tokens(text),
            # a chunk mostly in another language than its document (a quoted abstract, an English
            # table in a German letter) is labelled with its own: language filters and translate use it
            language=chunk_language(text, doc.language), title=doc.title, page=section.page, doc_hash=doc_hash,
        )
