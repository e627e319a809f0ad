"""Graph renderings: deterministic, complete, and safe against hostile labels."""

from __future__ import annotations

import copy
import json
import random
import re

import pytest
from export_samples import every_type_document

from agbom.export import ExportError, render_graph
from agbom.inventory import ROOT_ID, AgBOM, ComponentGraph


def test_json_graph_matches_component_graph(every_type):
    rendered = json.loads(render_graph(every_type, "json"))
    assert rendered["root"] == ROOT_ID
    assert [n["id"] for n in rendered["nodes"]] == [ROOT_ID, *sorted(every_type.components)]
    edges = {(e["source"], e["target"], e["kind"]) for e in rendered["edges"]}
    assert edges == {(s, t, str(k)) for s, t, k in ComponentGraph(every_type).edges()}


@pytest.mark.parametrize("fmt", ["mermaid", "dot", "json"])
def test_order_independent(fmt):
    doc = every_type_document()
    shuffled = copy.deepcopy(doc)
    random.Random(5).shuffle(shuffled["components"])
    first = render_graph(AgBOM.from_document(doc), fmt)
    assert render_graph(AgBOM.from_document(shuffled), fmt) == first


def test_hostile_labels_are_escaped():
    doc = every_type_document()
    doc["components"][1]["name"] = 'x"]; click n0 evil\n-->|y| n1["#<b>`'
    doc["agent"]["name"] = 'a" -> b [label="z'
    agbom = AgBOM.from_document(doc)
    mermaid = render_graph(agbom, "mermaid")
    for line in mermaid.splitlines()[1:]:
        assert re.fullmatch(r'  n\d+\["[^"\n<>`]*"\]|  n\d+ -->\|\w+\| n\d+', line), line
    dot = render_graph(agbom, "dot")
    for line in dot.splitlines()[3:-1]:
        assert re.fullmatch(
            r'  n\d+ \[label="(?:[^"\\]|\\.)*"(?:, shape=\w+)?\];'
            r'|  n\d+ -> n\d+ \[label="\w+"\];',
            line,
        ), line
    assert dot.count("\n") == len(dot.splitlines())


def test_unknown_format():
    with pytest.raises(ExportError, match="unknown graph format 'svg'"):
        render_graph(AgBOM.from_document({"components": []}), "svg")
