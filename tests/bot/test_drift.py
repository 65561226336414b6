"""`flagbot drift` and the worker's drift schedule against the emulator: a scenario repository
whose default branch gains a commit that conflicts with one device's stored patch."""

# ruff: noqa: F811  (fixtures imported from tests/bot/core_support.py, then used as arguments)

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flagbot.bot.chores.drift import DriftSchedule
from flagbot.bot.chores.drift import main as drift_main
from flagbot.bot.settings import Settings
from flagbot.bot.store.chores import open_chores
from testing.bot_e2e import vendor_patch
from testing.github_emulator import Emulator
from testing.github_emulator.state import EmuRepo
from tests.bot.core_support import redis_server, redis_url  # noqa: F401  (fixtures)

REPO = "flagos/FlagScale"
CORE = "".join(f"line {i}\n" for i in range(30))
TITLE = "flagbot: drift for A_X100"


@pytest.fixture
def scenario(emu: Emulator, tmp_path: Path) -> EmuRepo:
    """main with A_X100's patch (src/core.py lines 5 and 25, src/extra.py) and B_Y100's
    (src/other.py), both listed for the base in hetero.txt."""
    repo = emu.create_repo(REPO, files={"README.md": "FlagScale\n", "src/core.py": CORE,
                                        "src/other.py": "a\nb\nc\n",
                                        "hardwares/README.md": "vendor patches\n"})
    a_rel, a_data = vendor_patch(repo, tmp_path / "a", "A_X100", {
        "src/core.py": CORE.replace("line 5\n", "line 5 ax\n").replace("line 25\n", "line 25 ax\n"),
        "src/extra.py": "ax = 1\n"})
    b_rel, b_data = vendor_patch(repo, tmp_path / "b", "B_Y100", {"src/other.py": "a\nb by\nc\n"})
    base8 = a_rel.split("/")[2]
    emu.push_commit(repo, branch="main", files={a_rel: a_data, b_rel: b_data,
                                                "hardwares/hetero.txt": f"{base8}: A_X100 B_Y100\n"},
                    message="Store the vendor patches")
    return repo


