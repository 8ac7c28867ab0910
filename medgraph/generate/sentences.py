"""Which evidence sentences answer the question: the extractive composer's sentence scores.

Input: the question's ``QueryAnalysis`` and the reranked evidence (chunks loaded, ``relevance``
set). Output: ``ScoredSentence`` records, one per candidate sentence, with its features and score
``Σ weight[f] · f`` (weights: ``answer.sentence_weights``):

- ``relevance``: the passage's calibrated relevance (the reranker's; the same for its sentences).
- ``lexical``: the IDF-weighted share of the question's terms found in the sentence, the best over
  the question and its translations (``QueryAnalysis.translations``). IDF is taken over the
  candidate sentences, so a question term that no sentence has ("side effects") weighs most and
  a sentence that only repeats the common terms ("metformin") scores low. For a version of the
  question in another language than the sentence, or a translation, only the terms that occur in
  some candidate sentence count (a translation's untranslated words cannot match), and a
  translation's share is scaled by the share of the question it translates (its linked mentions'
  letters): "门诊中的感染如何预防" translated to "Infection" matches much less than it seems.
- ``entity``: the share of the question's MeSH entities named in the sentence (any of their names
  in ``QueryAnalysis.entity_names``, or the question's own words for them).
- ``type``: 1 when the question asks for a kind of answer (adverse effects, dosage, risk,
  procedure, timing, population, or a yes / no claim; EN / DE / ZH cue words) and the sentence
  has a cue of that kind (a claim's: conclusion cues such as "suggest", "associated with", "no
  difference").
- ``role``: +1 for findings, conclusions and recommendations, −1 for aims, background and
  methods: the section label (RESULTS / CONCLUSIONS of structured abstracts, Ergebnisse, 结论 ...),
  then cue phrases of the sentence ("To evaluate ...", "We aimed ...", "... suggest ...").
- ``dense``: the question–sentence similarity of the dense embedder (its ``dense_feature`` scale),
  when the composer has an embedder (``answer.sentence_dense``): for sentences in another
  language than the question (``cross_lingual``; term overlap cannot see a German question's
  match in an English sentence) or all (``all``), from the top ``answer.dense_passages``
  passages, at most ``answer.dense_max_sentences`` in passage order. Costs one embedding per
  sentence (~30 ms each with e5 on one CPU thread).

Sentences lose a trailing list marker left by the splitter ("... care. f."); a list's lead-in
("... include:") is no candidate. A sentence is a candidate when it has at least
``MIN_SENTENCE_TOKENS`` tokens, is no question (``is_question``: a record's own question, a
"What is ...?" heading) and no reference
list entry (``is_reference``: a References / Literatur / 参考文献 section, or citation marks such
as "2014;42(1):12-6", "et al.", a URL) and shares a term or an entity with the question, has a
dense score, or states an aspect the question asks (``medgraph.generate.aspects``: "intolerance"
answers "side effects" without the words).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from medgraph.config.models import DEFAULT_SENTENCE_WEIGHTS
from medgraph.embed.lexical import tokenize
from medgraph.generate.aspects import addresses, asked_aspects, name_pattern
from medgraph.ingest.text import count_tokens, split_sentences
from medgraph.retrieve.types import Candidate, QueryAnalysis

MIN_SENTENCE_TOKENS = 5
FEATURES = tuple(DEFAULT_SENTENCE_WEIGHTS)


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# question cues (EN | DE | ZH) → the kind of answer asked for
QUESTION_TYPES: dict[str, re.Pattern[str]] = {
    "adverse": _rx(r"side[- ]?effects?|adverse|\bharms?\b|harmful|complications?|toxicit|\bsafe(ty)?\b"
                   r"|nebenwirkung|unerwünscht|komplikation|\bsicher|schädlich|副作用|不良反应|并发症|安全|危害"),
    "dosage": _rx(r"\bdoses?\b|dosage|dosing|how much|how many (?:mg|grams|milligrams)|\bdosis|dosierung|wie ?viel"
                  r"|剂量|用量|多少"),
    "risk": _rx(r"\brisks?\b|likelihood|\bchances?\b|\bassociated\b|risiko|wahrscheinlich|风险|危险|可能性"),
    "procedure": _rx(r"\bhow (?:should|do|to|can|is|are|does|must)\b|\bsteps?\b|procedure|\bwie (?:sollte|soll|sollen|wird"
                     r"|werden|kann|können|muss|müssen)\b|verfahren|vorgehen|如何|怎样|怎么|方法|步骤"),
    "timing": _rx(r"\bwhen\b|how (?:often|long|soon|frequently)|frequency|duration|\bwann\b|wie (?:oft|lange|häufig)"
                  r"|häufigkeit|何时|什么时候|多久|多长时间|频率|多常|多少次"),
    # a yes / no question about a claim: the answer is a finding that states it, or its opposite
    "claim": _rx(r"^(?:is|are|was|were|does|do|did|can|could|should|has|have|will|may)\b|^(?:ist|sind|war|waren|hat|haben"
                 r"|kann|können|sollte|sollten|wird|werden|gibt|führt|hilft)\b|是否|吗[？?]?$"),
    "population": _rx(r"\bwho\b|\bwhich (?:patients|people|persons|staff|groups?)\b|\bwer\b|welche (?:patienten|personen"
                      r"|gruppen)|谁|哪些人|哪类人|哪些患者"),
}
# sentence cues of each kind of answer
ANSWER_CUES: dict[str, re.Pattern[str]] = {
    "adverse": _rx(r"adverse|side[- ]?effect|toxicit|complication|hypoglyc|nausea|vomit|diarrh|bleed|haemorrh|hemorrh"
                   r"|\bharm|\bsafe|toleran|tolerat|discontinu|nebenwirkung|komplikation|\bsicher|verträglich"
                   r"|不良|副作用|并发症|安全|耐受|出血"),
    "dosage": _rx(r"\d\s?(?:mg|g|µg|mcg|ml|l|iu|units?|%|kcal)\b|\bdoses?\b|dosage|daily|per day|twice|once a|\bdosis"
                  r"|täglich|剂量|每日|每天|毫克|克"),
    "risk": _rx(r"\brisks?\b|\bodds\b|hazard|\bOR\b|\bRR\b|\bHR\b|associated|increase|reduc|decreas|likel|risiko"
                r"|erhöh|verringer|风险|增加|降低|相关"),
    "procedure": _rx(r"\bshould\b|\bmust\b|ensure|\buse\b|\bused\b|perform|follow|clean|disinfect|\bwear|\bsollte|\bmüssen"
                     r"|\bsoll\b|verwend|durchgeführt|应|须|使用|进行|采用"),
    "timing": _rx(r"\bbefore\b|\bafter\b|\bduring\b|daily|weekly|monthly|annual|\bevery\b|\beach\b|hours?\b|\bdays?\b"
                  r"|weeks?\b|months?\b|years?\b|at least|within|\bvor\b|\bnach\b|während|täglich|jährlich"
                  r"|每|之前|之后|期间|小时|天|周|年"),
    "claim": _rx(r"\b(?:suggest|indicat|conclu|support|associated with|effective|efficac|no (?:significant )?difference"
                 r"|did not|does not|was not|were not|may be|can be|appears? to|is a |are a |significant)"
                 r"|deuten|zeigen|wirksam|kein(?:e|en)? (?:signifikant|unterschied)|表明|提示|有效|无显著|相关"),
    "population": _rx(r"patients|personnel|\bstaff|\bHCP\b|children|infants|women|\bmen\b|adults|elderly|workers|people"
                      r"|patient(?:inn)?en|personal|kinder|frauen|患者|人员|儿童|妇女|老年|人群"),
}
# section labels (structured abstracts, guideline headings) and sentence cues of a statement's role
_FINDING_SECTION = _rx(r"result|finding|conclusion|discussion|interpretation|recommendation|summary|ergebnis"
                       r"|schlussfolgerung|fazit|empfehlung|zusammenfassung|结果|结论|建议|讨论")
_AIM_SECTION = _rx(r"objective|\baims?\b|purpose|background|introduction|method|design|setting|participants"
                   r"|population|patients and|materials|hintergrund|einleitung|fragestellung|\bziel|methode"
                   r"|目的|背景|方法|对象|资料")
_AIM_SENTENCE = _rx(r"^(?:to (?:evaluate|assess|determine|investigate|examine|compare|describe|study|test|analy[sz]e"
                    r"|identify|explore|review)|we (?:aimed|sought|investigated|evaluated|assessed|examined|hypothesi"
                    r"|studied|compared|analy[sz]ed|conducted|performed|reviewed|retrospectively|prospectively)"
                    r"|the (?:aims?|purpose|objectives?|goal) of (?:this|the|our))|\bwas (?:conducted|performed|designed)"
                    r"|\bwere (?:enrolled|included|recruited|randomi[sz]ed|reviewed)|\bziel (?:dieser|der) (?:studie|arbeit)"
                    r"|本研究(?:旨在|目的)|^目的")
_FINDING_SENTENCE = _rx(r"\b(?:suggest|indicat|show(?:ed|s|n)?\b|demonstrat|conclu|found|associated with|significant"
                        r"|improv|reduc|increas|decreas|recommend|should|must|effective|no difference|did not)"
                        r"|zeigt|ergab|signifikant|empfohlen|wirksam|表明|显示|提示|显著|有效|建议|应")


# a reference list is not evidence: its entries name other works and state nothing themselves (nor
# do acknowledgements, contributor lists, funding and interest declarations, e-mail addresses)
_REFERENCE_SECTION = _rx(r"^\W*(?:\d+(?:\.\d+)*\.?\s*)?(?:references?|bibliography|literatur(?:verzeichnis)?|quellen"
                         r"(?:verzeichnis)?|source documents|further reading|acknowledge?ments?|contributors|conflicts? of"
                         r" interest|declarations? of interest|funding|danksagung|interessenkonflikt|参考文献|引用文献|致谢)\b")
_CITATION = _rx(r"\b(?:19|20)\d\d\s*;\s*\d+\s*(?:\(\d+\))?\s*:\s*\d+|\bet al\.|https?://|www\.|\bdoi\s*:|\baccessed\s+\d"
                r"|\bavailable (?:at|from)\s*:|[\w.]+@[\w-]+\.\w")


# the next list item's marker left at a sentence's end by the splitter: "... include: a." / "... care. f."
_TRAILING_MARKER = re.compile(r"(?<=[.:;])\s+(?:[a-zA-Z]|[ivx]{1,4}|\d{1,2})[.)]$")


def clean_sentence(sentence: str) -> str | None:
    """The sentence without a trailing list marker; None for a list's lead-in ("... include:"),
    which says nothing without its items."""
    text = _TRAILING_MARKER.sub("", sentence.strip())
    return None if text.endswith((":", "：")) else text


def is_question(sentence: str) -> bool:
    """A sentence that asks (a record's question, a heading such as "What is ...?"): it states
    nothing, so it is never quoted as an answer."""
    return sentence.rstrip().endswith(("?", "？"))


def is_reference(sentence: str, section_path: Sequence[str]) -> bool:
    """A bibliography entry or front matter (by its section: References, Acknowledgements, Funding
    ...; or by citation marks such as "2014;42(1):12-6", "et al.", a URL, an e-mail address):
    never quoted as an answer."""
    return any(_REFERENCE_SECTION.search(p) for p in section_path) or _CITATION.search(sentence) is not None


def question_types(text: str) -> frozenset[str]:
    """The kinds of answer a question asks for (may be several, or none)."""
    return frozenset(kind for kind, cue in QUESTION_TYPES.items() if cue.search(text))


def sentence_role(sentence: str, section_path: Sequence[str]) -> int:
    """+1 finding / conclusion / recommendation, −1 aim / background / method, 0 unknown."""
    if _AIM_SENTENCE.search(sentence):
        return -1
    section = section_path[-1] if section_path else ""
    if _FINDING_SECTION.search(section):
        return 1
    if _AIM_SECTION.search(section):
        return -1
    return 1 if _FINDING_SENTENCE.search(sentence) else 0


@dataclass(frozen=True)
class ScoredSentence:
    score: float
    rank: int  # the evidence passage's rank
    position: int  # the sentence's position in its passage
    sentence: str
    language: str
    cand: Candidate
    features: dict[str, float] = field(default_factory=dict)
    entities: tuple[str, ...] = ()  # the question's MeSH IDs the sentence names


def _linked_share(analysis: QueryAnalysis) -> float:
    """The share of the question's letters inside linked mentions (what a translation translates)."""
    letters = sum(ch.isalnum() for ch in analysis.text)
    linked = sum(ch.isalnum() for m in analysis.mentions if m.mesh_id for ch in m.surface)
    return min(1.0, linked / letters) if letters else 0.0


def _idf(df: int, n: int) -> float:
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


# (question, sentences) -> each sentence's dense similarity to the question (dense_feature scale)
DenseScorer = Callable[[str, list[str]], list[float]]


def score_sentences(analysis: QueryAnalysis, evidence: Sequence[Candidate], weights: Mapping[str, float],
                    dense: DenseScorer | None = None, dense_mode: str = "cross_lingual",
                    dense_passages: int = 5, dense_max_sentences: int = 8) -> list[ScoredSentence]:
    """Every candidate sentence of ``evidence`` (chunks loaded), scored for the question."""
    pieces: list[tuple[int, int, str, Candidate, list[str]]] = []
    for rank, cand in enumerate(evidence):
        if cand.chunk is None:
            continue
        for pos, raw in enumerate(split_sentences(cand.chunk.text)):
            sentence = clean_sentence(raw)
            if sentence is None or count_tokens(sentence) < MIN_SENTENCE_TOKENS or is_question(sentence):
                continue
            if not is_reference(sentence, cand.chunk.section_path):
                pieces.append((rank, pos, sentence, cand, tokenize(sentence, language=cand.chunk.language)))
    if not pieces:
        return []
    n = len(pieces)
    df = Counter(t for *_, terms in pieces for t in set(terms))
    versions = [(analysis.language, set(tokenize(analysis.text, language=analysis.language)), 1.0)]
    linked = _linked_share(analysis)  # a translation's matches count for the share of the question it translates
    versions += [(lang, set(tokenize(text, language=lang)), linked) for lang, text in analysis.translations]
    patterns = {mesh_id: [p for name in analysis.names_of(mesh_id) if (p := name_pattern(name))]
                for mesh_id in analysis.entity_ids}
    kinds = question_types(analysis.text)
    aspects = asked_aspects(analysis.text)
    lang = analysis.language
    dense_scores: dict[tuple[int, int], float] = {}
    if dense is not None and dense_mode != "off":
        wanted = [(rank, pos, sentence) for rank, pos, sentence, cand, _ in pieces if rank < dense_passages
                  and (dense_mode == "all" or (cand.chunk is not None and cand.chunk.language != lang))]
        wanted = wanted[:dense_max_sentences]
        if wanted:
            scores = dense(analysis.text, [s for *_, s in wanted])
            dense_scores = {(r, p): v for (r, p, _), v in zip(wanted, scores, strict=True)}
    out = []
    for rank, pos, sentence, cand, terms in pieces:
        assert cand.chunk is not None
        s_lang = cand.chunk.language
        present = set(terms)
        lexical = 0.0
        for i, (q_lang, q_terms, factor) in enumerate(versions):
            counted = q_terms if i == 0 and q_lang == s_lang else {t for t in q_terms if df[t]}
            total = sum(_idf(df[t], n) for t in counted)
            if total:
                lexical = max(lexical, factor * sum(_idf(df[t], n) for t in counted & present) / total)
        named = tuple(m for m, ps in patterns.items() if any(p.search(sentence) for p in ps))
        sim = dense_scores.get((rank, pos))
        if lexical == 0.0 and not named and sim is None and not any(addresses(sentence, a) for a in aspects):
            continue  # shares nothing with the question (a sentence stating an asked aspect may use other words)
        features = {
            "relevance": cand.relevance,
            "lexical": lexical,
            "entity": len(named) / len(patterns) if patterns else 0.0,
            "type": float(any(ANSWER_CUES[k].search(sentence) for k in kinds)),
            "role": float(sentence_role(sentence, cand.chunk.section_path)),
            "dense": sim if sim is not None else 0.0,
        }
        score = sum(weights.get(f, 0.0) * v for f, v in features.items())
        out.append(ScoredSentence(score, rank, pos, sentence, s_lang, cand, features, named))
    return out
