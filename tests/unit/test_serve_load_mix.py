"""``benchmarks/serve_load.py``'s question mixes: the repeated mix cycles; the distinct mix asks
each question of its files once, in a fixed order, shared by every client, then ends."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from benchmarks.serve_load import QUESTIONS, Mix, read_questions


def test_distinct_questions_are_read_once_each_in_a_fixed_order(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("\n".join(json.dumps({"text": f"question {i}?"}) for i in range(30)) + "\n", encoding="utf-8")
    b.write_text(json.dumps({"question": "question 3?"}) + "\n\n" + json.dumps({"question": "Frage?"}) + "\n",
                 encoding="utf-8")
    first, again = read_questions([str(a), str(b)]), read_questions([str(a), str(b)])
    assert first == again and len(first) == 31 and set(first) == {f"question {i}?" for i in range(30)} | {"Frage?"}
    assert first != sorted(first)  # shuffled, so a run does not ask one file's questions first


def test_the_distinct_mix_ends_instead_of_repeating_across_threads() -> None:
    mix, asked = Mix([f"q{i}" for i in range(200)], cycle=False), []
    lock = threading.Lock()

    def client() -> None:
        while (q := mix.next()) is not None:
            with lock:
                asked.append(q)

    threads = [threading.Thread(target=client) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(asked) == sorted(f"q{i}" for i in range(200))


def test_the_repeated_mix_cycles() -> None:
    mix = Mix(QUESTIONS, cycle=True)
    assert [mix.next() for _ in range(2 * len(QUESTIONS))] == QUESTIONS * 2