@pytest.fixture
def app_env(emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The environment `flagbot serve` would have, pointing at the emulator."""
    for name, value in (("GITHUB_APP_ID", emu.app_id), ("GITHUB_PRIVATE_KEY", emu.private_key_pem),
                        ("GITHUB_API_URL", emu.url), ("FLAGBOT_STATE_DIR", str(tmp_path / "state")),
                        ("FLAGBOT_WRITE_SPACING_S", "0")):
        monkeypatch.setenv(name, value)
    return Settings.from_env()


def drift_issues(emu: Emulator) -> list[dict[str, Any]]:
    with emu.state.lock:
        rs = emu.state.repo(REPO)
        assert rs is not None
        return [{"number": it.number, "title": it.title, "state": it.state, "body": it.body or "",
                 "labels": list(it.labels), "user": it.user}
                for it in rs.issues.values() if not it.is_pull]


def run(emu: Emulator, *args: str) -> tuple[int, list[str]]:
    """`flagbot drift --repo REPO ...`: exit status and the writes it made."""
    emu.reset_calls()
    status = drift_main(["--repo", REPO, *args])
    return status, [f"{c.method} {c.path}" for c in emu.writes()]


def conflict(emu: Emulator, repo: EmuRepo, line: str) -> str:
    """Upstream rewrites one line of src/core.py; returns the commit."""
    text = CORE.replace(f"{line}\n", f"{line} upstream\n")
    return emu.push_commit(repo, branch="main", files={"src/core.py": text}, message=f"rewrite {line}")


def test_drift_opens_one_issue_keeps_it_quiet_updates_it_and_closes_it(
        emu: Emulator, scenario: EmuRepo, app_env: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(emu) == (0, [])  # everything applies: no issue, no label
    emu.push_commit(scenario, branch="main", files={"README.md": "news\n"}, message="docs")
    culprit = conflict(emu, scenario, "line 5")
    emu.push_commit(scenario, branch="main", files={"README.md": "more\n"}, message="docs")

    status, writes = run(emu)
    assert status == 1
    assert writes == [f"POST /repos/{REPO}/labels", f"POST /repos/{REPO}/issues"]
    (issue,) = drift_issues(emu)
    assert (issue["title"], issue["labels"], issue["state"]) == (TITLE, ["drift"], "open")
    assert "`src/core.py`" in issue["body"] and "`@@ -3," in issue["body"]
    assert culprit[:12] in issue["body"] and "src/extra.py" not in issue["body"]
    assert "heterogeneous set" in issue["body"] and "A_X100 drifted" in issue["body"]

    assert run(emu) == (1, [])  # nothing changed: nothing written, not even a comment

    conflict_too = CORE.replace("line 5\n", "line 5 upstream\n").replace("line 25\n", "line 25 up\n")
    emu.push_commit(scenario, branch="main", files={"src/core.py": conflict_too}, message="more")
    status, writes = run(emu)
    assert (status, writes) == (1, [f"PATCH /repos/{REPO}/issues/{issue['number']}"])
    (updated,) = drift_issues(emu)
    assert updated["body"].count("`@@ ") == 2  # both hunks of src/core.py conflict now

    emu.push_commit(scenario, branch="main", files={"src/core.py": CORE}, message="revert")
    capsys.readouterr()
    status, writes = run(emu, "--dry-run")
    assert (status, writes) == (0, [])
    assert f"would write: issue.close number={issue['number']}" in capsys.readouterr().out

    status, writes = run(emu)
    assert status == 0
    assert writes == [f"POST /repos/{REPO}/issues/{issue['number']}/comments",
                      f"PATCH /repos/{REPO}/issues/{issue['number']}"]
    (closed,) = drift_issues(emu)
    assert closed["state"] == "closed"
    assert "applies onto `main` again" in emu.comments(REPO, issue["number"])[-1]["body"]
    assert run(emu) == (0, [])


def test_dry_run_prints_the_body_it_would_write_and_writes_nothing(
        emu: Emulator, scenario: EmuRepo, app_env: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    conflict(emu, scenario, "line 25")
    capsys.readouterr()
    assert run(emu, "--dry-run") == (1, [])
    out = capsys.readouterr().out
    assert f"would write: issue.create title='{TITLE}'" in out
    assert f"--- body of `{TITLE}` ---" in out and "`src/core.py`" in out
    assert drift_issues(emu) == []


def test_an_unknown_repository_is_a_usage_error(emu: Emulator, app_env: Settings) -> None:
    from flagbot.hooks.errors import UsageError

    with pytest.raises(UsageError, match="installation on flagos/nope"):
        drift_main(["--repo", "flagos/nope"])


@pytest.mark.parametrize("store", ["sqlite", "redis"])
def test_the_schedule_checks_each_installed_repository_once_per_period(
        emu: Emulator, scenario: EmuRepo, app_env: Settings, store: str,
        request: pytest.FixtureRequest) -> None:
    settings = app_env
    if store == "redis":
        settings = settings.with_overrides(redis_url=request.getfixturevalue("redis_url"))
    emu.create_repo("flagos/docs", files={"README.md": "no patches here\n"})
    conflict(emu, scenario, "line 5")
    schedule = DriftSchedule(settings, open_chores(settings))
    (outcome,) = schedule.tick()  # the repository without hardwares/ is not checked
    assert outcome.full_name == REPO and outcome.report.drifted_devices() == ["A_X100"]
    assert [i["title"] for i in drift_issues(emu)] == [TITLE]
    emu.reset_calls()
    assert schedule.tick() == []  # checked less than drift.every_hours (24) ago
    assert [c.path for c in emu.calls if c.path.startswith("/repos/")] == []  # not even asked
    later = DriftSchedule(settings, open_chores(settings), clock=lambda: 2e10)
    (again,) = later.tick()
    assert again.actions == []  # due again, same drift: the issue is left as it is


def test_a_huge_conflict_keeps_the_body_under_githubs_limit_and_says_what_it_left_out() -> None:
    from flagbot.bot.chores.drift import render
    from flagbot.hooks.patches.drift import Conflict, DriftReport, PatchDrift

    hunks = tuple(f"@@ -{i},3 +{i},3 @@ `x` @someone" for i in range(30))
    conflicts = tuple(Conflict(f"src/f{i}.py", hunks, "patch does not apply") for i in range(80))
    drifts = [PatchDrift("A_X100", f"{b:08x}", f"hardwares/A_X100/{b:08x}/{b:08x}.patch", 1, 1,
                         "Adapt @everyone", conflicts, None) for b in range(12)]
    body = render("A_X100", DriftReport("f" * 40, drifted=drifts), "main") or ""
    assert len(body) <= 65536
    assert "and 30 more files" in body and "and 10 more hunks" in body
    assert "(cut here: run `flagbot drift` for the rest)" in body
    assert " @everyone" not in body.replace("`Adapt @everyone`", "")  # only inside code spans
