"""Completion inside `import "..."`: the .sn files and folders beside the importing file."""
from __future__ import annotations

from sncc.lsp import features
from sncc.source import SourceFile


def _tree(tmp_path):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "cluster.sn").write_text('hardware { system = "atlas-800i-a3" }\n')
    (tmp_path / "shared" / "notes.txt").write_text("not a plan\n")
    (tmp_path / "models.sn").write_text("")
    (tmp_path / "plan.out").mkdir()          # a build output folder
    (tmp_path / ".git").mkdir()
    me = tmp_path / "plan.sn"
    me.write_text("")
    return me


def _complete(path, text):
    return {i.label: i for i in features.complete(SourceFile(str(path), text), len(text))}


def test_top_level_lists_sn_files_and_folders(tmp_path):
    me = _tree(tmp_path)
    items = _complete(me, 'import "')
    assert set(items) == {"models.sn", "shared/"}   # not itself, plan.out/, .git/ or notes.txt


def test_a_typed_folder_lists_its_files_and_the_edit_covers_the_string(tmp_path):
    me = _tree(tmp_path)
    text = 'import "shared/cl'
    items = _complete(me, text)
    assert set(items) == {"shared/cluster.sn"}
    edit = items["shared/cluster.sn"].text_edit
    assert edit.new_text == "shared/cluster.sn"
    assert (edit.range.start.character, edit.range.end.character) == (8, len(text))


def test_missing_folder_gives_no_items(tmp_path):
    me = _tree(tmp_path)
    assert _complete(me, 'import "nowhere/') == {}


def test_model_label_completion_is_unchanged(tmp_path):
    me = _tree(tmp_path)
    items = _complete(me, 'plan "p" {\n  model "deepseek-')
    assert "deepseek-r1" in items and "models.sn" not in items
