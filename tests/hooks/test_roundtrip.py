from __future__ import annotations

import pytest

from flagbot.hooks.patches import patchfile, roundtrip
from flagbot.hooks.patches.scratch import Scratch
from tests.hooks.conftest import Repo


def golden_mails(vendor_repo: Repo) -> list[patchfile.Mail]:
    from tests.hooks.test_patchfile import GOLDEN

    return patchfile.split_mails(GOLDEN)


def test_mail_by_mail_rebuilds_the_vendor_tree(vendor_repo: Repo) -> None:
    mails = golden_mails(vendor_repo)
    with Scratch(vendor_repo.path) as gd:
        applied = roundtrip.apply_series(gd, vendor_repo.rev("base"), mails)
        assert roundtrip.tree_differences(gd, applied[-1].tree, vendor_repo.rev("cur"),
                                          "hardwares") == []
        assert applied[0].message.startswith(b"[Vendor] adapt model")


def test_partial_index_check_agrees_with_the_full_one(vendor_repo: Repo) -> None:
    mails = golden_mails(vendor_repo)
    base, cur = vendor_repo.rev("base"), vendor_repo.rev("cur")
    with Scratch(vendor_repo.path) as gd:
        listing = gd.run(roundtrip.ls_tree_args(base)).stdout
        entries = roundtrip.entries_for(listing, roundtrip.touched_paths(mails))
        roundtrip.apply_partial(gd, entries, mails)
        changes = gd.run(roundtrip.changes_args(base, cur, "hardwares")).stdout
        assert roundtrip.partial_differences(gd, entries, changes) == []
        wrong = gd.run(roundtrip.changes_args(base, vendor_repo.rev("cur~2"), "hardwares")).stdout
        assert roundtrip.partial_differences(gd, entries, wrong) == ["src/model.py", "temp.txt"]


def test_failed_hunk_names_file_and_patch_line(vendor_repo: Repo) -> None:
    from tests.hooks.test_patchfile import GOLDEN

    mails = patchfile.split_mails(GOLDEN.replace(b" line 1\n", b" line one\n", 1))
    with Scratch(vendor_repo.path) as gd, pytest.raises(roundtrip.ApplyFailed) as err:
        roundtrip.apply_series(gd, vendor_repo.rev("base"), mails)
    assert err.value.path == "src/model.py" and err.value.number == 1
    assert GOLDEN.split(b"\n")[err.value.line - 1].startswith((b"@@", b"diff --git"))


def test_am_author_formats_the_mail_date_as_git_does() -> None:
    info = {"Author": "J\u00f6rg", "Email": "j@x", "Date": "Tue, 25 Nov 2025 10:00:00 -0730"}
    assert roundtrip.am_author(info) == "J\u00f6rg <j@x> 1764091800 -0730"  # what git records


def test_scratch_writes_nothing_into_the_repository(vendor_repo: Repo) -> None:
    before = sorted((vendor_repo.path / ".git").rglob("*"))
    with Scratch(vendor_repo.path) as gd:
        roundtrip.apply_series(gd, vendor_repo.rev("base"), golden_mails(vendor_repo))
        root = gd.cwd
    assert sorted((vendor_repo.path / ".git").rglob("*")) == before and not root.exists()


@pytest.mark.parametrize("date", ["Tue, 25 Nov 2025 10:00:00 -0730", "Thu, 1 Jan 1970 00:00:00 +0000",
                                  "Mon, 29 Feb 2016 23:59:59 +1400", "Sun, 31 Dec 2045 12:00:00 -1200"])
def test_mail_date_agrees_with_the_email_package(date: str) -> None:
    import email.utils

    parsed = email.utils.parsedate_tz(date)
    assert parsed is not None
    assert roundtrip.mail_date(date) == f"{email.utils.mktime_tz(parsed)} {date[-5:]}"


def test_scratch_directory_honours_tmpdir(vendor_repo: Repo, tmp_path: pytest.TempPathFactory,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    with Scratch(vendor_repo.path) as gd:
        assert gd.cwd.parent == tmp_path and oct(gd.cwd.stat().st_mode)[-3:] == "700"
    assert list(tmp_path.iterdir()) == []  # type: ignore[attr-defined]
