"""A killed writer's temporary files are removed by the next run that holds the directory's lock."""

from rageval.io import remove_stale_temps, write_text_atomic


def test_only_the_atomic_writer_s_leftovers_are_removed(tmp_path):
    leftovers = [tmp_path / ".summary.md.8vcqihwq.tmp", tmp_path / ".manifest.json.a_b1C2d3.tmp"]
    keep = [tmp_path / ".keep", tmp_path / "notes.tmp", tmp_path / ".x.tmp", tmp_path / "summary.md"]
    for p in leftovers + keep:
        p.write_text("x")
    (tmp_path / ".dir.abcdefgh.tmp").mkdir()  # a folder of that name is not ours
    assert sorted(remove_stale_temps(tmp_path)) == sorted(leftovers)
    assert all(p.exists() for p in keep) and (tmp_path / ".dir.abcdefgh.tmp").is_dir()
    assert remove_stale_temps(tmp_path / "missing") == []


def test_a_real_writer_temp_name_matches(tmp_path, monkeypatch):
    import os

    seen = []
    real_replace = os.replace

    def spy(src, dst):
        seen.append(os.path.basename(src))
        raise KeyboardInterrupt  # killed between write and rename: the writer cleans up, but a SIGKILL would not

    monkeypatch.setattr(os, "replace", spy)
    try:
        write_text_atomic(tmp_path / "summary.md", "x")
    except KeyboardInterrupt:
        pass
    monkeypatch.setattr(os, "replace", real_replace)
    (tmp_path / seen[0]).write_text("x")  # what a SIGKILL at that moment leaves behind
    assert [p.name for p in remove_stale_temps(tmp_path)] == [seen[0]]
