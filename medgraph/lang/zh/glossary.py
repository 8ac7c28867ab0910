"""The Chinese pack's glossary section: CC-CEDICT glosses and the segmentation of Chinese text."""

from __future__ import annotations

import re

from medgraph.lang.sections.glossary import GlossaryRules

# Chinese words that only carry grammar or the question's form: no gloss (their English glosses,
# "exist", "be alive", "China", "what?", would only add noise to a search)
CHINESE_FUNCTION_WORDS = frozenset(
    "的 地 得 了 着 过 吗 呢 吧 啊 呀 么 是 在 有 和 与 及 或 等 对 于 把 被 为 以 而 中 之 其 这 那 该 此 后 前 "
    "会 能 可 要 将 就 也 都 又 还 再 很 更 最 并 且 但 则 从 向 由 给 让 使 用 到 上 下 内 里 时 "
    "是否 能否 可否 有无 有没有 会不会 是不是 能不能 可不可以 要不要 什么 哪些 哪个 哪种 如何 怎么 怎样 "
    "怎么样 多少 为什么 为何 还是 以及 并且 或者 而且 但是 因为 所以 如果 是的 一种 一个 一些 这种 这些 "
    "那些 其中 之间 方面 情况 问题 需要 应该 可以 可能 能够 进行 通过 作为 对于 关于 采用 出现".split()
)

GLOSSARY = GlossaryRules(
    dictionary="cedict",  # CC-CEDICT
    # runs of ideographs (in text order), and words of letters and digits, as a residue keeps them
    words=re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+|[^\\W_]+"),
    segment=re.compile("[\u3400-\u4dbf\u4e00-\u9fff]+"),  # CJK unified ideographs and extension A
    max_segment=8,
    function_words=CHINESE_FUNCTION_WORDS,
    min_reverse=2,  # one character has too many readings to stand for an English word
)
