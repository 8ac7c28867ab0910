"""No test may vanish without a trace: a skip for a missing dependency goes through
``tests.helpers.unavailable`` / ``require_module``, which fail under the ``MEDGRAPH_REQUIRE_*``
flags CI sets. Any other skip (``pytest.skip``, ``importorskip``, ``skipif``) must say on its line,
or the line above, why it can never be a dependency CI should have: ``# skip-ok: <why>``."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
SKIP = re.compile(r"pytest\.skip\(|importorskip\(|\.skipif\(|pytest\.mark\.skip\(")


def test_every_skip_is_a_required_dependency_or_says_why() -> None:
    unexplained = []
    for path in sorted(TESTS.rglob("*.py")):
        if path.name in ("helpers.py", Path(__file__).name):
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if SKIP.search(line) and "# skip-ok:" not in line and (i == 0 or "# skip-ok:" not in lines[i - 1]):
                unexplained.append(f"{path.relative_to(TESTS)}:{i + 1}: {line.strip()}")
    assert not unexplained, "use tests.helpers.unavailable / require_module, or add '# skip-ok: <why>':\n" + \
        "\n".join(unexplained)


def test_the_checker_sees_a_bare_skip(tmp_path: Path) -> None:
    assert SKIP.search('    pytest.skip("no server")') and SKIP.search('x = pytest.importorskip("dspy")')
    assert SKIP.search("@pytest.mark.skipif(True, reason='x')") and not SKIP.search("unavailable(reason, FLAG)")
