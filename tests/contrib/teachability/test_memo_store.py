"""MemoStore (website/docs/teachability.md): distances, persistence, listing, prepopulation,
repair."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from parley.agentchat.contrib.capabilities.teachability import MemoStore, Teachability
from parley.io import IOScripted, IOStream


def test_a_new_store_over_the_same_directory_finds_the_memos(tmp_path: Path) -> None:
    store = MemoStore(path_to_db_dir=str(tmp_path))
    store.add_input_output_pair("What is my cat called?", "Tom")
    store.close()
    again = MemoStore(path_to_db_dir=str(tmp_path))
    assert again.last_memo_id == 1
    input_text, output_text, distance = again.get_nearest_memo("what's my cat's name?")
    assert (input_text, output_text) == ("What is my cat called?", "Tom")
    assert 0 <= distance < 1.5


def test_distances_are_squared_distances_of_unit_vectors(tmp_path: Path) -> None:
    store = MemoStore(path_to_db_dir=str(tmp_path))
    store.add_input_output_pair("What is the name of the user's dog?", "Rex")
    store.add_input_output_pair("Which city does the user live in?", "Lisbon")
    exact = store.get_related_memos("What is the name of the user's dog?", 10, 4.01)
    assert exact[0][:2] == ("What is the name of the user's dog?", "Rex")
    assert exact[0][2] == pytest.approx(0.0, abs=1e-5)
    assert all(0.0 <= d <= 4.0 for _, _, d in exact)
    assert [d for _, _, d in exact] == sorted(d for _, _, d in exact)
    # Related phrasing is within the default threshold, an unrelated request is not.
    assert store.get_nearest_memo("what is my dog called")[2] < 1.5
    assert store.get_related_memos("Write a poem about the sea", 10, 1.5) == []
    assert len(store.get_related_memos("What is the name of the user's dog?", 1, 4.01)) == 1


def test_prepopulate_and_list_memos(tmp_path: Path) -> None:
    teachability = Teachability(path_to_db_dir=str(tmp_path))
    teachability.prepopulate_db()
    with IOStream.set_default(IOScripted()) as io:
        listed = teachability.memo_store.list_memos()
    assert [uid for uid, _, _ in listed] == [str(i) for i in range(1, 11)]
    assert {output for _, _, output in listed} == {"yes", "no"}
    assert io.text.count("INPUT TEXT:") == 10
    assert listed[0][1] in io.text
    assert MemoStore(path_to_db_dir=str(tmp_path)).list_memos() == listed


def test_the_side_table_is_json_and_the_index_is_rebuilt_from_it(tmp_path: Path) -> None:
    store = MemoStore(path_to_db_dir=str(tmp_path))
    store.add_input_output_pair("What is my cat called?", "Tom")
    store.add_input_output_pair("Where do I live?", "Lisbon")
    store.close()
    table = json.loads((tmp_path / "uid_text_dict.json").read_text())
    assert table == {"1": ["What is my cat called?", "Tom"], "2": ["Where do I live?", "Lisbon"]}
    # A process that died after indexing a memo but before recording it: the index follows
    # the table, so the unrecorded memo is neither found nor counted.
    del table["2"]
    (tmp_path / "uid_text_dict.json").write_text(json.dumps(table))
    again = MemoStore(path_to_db_dir=str(tmp_path))
    assert again.last_memo_id == 1
    assert [m[:2] for m in again.get_related_memos("Where do I live?", 10, 4.01)] == [
        ("What is my cat called?", "Tom")
    ]
    again.add_input_output_pair("Where do I live?", "Porto")
    assert [m[1] for m in again.get_related_memos("Where do I live?", 10, 4.01)] == [
        "Porto",
        "Tom",
    ]


def test_a_broken_side_table_is_refused_with_the_way_out(tmp_path: Path) -> None:
    (tmp_path / "uid_text_dict.json").write_text("not json")
    with pytest.raises(ValueError, match="reset_db=True"):
        MemoStore(path_to_db_dir=str(tmp_path))
    MemoStore(reset=True, path_to_db_dir=str(tmp_path)).add_input_output_pair("a", "b")
