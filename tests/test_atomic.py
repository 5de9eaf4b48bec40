# SPDX-License-Identifier: BSD-3-Clause
"""All-or-nothing text output: every file written, or none of them."""

from __future__ import annotations

import os
import re
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import synthrisk._atomic
from synthrisk._atomic import (
    check_output_paths,
    new_file_mode,
    write_text_atomic,
    write_texts_atomic,
)
from synthrisk.exceptions import InputError

posix_only = pytest.mark.skipif(os.name == "nt", reason="POSIX permissions and pipes")


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def _names(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_write_text_atomic_writes_utf8_and_returns_path(tmp_path: Path) -> None:
    target = tmp_path / "report.txt"
    result = write_text_atomic(str(target), "risque élevé\nline 2\n")
    assert result == target
    assert isinstance(result, Path)
    assert target.read_bytes() == "risque élevé\nline 2\n".encode()
    assert _names(tmp_path) == ["report.txt"]


def test_write_text_atomic_bytes_written_as_they_are(tmp_path: Path) -> None:
    target = tmp_path / "data.bin"
    write_text_atomic(target, b"\x00\xff\r\n")
    assert target.read_bytes() == b"\x00\xff\r\n"


def test_write_text_atomic_creates_folders(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "report.json"
    write_text_atomic(target, "{}")
    assert target.read_text() == "{}"
    assert _names(tmp_path) == ["a", "a/b", "a/b/report.json"]


def test_write_texts_atomic_writes_all_in_order(tmp_path: Path) -> None:
    outputs = {
        tmp_path / "z.html": "<p>z</p>",
        tmp_path / "sub" / "a.json": "[1]",
        tmp_path / "m.txt": b"m",
    }
    assert write_texts_atomic(outputs) == list(outputs)
    assert (tmp_path / "z.html").read_text() == "<p>z</p>"
    assert (tmp_path / "sub" / "a.json").read_text() == "[1]"
    assert (tmp_path / "m.txt").read_bytes() == b"m"
    assert _names(tmp_path) == ["m.txt", "sub", "sub/a.json", "z.html"]


def test_write_texts_atomic_empty_mapping(tmp_path: Path) -> None:
    assert write_texts_atomic({}) == []
    assert _names(tmp_path) == []


def test_write_texts_atomic_nothing_written_when_one_target_fails(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    first = tmp_path / "report.html"
    outputs = {first: "<html/>", blocker / "report.json": "{}"}
    message = f"cannot write {str(blocker / 'report.json')!r}: "
    with pytest.raises(
        InputError, match=re.escape(message) + r".*; no output was written\.$"
    ):
        write_texts_atomic(outputs)
    assert not first.exists()
    assert blocker.read_text() == "a file, not a folder"
    assert _names(tmp_path) == ["blocker"]  # no temporary file left behind


def test_write_text_atomic_single_failure_message(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    target = blocker / "x.txt"
    with pytest.raises(
        InputError, match=rf"^cannot write {re.escape(repr(str(target)))}: [^;]+\.$"
    ):
        write_text_atomic(target, "x")
    assert _names(tmp_path) == ["blocker"]


def test_write_texts_atomic_existing_file_kept_when_another_fails(
    tmp_path: Path,
) -> None:
    existing = tmp_path / "report.html"
    existing.write_text("old")
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    with pytest.raises(InputError, match="no output was written"):
        write_texts_atomic({existing: "new", blocker / "x": "x"})
    assert existing.read_text() == "old"
    assert _names(tmp_path) == ["blocker", "report.html"]


def test_write_texts_atomic_failed_rename_cleans_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    existing = tmp_path / "a.txt"
    existing.write_text("old")

    def refuse(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(synthrisk._atomic.os, "replace", refuse)
    message = f"cannot write {str(existing)!r}: No space left on device."
    with pytest.raises(InputError, match=f"^{re.escape(message)}$"):
        write_texts_atomic({existing: "new", tmp_path / "b.txt": "b"})
    assert existing.read_text() == "old"
    assert _names(tmp_path) == ["a.txt"]


def test_write_texts_atomic_interrupted_write_cleans_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fdopen = os.fdopen
    calls: list[int] = []

    def fdopen_interrupted(fd: int, *args: object, **kwargs: object) -> object:
        calls.append(fd)
        if len(calls) == 2:
            os.close(fd)
            raise KeyboardInterrupt
        return real_fdopen(fd, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(synthrisk._atomic.os, "fdopen", fdopen_interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_texts_atomic({tmp_path / "a.txt": "a", tmp_path / "b.txt": "b"})
    assert len(calls) == 2
    assert _names(tmp_path) == []


def test_write_text_atomic_replaces_existing_file_atomically(tmp_path: Path) -> None:
    target = tmp_path / "report.txt"
    target.write_text("old content that is longer than the new one")
    link = tmp_path / "hard-link"
    os.link(target, link)
    write_text_atomic(target, "new")
    assert target.read_text() == "new"
    # the old file was swapped for a new one (a rename), not rewritten in place
    assert link.read_text() == "old content that is longer than the new one"
    assert not os.path.samefile(target, link)
    assert _names(tmp_path) == ["hard-link", "report.txt"]


@posix_only
@pytest.mark.parametrize(
    ("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)]
)
def test_write_text_atomic_new_file_mode_respects_umask(
    tmp_path: Path, umask: int, mode: int
) -> None:
    previous = os.umask(umask)
    try:
        assert new_file_mode(tmp_path / "new.txt") == mode
        write_text_atomic(tmp_path / "new.txt", "x")
        assert os.umask(umask) == umask  # the umask itself is left as it was
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == mode


@posix_only
@pytest.mark.usefixtures("umask_022")
@pytest.mark.parametrize("mode", [0o600, 0o755, 0o640])
def test_write_text_atomic_keeps_mode_of_replaced_file(
    tmp_path: Path, mode: int
) -> None:
    target = tmp_path / "report.txt"
    target.write_text("old")
    target.chmod(mode)
    assert new_file_mode(target) == mode
    write_text_atomic(target, "new")
    assert stat.S_IMODE(target.stat().st_mode) == mode
    assert target.read_text() == "new"


def test_write_texts_atomic_dash_goes_to_stdout(
    tmp_path: Path,
    capsysbinary: pytest.CaptureFixture[bytes],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    result = write_texts_atomic({Path("-"): "héllo\n", tmp_path / "r.txt": b"file"})
    assert result == [Path("-"), tmp_path / "r.txt"]
    assert capsysbinary.readouterr().out == "héllo\n".encode()
    assert _names(tmp_path) == ["r.txt"]  # no file named '-'


def test_write_texts_atomic_stdout_not_written_when_a_file_fails(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    with pytest.raises(InputError, match="no output was written"):
        write_texts_atomic({Path("-"): "to stdout", blocker / "x": "x"})
    assert capsysbinary.readouterr().out == b""


@posix_only
def test_write_texts_atomic_pipe_written_directly(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    try:
        assert write_texts_atomic({fifo: "through the pipe"}) == [fifo]
    finally:
        reader.join(timeout=10)
    assert received == [b"through the pipe"]
    assert _names(tmp_path) == ["pipe"]  # no temporary file beside it
    assert stat.S_ISFIFO(fifo.stat().st_mode)


# check_output_paths


def test_check_output_paths_accepts_distinct_files(tmp_path: Path) -> None:
    existing = tmp_path / "old.json"
    existing.write_text("{}")
    check_output_paths(
        [tmp_path / "a.html", existing, tmp_path / "new" / "b.json", Path("-")]
    )
    assert _names(tmp_path) == ["old.json"]  # checking writes nothing


def test_check_output_paths_refuses_folder(tmp_path: Path) -> None:
    message = (
        f"cannot write {str(tmp_path)!r}: it is a folder; "
        f"give a file name such as {str(tmp_path / 'report.json')!r}."
    )
    with pytest.raises(InputError, match=f"^{re.escape(message)}$"):
        check_output_paths([tmp_path])


def test_check_output_paths_refuses_same_file_twice(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    second = tmp_path / "sub" / ".." / "out.json"
    message = (
        f"two outputs would be written to the same file {str(second)!r}; "
        "give each its own file name."
    )
    with pytest.raises(InputError, match=f"^{re.escape(message)}$"):
        check_output_paths([tmp_path / "out.json", second])


@posix_only
def test_check_output_paths_refuses_symlink_to_other_output(tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    target.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    with pytest.raises(InputError, match="the same file"):
        check_output_paths([target, link])


def test_check_output_paths_refuses_two_stdouts() -> None:
    message = "only one output can go to standard output (`-`)."
    with pytest.raises(InputError, match=f"^{re.escape(message)}$"):
        check_output_paths([Path("-"), Path("-")])


def test_check_output_paths_refuses_impossible_name(tmp_path: Path) -> None:
    path = tmp_path / ("x" * 5000)
    with pytest.raises(
        InputError, match=rf"^cannot write '{re.escape(str(tmp_path))}/x+': .+\.$"
    ):
        check_output_paths([path])


def test_write_texts_atomic_refuses_before_writing(tmp_path: Path) -> None:
    first = tmp_path / "a.txt"
    with pytest.raises(InputError, match="it is a folder"):
        write_texts_atomic({first: "a", tmp_path: "b"})
    assert not first.exists()
    assert _names(tmp_path) == []
