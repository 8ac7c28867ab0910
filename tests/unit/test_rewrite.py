"""Short-term memory: follow-up questions made standalone (rules EN/DE/ZH, the last-5 window);
the DSPy tier is tested in test_rewrite_dspy.py."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from medgraph.agent.rewrite import (
    Rewrite,
    RuleRewriter,
    Turn,
    format_history,
    package_category,
)

METFORMIN, IBUPROFEN, ASPIRIN = "D008687", "D007052", "D001241"
FLU, GOUT, ASTHMA = "D007251", "D006073", "D001249"
SIDE_EFFECTS = "D064420"  # framing: never a referent

H_EN = (
    Turn("user", "What are the side effects of metformin?", ((SIDE_EFFECTS, "side effects"), (METFORMIN, "metformin"))),
    Turn("assistant", "Metformin commonly causes nausea and diarrhoea [1].", ((METFORMIN, "Metformin"),)),
)
H_EN_DISEASE = (
    Turn("user", "What is the flu?", ((FLU, "flu"),)),
    Turn("assistant", "Influenza is a viral infection; ibuprofen eases the fever [1].",
         ((FLU, "Influenza"), (IBUPROFEN, "ibuprofen"))),
)
H_DE = (
    Turn("user", "Was sind die Nebenwirkungen von Metformin?", ((SIDE_EFFECTS, "Nebenwirkungen"), (METFORMIN, "Metformin"))),
    Turn("assistant", "Metformin verursacht häufig Übelkeit [1].", ((METFORMIN, "Metformin"),)),
)
H_DE_DISEASE = (
    Turn("user", "Was ist Gicht?", ((GOUT, "Gicht"),)),
    Turn("assistant", "Gicht ist eine entzündliche Gelenkerkrankung; Ibuprofen lindert den Schmerz [1].",
         ((GOUT, "Gicht"), (IBUPROFEN, "Ibuprofen"))),
)
H_ZH = (
    Turn("user", "二甲双胍的副作用是什么？", ((METFORMIN, "二甲双胍"), (SIDE_EFFECTS, "副作用"))),
    Turn("assistant", "二甲双胍常见的副作用是恶心和腹泻[1]。", ((METFORMIN, "二甲双胍"),)),
)
H_ZH_DISEASE = (
    Turn("user", "哮喘是什么？", ((ASTHMA, "哮喘"),)),
    Turn("assistant", "哮喘是一种慢性气道炎症，布洛芬可能诱发发作[1]。", ((ASTHMA, "哮喘"), (IBUPROFEN, "布洛芬"))),
)

RULES = RuleRewriter()

# (history, question, language, expected standalone question; None: unchanged)
CASES: list[tuple[Sequence[Turn], str, str, str | None]] = [
    # English
    (H_EN[:1], "What are its side effects?", "en", "What are the side effects of metformin?"),
    (H_EN, "What about in children?", "en", "What are the side effects of metformin in children?"),
    (H_EN, "And during pregnancy?", "en", "What are the side effects of metformin during pregnancy?"),
    (H_EN, "What about ibuprofen?", "en", "What are the side effects of ibuprofen?"),
    (H_EN, "Is this drug safe for the kidneys?", "en", "Is Metformin safe for the kidneys?"),
    (H_EN, "How long does it take to work?", "en", "How long does Metformin take to work?"),
    (H_EN_DISEASE, "Is this disease contagious?", "en", "Is Influenza contagious?"),
    (H_EN_DISEASE, "What is the usual dose of this drug?", "en", "What is the usual dose of ibuprofen?"),
    (H_EN, "Is it safe to take ibuprofen with alcohol?", "en", None),  # expletive "it", own entity
    (H_EN, "What is hypertension?", "en", None),
    (H_EN, "What are the side effects of metformin?", "en", None),
    # German
    (H_DE[:1], "Was sind seine Wechselwirkungen?", "de", "Was sind die Wechselwirkungen von Metformin?"),
    (H_DE, "Und bei Kindern?", "de", "Was sind die Nebenwirkungen von Metformin bei Kindern?"),
    (H_DE, "Was ist mit Schwangeren?", "de", "Was sind die Nebenwirkungen von Metformin bei Schwangeren?"),
    (H_DE, "Und Ibuprofen?", "de", "Was sind die Nebenwirkungen von Ibuprofen?"),
    (H_DE, "Ist dieses Medikament in der Schwangerschaft sicher?", "de",
     "Ist Metformin in der Schwangerschaft sicher?"),
    (H_DE, "Wie viel davon darf ich täglich nehmen?", "de", "Wie viel von Metformin darf ich täglich nehmen?"),
    (H_DE_DISEASE, "Was hilft dagegen?", "de", "Was hilft gegen Gicht?"),
    (H_DE_DISEASE, "Ist diese Krankheit erblich?", "de", "Ist Gicht erblich?"),
    (H_DE, "Gibt es Alternativen?", "de", None),  # expletive "es"
    (H_DE, "Ist es gefährlich, Ibuprofen zu nehmen?", "de", None),
    (H_DE, "Ist es sinnvoll, Angehörige in die Schulung einzubeziehen?", "de", None),  # zu inside the verb
    (H_DE, "Was ist Bluthochdruck?", "de", None),
    # Chinese
    (H_ZH, "它的禁忌症是什么？", "zh", "二甲双胍的禁忌症是什么？"),
    (H_ZH, "那儿童呢？", "zh", "对于儿童，二甲双胍的副作用是什么？"),
    (H_ZH, "孕妇呢？", "zh", "对于孕妇，二甲双胍的副作用是什么？"),
    (H_ZH, "布洛芬呢？", "zh", "布洛芬的副作用是什么？"),
    (H_ZH, "这种药孕妇能用吗？", "zh", "二甲双胍孕妇能用吗？"),
    (H_ZH, "该药需要饭后服用吗？", "zh", "二甲双胍需要饭后服用吗？"),
    (H_ZH_DISEASE, "这种病会遗传吗？", "zh", "哮喘会遗传吗？"),
    (H_ZH_DISEASE, "这种药有什么风险？", "zh", "布洛芬有什么风险？"),
    (H_ZH, "高血压是什么？", "zh", None),
    (H_ZH, "布洛芬和阿司匹林能一起吃吗？", "zh", None),
]


@pytest.mark.parametrize(("history", "question", "lang", "expected"), CASES,
                         ids=[f"{c[2]}-{i}" for i, c in enumerate(CASES)])
def test_rule_rewrites(history: Sequence[Turn], question: str, lang: str, expected: str | None) -> None:
    result = RULES.rewrite(question, history, lang)
    if expected is None:
        assert result == Rewrite(question, False, "none")
    else:
        assert result.question == expected
        assert result.changed and result.method == "rules"


@pytest.mark.parametrize(("question", "lang"), [
    ("Staging laparoscopy in patients with hepatocellular carcinoma: is it useful?", "en"),
    ("Does a colonoscopy after acute diverticulitis affect its management?", "en"),
    ("Do practices adopt an information technology (IT) innovation?", "en"),
    ("Remote ischemic postconditioning - does it protect the heart?", "en"),
    ("Hilft Physiotherapie bei Rückenschmerzen, und wie lange dauert es?", "de"),
    ("Die Stoßwellentherapie: ist sie wirksam und hat sie seine Grenzen?", "de"),
    ("患者对甲硝唑过敏，不能使用该药物治疗，有哪些替代药物？", "zh"),
    ("阿司匹林可以预防中风吗？它的风险是什么？", "zh"),
])
def test_a_question_naming_its_own_antecedent_stays(question: str, lang: str) -> None:
    assert RULES.rewrite(question, {"en": H_EN, "de": H_DE, "zh": H_ZH}[lang], lang) == Rewrite(question, False, "none")


def test_ordinary_medical_questions_are_not_rewritten() -> None:
    from tests.unit.test_guard import medical_questions

    history = {"en": H_EN, "de": H_DE, "zh": H_ZH}
    changed = [(q, r.question) for lang, q in medical_questions()
               if (r := RULES.rewrite(q, history[lang], lang)).changed]
    assert changed == []


def test_enough_cases_per_language_including_negatives() -> None:
    for lang in ("en", "de", "zh"):
        mine = [c for c in CASES if c[2] == lang]
        assert len(mine) >= 8 and sum(c[3] is None for c in mine) >= 2, lang


def test_resolved_lists_the_mesh_ids_brought_in() -> None:
    assert RULES.rewrite("What are its side effects?", H_EN, "en").resolved == (METFORMIN,)
    assert RULES.rewrite("What about ibuprofen?", H_EN, "en").resolved == ()  # the user named it
    assert RULES.rewrite("这种药有什么风险？", H_ZH_DISEASE, "zh").resolved == (IBUPROFEN,)


def test_the_kind_phrase_picks_the_most_recent_entity_of_that_kind() -> None:
    # the latest turn mentions influenza first, then ibuprofen: "this drug" skips the disease
    assert package_category(IBUPROFEN) == "Drug" and package_category(FLU) == "Disease"
    assert RULES.rewrite("Does this drug interact with warfarin?", H_EN_DISEASE, "en").question == \
        "Does ibuprofen interact with warfarin?"
    # a pronoun takes the first mention of the latest turn
    assert RULES.rewrite("Is it contagious?", H_EN_DISEASE, "en").question == "Is Influenza contagious?"


def test_the_name_in_the_question_language_is_used_when_history_has_it() -> None:
    mixed = (
        Turn("user", "二甲双胍的副作用是什么？", ((METFORMIN, "二甲双胍"),)),
        Turn("assistant", "Metformin commonly causes nausea [1].", ((METFORMIN, "Metformin"),)),
    )
    assert RULES.rewrite("它的禁忌症是什么？", mixed, "zh").question == "二甲双胍的禁忌症是什么？"
    english_only = (Turn("user", "What is metformin used for?", ((METFORMIN, "metformin"),)),)
    assert RULES.rewrite("它的禁忌症是什么？", english_only, "zh").question == "metformin的禁忌症是什么？"


def test_only_the_last_five_turns_are_read() -> None:
    old = Turn("user", "What are the side effects of aspirin?", ((ASPIRIN, "aspirin"),))
    filler = [Turn("assistant" if i % 2 == 0 else "user", "Thank you, that helps a lot.") for i in range(5)]
    assert not RULES.rewrite("What are its interactions?", [old, *filler], "en").changed
    assert RULES.rewrite("What are its interactions?", [old, *filler[:4]], "en").question == \
        "What are the interactions of aspirin?"
    assert RuleRewriter(window=6).rewrite("What are its interactions?", [old, *filler], "en").changed


def test_no_history_or_no_entity_means_no_rewrite() -> None:
    assert RULES.rewrite("What are its side effects?", [], "en") == Rewrite("What are its side effects?", False, "none")
    chat = [Turn("user", "Hello"), Turn("assistant", "Hello! Ask me a medical question.")]
    assert not RULES.rewrite("What are its side effects?", chat, "en").changed
    assert not RULES.rewrite("And in children?", [Turn("assistant", "Welcome.")], "en").changed


def test_an_elliptical_follow_up_of_a_follow_up_resolves_through_both() -> None:
    history = [*H_EN, Turn("user", "What about ibuprofen?", ((IBUPROFEN, "ibuprofen"),)),
               Turn("assistant", "Ibuprofen can cause stomach pain [2].", ((IBUPROFEN, "Ibuprofen"),))]
    assert RULES.rewrite("And in children?", history, "en").question == \
        "What are the side effects of ibuprofen in children?"


def test_turns_without_entities_are_linked_with_find_entities() -> None:
    def find(text: str) -> list[tuple[str, str]]:
        return [(METFORMIN, "metformin")] if "metformin" in text else []

    bare = [Turn("user", "What is metformin?"), Turn("assistant", "A biguanide for type 2 diabetes.")]
    assert not RULES.rewrite("What are its side effects?", bare, "en").changed
    linked = RuleRewriter(find_entities=find).rewrite("What are its side effects?", bare, "en")
    assert linked.question == "What are the side effects of metformin?" and linked.resolved == (METFORMIN,)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        RULES.rewrite("  ", H_EN, "en")
    with pytest.raises(ValueError, match="window"):
        RuleRewriter(window=0)


def test_format_history_cuts_long_turns() -> None:
    text = format_history([Turn("user", "a  b"), Turn("assistant", "x" * 1000)], chars=10)
    assert text == "user: a b\nassistant: xxxxxxxxxx"
