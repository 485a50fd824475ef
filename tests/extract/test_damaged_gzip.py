"""Damaged gzip inputs are found before Spark reads them, with the lines still readable."""

from __future__ import annotations

import gzip

from cdc_pipelines.extract.damaged_gzip import check_gzip_inputs

LINES = b"".join(b'{"n": %d, "pad": "%d"}\n' % (i, i * 7919) for i in range(2000))


def test_whole_files_and_concatenated_members_are_not_damaged(tmp_path):
    whole, members, plain = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz", tmp_path / "c.jsonl"
    whole.write_bytes(gzip.compress(LINES))
    members.write_bytes(gzip.compress(LINES[:1000]) + gzip.compress(LINES[1000:]))
    plain.write_bytes(b"not gzip at all\n")
    damage = check_gzip_inputs([str(whole), str(members), str(plain)])
    assert damage.copies == {} and damage.rejects == []


def test_a_truncated_file_is_read_from_a_copy_of_its_complete_lines(tmp_path):
    cut = tmp_path / "cut.jsonl.gz"
    packed = gzip.compress(LINES)
    cut.write_bytes(packed[: len(packed) // 2])
    damage = check_gzip_inputs([str(cut)])
    [(path, lines, why)] = damage.rejects
    assert (path, why) == (str(cut), "the gzip file is truncated") and 0 < lines < 2000
    copy = damage.readable_files([str(cut)])[0]
    assert copy.endswith("cut.jsonl") and open(copy, "rb").read() == b"".join(LINES.splitlines(True)[:lines])


def test_a_gz_name_on_bytes_that_are_not_gzip_is_damaged_from_line_one(tmp_path):
    fake = tmp_path / "fake.jsonl.gz"
    fake.write_bytes(b'{"a": 1}\n')
    damage = check_gzip_inputs([str(fake)])
    why = "corrupt gzip data (Error -3 while decompressing data: incorrect header check)"
    assert damage.rejects == [(str(fake), 0, why)]
    assert open(damage.copies[str(fake)], "rb").read() == b""
