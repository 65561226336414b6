from __future__ import annotations

from pathlib import Path

import pytest

from flagbot.hooks.patches import patchfile

GOLDEN = (Path(__file__).parents[2] / "testing/resources/patches/vendor_A_X100.patch").read_bytes()


def test_golden_series_splits_into_mails_with_line_numbers() -> None:
    mails = patchfile.split_mails(GOLDEN)
    assert len(mails) == 4 and mails[0].line == 1
    assert GOLDEN.split(b"\n")[mails[1].line - 1].startswith(b"From " + mails[1].commit.encode())
    assert patchfile.base_commit(GOLDEN) is not None


def test_text_before_the_first_mail_is_corrupt() -> None:
    with pytest.raises(patchfile.PatchFileError):
        patchfile.split_mails(b"junk\n" + GOLDEN)


def test_masking_from_lines_keeps_everything_else() -> None:
    masked = patchfile.mask_from_lines(GOLDEN)
    assert len(masked) == len(GOLDEN) and patchfile.first_difference(GOLDEN, masked) == 1


@pytest.mark.parametrize("line, paths", [
    (b"diff --git a/x y.txt b/x y.txt", ["x y.txt", "x y.txt"]),
    (b'diff --git a/mv.txt "b/moved \\303\\251.txt"', ["mv.txt", "moved \u00e9.txt"]),
    (b"diff --git a/a b/c", ["a", "c"]),
])
def test_diff_header_paths_are_unquoted(line: bytes, paths: list[str]) -> None:
    assert patchfile.header_paths(line) == paths


@pytest.mark.parametrize("line, path", [
    (b"rename from mv.txt", "mv.txt"),
    (b'rename to "moved \\303\\251.txt"', "moved \u00e9.txt"),
    (b"+++ b/sp ace.txt\t", "sp ace.txt"),
    (b"+++ /dev/null", None),
])
def test_path_lines_are_unquoted(line: bytes, path: str | None) -> None:
    assert patchfile.line_path(line) == path


@pytest.mark.parametrize("message, survives", [
    (b"[Metax] add kernels\n\nbody\n", True),
    (b"plain subject\n", True),
    (b"[PATCH] x\n", False),
    (b"Re: x\n", False),
    (b"x\n\nsee\n---\nnot a diff\n", False),
    (b"x\n\ndiff --git a/a b/a\n", False),
    (b"x\n\nFrom: someone <a@b>\n", False),
    (b"two line\nsubject\n", False),
])
def test_message_hazards(message: bytes, survives: bool) -> None:
    assert (patchfile.message_hazard(message) is None) == survives


def test_stripspace_squeezes_blank_lines_and_trailing_blanks() -> None:
    assert patchfile.stripspace(b"\n\na  \n\n\n\nb\t\n\n") == b"a\n\nb\n"


def test_binary_without_data_is_found() -> None:
    assert patchfile.unrepresentable_binaries(b"Binary files a/x.bin and b/x.bin differ\n") == [
        "a/x.bin and b/x.bin"]
