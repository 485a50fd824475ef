"""The files an input names: folders walked, hidden files skipped, missing inputs a clear error."""

from __future__ import annotations

import pytest

from cdc_pipelines.extract import files


def test_folders_are_walked_and_hidden_files_skipped(tmp_path):
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "sub" / "x.jsonl").write_text("{}\n")
    (tmp_path / "d" / "_SUCCESS").write_text("")
    (tmp_path / "d" / ".hidden").write_text("{}\n")
    assert [p.rsplit("/", 1)[-1] for p in files.list_input_files([tmp_path / "d"])] == ["x.jsonl"]


def test_missing_input_is_a_clear_error(tmp_path):
    with pytest.raises(files.InputError, match="does not exist"):
        files.list_input_files([tmp_path / "nope.jsonl"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(files.InputError, match="no input files"):
        files.list_input_files([tmp_path / "empty"])
