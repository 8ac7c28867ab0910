"""``GET /graph/entity``'s body: names shown in the reader's language (``names_in``), English where an
entity has no name in it, whatever language the name was asked in (``lang``)."""

from __future__ import annotations

from medgraph.schemas import Entity
from serve.routes_graph import entity_body

HH = Entity("D063373", "Hand Hygiene", "Other", names={"en": ["Hand Hygiene"], "de": ["Händehygiene"],
                                                        "zh": ["手卫生"]})
CI = Entity("D003428", "Cross Infection", "Disease", names={"en": ["Cross Infection"], "zh": ["交叉感染"]})
FOUND = {"entity": HH, "nodes": {HH.mesh_id: HH, CI.mesh_id: CI}, "edges": [(HH.mesh_id, CI.mesh_id, 3)]}


def test_names_in_the_readers_language_with_english_where_there_is_none() -> None:
    body = entity_body(FOUND, None, "de")
    assert body["name"] == "Händehygiene" and body["neighbours"] == [
        {"mesh_id": "D003428", "name": "Cross Infection", "category": "Disease"}]  # no German name: English
    assert set(body["names"]) == {"en", "de", "zh"}  # asked in no language: all names listed
    zh = entity_body(FOUND, "en", "zh")
    assert zh["name"] == "手卫生" and zh["neighbours"][0]["name"] == "交叉感染" and set(zh["names"]) == {"en"}
    assert entity_body(FOUND, "de")["name"] == "Händehygiene"  # names_in defaults to the asked language
    assert entity_body(FOUND, None)["name"] == "Hand Hygiene"
