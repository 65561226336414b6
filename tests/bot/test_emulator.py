"""The GitHub API emulator, driven through real PyGithub (and raw HTTP where PyGithub hides details)."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import jwt
import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from github import Auth, Github, GithubException, GithubIntegration, GithubRetry
from github.GithubException import RateLimitExceededException, UnknownObjectException

from testing.github_emulator import (
    Emulator,
    EmuRepo,
    new_private_key_pem,
    sign_body,
    webhook_fixtures,
)

WEBHOOKS = Path(__file__).resolve().parents[1] / "data" / "webhooks"
BASE_FILES: dict[str, str | bytes] = {
    "README.md": "# demo\n",
    "docs/guide.md": "one\ntwo\nthree\n",
    "old/name.txt": "rename me\n" * 5,
    "gone.txt": "bye\n",
}


@pytest.fixture(scope="module")
def app_key() -> str:
    return new_private_key_pem()  # shared: RSA generation is the slowest part of an emulator start


@pytest.fixture
def emu(tmp_path: Path, app_key: str) -> Iterator[Emulator]:
    with Emulator(tmp_path / "gh", private_key_pem=app_key) as e:
        yield e


def test_each_emulator_makes_its_own_app_key_by_default(tmp_path: Path) -> None:
    a, b = Emulator(tmp_path / "a"), Emulator(tmp_path / "b")
    assert a.private_key_pem != b.private_key_pem and "RSA PRIVATE KEY" in a.private_key_pem


@pytest.fixture
def repo(emu: Emulator) -> EmuRepo:
    return emu.create_repo("flagos/FlagGems", files=BASE_FILES)


def client(emu: Emulator, retry: object = None) -> Github:
    auth = Auth.AppAuth(emu.app_id, emu.private_key_pem).get_installation_auth(emu.installation_id)
    return Github(auth=auth, base_url=emu.url, retry=retry, seconds_between_requests=None,  # type: ignore[arg-type]
                  seconds_between_writes=None)


def token(emu: Emulator) -> str:
    gi = GithubIntegration(auth=Auth.AppAuth(emu.app_id, emu.private_key_pem), base_url=emu.url)
    return gi.get_access_token(emu.installation_id).token


def open_feature_pr(emu: Emulator, repo: EmuRepo, n_files: int = 0) -> dict[str, object]:
    files: dict[str, str | bytes] = {f"hardwares/A_X100/f{i:03}.txt": f"{i}\n" for i in range(n_files)}
    files["docs/guide.md"] = "one\n2\nthree\n"
    emu.push_commit(repo, branch="feature", files=files, delete=["gone.txt"])
    return emu.open_pull(repo, head="feature", base="main", user="alice", title="Add A_X100")


# -- auth -----------------------------------------------------------------------------------------

def test_app_jwt_exchanges_for_an_installation_token_that_authorizes_calls(emu: Emulator, repo: EmuRepo) -> None:
    gi = GithubIntegration(auth=Auth.AppAuth(emu.app_id, emu.private_key_pem), base_url=emu.url)
    inst = gi.get_repo_installation("flagos", "FlagGems")
    assert inst.id == emu.installation_id
    assert client(emu).get_repo("flagos/FlagGems").default_branch == "main"
    assert [c.auth for c in emu.calls] == ["app", "app", "installation"]


def test_installation_lists_its_repositories(emu: Emulator, repo: EmuRepo) -> None:
    emu.create_repo("flagos/FlagScale")
    gi = GithubIntegration(auth=Auth.AppAuth(emu.app_id, emu.private_key_pem), base_url=emu.url)
    names = [r.full_name for r in gi.get_app_installation(emu.installation_id).get_repos()]
    assert names == ["flagos/FlagGems", "flagos/FlagScale"]


def test_jwt_signed_by_another_key_is_refused(emu: Emulator, repo: EmuRepo) -> None:
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = other.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()).decode()
    gi = GithubIntegration(auth=Auth.AppAuth(emu.app_id, pem), base_url=emu.url, retry=None)
    with pytest.raises(GithubException) as exc:
        gi.get_access_token(emu.installation_id)
    assert exc.value.status == 401


def test_jwt_with_wrong_issuer_or_long_expiry_is_refused(emu: Emulator) -> None:
    now = int(time.time())
    url = f"{emu.url}/app"
    for claims in ({"iat": now - 60, "exp": now + 300, "iss": "999"},
                   {"iat": now - 60, "exp": now + 3600, "iss": emu.app_id}):
        bad = jwt.encode(claims, emu.private_key_pem, algorithm="RS256")
        assert requests.get(url, headers={"Authorization": f"Bearer {bad}"}).status_code == 401
    good = jwt.encode({"iat": now - 60, "exp": now + 300, "iss": emu.app_id}, emu.private_key_pem, "RS256")
    assert requests.get(url, headers={"Authorization": f"Bearer {good}"}).json()["slug"] == "flagbot"


def test_calls_without_a_live_installation_token_get_401(emu: Emulator, repo: EmuRepo) -> None:
    url = f"{emu.url}/repos/flagos/FlagGems"
    assert requests.get(url).status_code == 401
    tok = token(emu)
    assert requests.get(url, headers={"Authorization": f"token {tok}"}).status_code == 200
    emu.expire_tokens()
    assert requests.get(url, headers={"Authorization": f"token {tok}"}).status_code == 401


# -- repositories, contents, permissions ----------------------------------------------------------

def test_clone_url_is_a_file_url_that_git_can_clone_and_fetch_pr_heads_from(
        emu: Emulator, repo: EmuRepo, tmp_path: Path) -> None:
    open_feature_pr(emu, repo)
    r = client(emu).get_repo("flagos/FlagGems")
    assert r.clone_url == repo.clone_url and r.clone_url.startswith("file://")
    dest = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", r.clone_url, str(dest)], check=True)
    assert (dest / "docs/guide.md").read_text() == "one\ntwo\nthree\n"
    subprocess.run(["git", "-C", str(dest), "fetch", "-q", "origin", "refs/pull/1/head"], check=True)
    head = subprocess.run(["git", "-C", str(dest), "rev-parse", "FETCH_HEAD"], capture_output=True, text=True)
    assert head.stdout.strip() == emu.pull(repo, 1)["head"]["sha"]  # type: ignore[index]


def test_contents_returns_base64_files_directories_and_404(emu: Emulator, repo: EmuRepo) -> None:
    open_feature_pr(emu, repo)
    r = client(emu).get_repo("flagos/FlagGems")
    assert r.get_contents("docs/guide.md").decoded_content == b"one\ntwo\nthree\n"  # type: ignore[union-attr]
    assert r.get_contents("docs/guide.md", ref="feature").decoded_content == b"one\n2\nthree\n"  # type: ignore[union-attr]
    listing = r.get_contents("docs")
    assert [c.path for c in listing] == ["docs/guide.md"]  # type: ignore[union-attr]
    root = r.get_contents("")
    assert {(c.path, c.type) for c in root} >= {("docs", "dir"), ("README.md", "file")}  # type: ignore[union-attr]
    with pytest.raises(UnknownObjectException):
        r.get_contents(".github/flagbot.yml")


def test_collaborator_permission_follows_set_permission(emu: Emulator, repo: EmuRepo) -> None:
    emu.set_permission(repo, "bob", "write")
    emu.set_permission(repo, "mia", "maintain")
    r = client(emu).get_repo("flagos/FlagGems")
    assert r.get_collaborator_permission("bob") == "write"
    assert r.get_collaborator_permission("flagos") == "admin"
    assert r.get_collaborator_permission("stranger") == "read"
    raw = requests.get(f"{emu.url}/repos/flagos/FlagGems/collaborators/mia/permission",
                       headers={"Authorization": f"token {token(emu)}"}).json()
    assert (raw["permission"], raw["role_name"]) == ("write", "maintain")


# -- pulls and files ------------------------------------------------------------------------------

def test_pull_has_head_and_base_refs_shas_repos_and_author(emu: Emulator, repo: EmuRepo) -> None:
    head_sha = emu.push_commit(repo, branch="feature", files={"x.txt": "x\n"})
    emu.open_pull(repo, head="feature", user="alice")
    pr = client(emu).get_repo("flagos/FlagGems").get_pull(1)
    assert (pr.number, pr.state, pr.user.login) == (1, "open", "alice")
    assert (pr.head.ref, pr.head.sha, pr.head.repo.full_name) == ("feature", head_sha, "flagos/FlagGems")
    assert pr.base.ref == "main" and pr.base.repo.clone_url == repo.clone_url
    assert pr.url.startswith(emu.url) and pr.changed_files == 1


def test_pull_files_report_status_counts_patch_and_previous_filename(emu: Emulator, repo: EmuRepo) -> None:
    emu.push_commit(repo, branch="feature", files={"new/name.txt": "rename me\n" * 5, "docs/guide.md": "one\n2\nthree\n",
                                                   "bin.dat": b"\x00\x01\x02"},
                    delete=["old/name.txt", "gone.txt"])
    emu.open_pull(repo, head="feature")
    files = {f.filename: f for f in client(emu).get_repo("flagos/FlagGems").get_pull(1).get_files()}
    assert {n: f.status for n, f in files.items()} == {
        "new/name.txt": "renamed", "docs/guide.md": "modified", "bin.dat": "added", "gone.txt": "removed"}
    assert files["new/name.txt"].previous_filename == "old/name.txt"
    guide = files["docs/guide.md"]
    assert (guide.additions, guide.deletions, guide.changes) == (1, 1, 2)
    assert guide.patch == "@@ -1,3 +1,3 @@\n one\n-two\n+2\n three"
    assert files["bin.dat"].patch is None


def test_pull_file_line_counts_match_git_numstat(emu: Emulator, repo: EmuRepo) -> None:
    old = "".join(f"line {i}\n" for i in range(40))
    new = old.replace("line 3\n", "--- 3\n+++ 3\n").replace("line 30\n", "").replace("line 39\n", "end\n")
    emu.push_commit(repo, branch="base2", files={"big.txt": old}, base="main")
    emu.push_commit(repo, branch="feature", files={"big.txt": new}, base="base2")
    emu.open_pull(repo, head="feature", base="base2")
    [f] = client(emu).get_repo("flagos/FlagGems").get_pull(1).get_files()
    numstat = subprocess.run(["git", "-C", str(repo.bare_path), "diff", "--numstat", "base2...feature"],
                             capture_output=True, text=True, check=True).stdout.split()
    assert (f.additions, f.deletions) == (int(numstat[0]), int(numstat[1])) == (3, 3)
    assert f.patch.count("@@ -") == 3


def test_pull_files_paginate_with_link_headers_and_per_page(emu: Emulator, repo: EmuRepo) -> None:
    open_feature_pr(emu, repo, n_files=248)  # + modified guide + removed gone.txt = 250
    g = client(emu)
    g.per_page = 100
    files = list(g.get_repo("flagos/FlagGems").get_pull(1).get_files())
    assert len(files) == 250 and len({f.filename for f in files}) == 250
    pages = [c for c in emu.calls if c.path.endswith("/pulls/1/files")]
    assert [c.query.get("page", "1") for c in pages] == ["1", "2", "3"]
    raw = requests.get(f"{emu.url}/repos/flagos/FlagGems/pulls/1/files?per_page=100&page=2",
                       headers={"Authorization": f"token {token(emu)}"})
    assert 'rel="next"' in raw.headers["Link"] and "page=3" in raw.headers["Link"]
    assert 'rel="prev"' in raw.headers["Link"] and len(raw.json()) == 100


def test_pull_files_stop_at_3000_like_github(emu: Emulator, repo: EmuRepo) -> None:
    open_feature_pr(emu, repo, n_files=3005)
    assert emu.pull(repo, 1)["changed_files"] == 3007
    url, auth = f"{emu.url}/repos/flagos/FlagGems/pulls/1/files", {"Authorization": f"token {token(emu)}"}
    last = requests.get(f"{url}?per_page=100&page=30", headers=auth)
    assert len(last.json()) == 100 and 'rel="next"' not in last.headers["Link"]
    assert requests.get(f"{url}?per_page=100&page=31", headers=auth).json() == []


def test_pull_from_a_fork_points_head_at_the_fork(emu: Emulator, repo: EmuRepo) -> None:
    fork = emu.fork_repo(repo, "carol/FlagGems")
    emu.push_commit(fork, branch="fix", files={"README.md": "# fixed\n"})
    emu.open_pull(repo, head="fix", user="carol", head_repo=fork)
    pr = client(emu).get_repo("flagos/FlagGems").get_pull(1)
    assert pr.head.repo.full_name == "carol/FlagGems" and pr.head.repo.clone_url == fork.clone_url
    assert pr.head.label == "carol:fix" and pr.base.repo.full_name == "flagos/FlagGems"
    assert [f.filename for f in pr.get_files()] == ["README.md"]


def test_update_pull_head_and_change_base_are_seen_by_the_api(emu: Emulator, repo: EmuRepo) -> None:
    open_feature_pr(emu, repo)
    emu.push_commit(repo, branch="release", files={"rel.txt": "r\n"}, base="main")
    new = emu.push_commit(repo, branch="feature", files={"more.txt": "m\n"})
    assert emu.update_pull_head(repo, 1)["head"]["sha"] == new  # type: ignore[index]
    changes = emu.change_base(repo, 1, "release")
    assert changes["base"]["ref"]["from"] == "main"
    pr = client(emu).get_repo("flagos/FlagGems").get_pull(1)
    assert (pr.head.sha, pr.base.ref) == (new, "release")
    assert "rel.txt" not in {f.filename for f in pr.get_files()}


def test_git_refs_update_fast_forward_only_unless_forced(emu: Emulator, repo: EmuRepo) -> None:
    head = str(open_feature_pr(emu, repo)["head"]["sha"])  # type: ignore[index]
    r = client(emu).get_repo("flagos/FlagGems")
    main = r.get_branch("main").commit.sha
    ref = r.create_git_ref("refs/heads/flagbot/A_X100", main)
    ref.edit(head)
    with pytest.raises(GithubException) as exc:
        ref.edit(main)
    assert exc.value.status == 422
    ref.edit(main, force=True)
    assert r.get_git_ref("heads/flagbot/A_X100").object.sha == main
    ref.delete()
    with pytest.raises(UnknownObjectException):
        r.get_git_ref("heads/flagbot/A_X100")


def test_issue_api_sees_prs_and_plain_issues(emu: Emulator, repo: EmuRepo) -> None:
    open_feature_pr(emu, repo)
    emu.open_issue(repo, title="Bug")
    r = client(emu).get_repo("flagos/FlagGems")
    assert r.get_issue(1).as_pull_request().head.ref == "feature"
    assert r.get_issue(2).pull_request is None and r.get_issue(2).title == "Bug"
    with pytest.raises(UnknownObjectException):
        r.get_pull(2)


# -- labels ---------------------------------------------------------------------------------------

def test_creating_an_existing_label_is_422_already_exists(emu: Emulator, repo: EmuRepo) -> None:
    r = client(emu).get_repo("flagos/FlagGems")
    r.create_label("vendor: A_X100", "1d76db", "Touches hardwares/A_X100")
    with pytest.raises(GithubException) as exc:
        r.create_label("Vendor: a_x100", "000000")
    assert exc.value.status == 422 and exc.value.data["errors"][0]["code"] == "already_exists"  # type: ignore[index]
    assert emu.labels(repo) == {"vendor: A_X100": {"color": "1d76db", "description": "Touches hardwares/A_X100"}}


def test_adding_labels_auto_creates_missing_ones_and_removing_needs_presence(emu: Emulator, repo: EmuRepo) -> None:
    open_feature_pr(emu, repo)
    pr = client(emu).get_repo("flagos/FlagGems").get_pull(1)
    pr.add_to_labels("module: PrivateUse1", "area/ci")
    assert emu.labels(repo)["module: PrivateUse1"] == {"color": "ededed", "description": None}
    assert [lab.name for lab in pr.get_labels()] == ["module: PrivateUse1", "area/ci"]
    pr.remove_from_labels("area/ci")
    assert emu.issue_labels(repo, 1) == ["module: PrivateUse1"]
    with pytest.raises(GithubException) as exc:
        pr.remove_from_labels("area/ci")
    assert exc.value.status == 404 and exc.value.data["message"] == "Label does not exist"  # type: ignore[index]
    assert any(c.path.endswith("/labels/area/ci") and c.status == 404 for c in emu.writes())


def test_label_edit_and_delete_update_issues(emu: Emulator, repo: EmuRepo) -> None:
    open_feature_pr(emu, repo)
    emu.label_issue(repo, 1, "old")
    r = client(emu).get_repo("flagos/FlagGems")
    r.get_label("old").edit("new", "ff0000", "renamed")
    assert emu.issue_labels(repo, 1) == ["new"]
    r.get_label("new").delete()
    assert emu.issue_labels(repo, 1) == [] and emu.labels(repo) == {}


# -- comments and reactions -----------------------------------------------------------------------

def test_comments_are_created_by_the_bot_paginated_edited_and_deleted(emu: Emulator, repo: EmuRepo) -> None:
    open_feature_pr(emu, repo)
    for i in range(34):
        emu.add_comment(repo, 1, "bob", f"comment {i}")
    pr = client(emu).get_repo("flagos/FlagGems").get_pull(1)
    mine = pr.create_issue_comment("<!-- flagbot:summary -->\nfirst")
    assert mine.user.login == emu.bot_login
    listed = list(pr.get_issue_comments())
    assert len(listed) == 35 and listed[-1].id == mine.id
    assert len([c for c in emu.calls if c.path.endswith("/issues/1/comments") and c.method == "GET"]) == 2
    mine.edit("<!-- flagbot:summary -->\nsecond")
    assert emu.comments(repo, 1)[-1]["body"].endswith("second")
    mine.delete()
    assert len(emu.comments(repo, 1)) == 34


def test_reactions_are_idempotent_and_validated(emu: Emulator, repo: EmuRepo) -> None:
    open_feature_pr(emu, repo)
    cid = emu.payload(event="issue_comment", action="created", repo=repo, number=1, sender="bob",
                      body="/unpatch A_X100 aaaa")["comment"]["id"]
    comment = client(emu).get_repo("flagos/FlagGems").get_pull(1).get_issue_comment(cid)
    comment.create_reaction("eyes")
    comment.create_reaction("eyes")
    assert emu.reactions(repo, cid) == ["eyes"]
    assert [c.status for c in emu.calls if c.path.endswith("/reactions")] == [201, 200]
    with pytest.raises(GithubException) as exc:
        comment.create_reaction("thumbsup")
    assert exc.value.status == 422


# -- check runs -----------------------------------------------------------------------------------

def annotations(n: int, start: int = 0) -> list[dict[str, object]]:
    return [{"path": "hardwares/A_X100/x.patch", "start_line": i + 1, "end_line": i + 1,
             "annotation_level": "failure", "message": f"finding {i}"} for i in range(start, start + n)]


def test_check_run_annotations_accumulate_across_updates(emu: Emulator, repo: EmuRepo) -> None:
    sha = str(open_feature_pr(emu, repo)["head"]["sha"])  # type: ignore[index]
    r = client(emu).get_repo("flagos/FlagGems")
    run = r.create_check_run("flagbot / backends", sha, status="in_progress")
    run.edit(output={"title": "2 findings", "summary": "s", "annotations": annotations(50)})
    run.edit(conclusion="failure", output={"title": "55 findings", "summary": "s", "annotations": annotations(5, 50)})
    [stored] = emu.check_runs(repo, sha)
    assert (stored["status"], stored["conclusion"], stored["name"]) == ("completed", "failure", "flagbot / backends")
    assert stored["output"]["title"] == "55 findings" and len(stored["output"]["annotations"]) == 55
    assert r.get_check_run(run.id).output.annotations_count == 55


def test_more_than_50_annotations_in_one_request_is_422_and_changes_nothing(emu: Emulator, repo: EmuRepo) -> None:
    sha = str(open_feature_pr(emu, repo)["head"]["sha"])  # type: ignore[index]
    r = client(emu).get_repo("flagos/FlagGems")
    with pytest.raises(GithubException) as exc:
        r.create_check_run("flagbot / backends", sha, output={"title": "t", "summary": "s",
                                                               "annotations": annotations(51)})
    assert exc.value.status == 422 and emu.check_runs(repo, sha) == []
    run = r.create_check_run("flagbot / backends", sha, status="in_progress")
    with pytest.raises(GithubException):
        run.edit(conclusion="failure", output={"title": "t", "summary": "s", "annotations": annotations(51)})
    assert emu.check_runs(repo, sha)[0]["status"] == "in_progress"


def test_check_runs_for_a_ref_filter_by_name_and_keep_the_latest(emu: Emulator, repo: EmuRepo) -> None:
    sha = str(open_feature_pr(emu, repo)["head"]["sha"])  # type: ignore[index]
    r = client(emu).get_repo("flagos/FlagGems")
    r.create_check_run("flagbot / patches", sha, conclusion="failure")
    newer = r.create_check_run("flagbot / patches", sha, conclusion="success")
    r.create_check_run("flagbot / backends", sha, conclusion="success")
    runs = list(r.get_commit(sha).get_check_runs(check_name="flagbot / patches"))
    assert [run.id for run in runs] == [newer.id]
    assert len(list(r.get_commit(sha).get_check_runs(filter="all"))) == 3


def test_check_run_on_an_unknown_sha_is_422(emu: Emulator, repo: EmuRepo) -> None:
    with pytest.raises(GithubException) as exc:
        client(emu).get_repo("flagos/FlagGems").create_check_run("x", "f" * 40)
    assert exc.value.status == 422


# -- recording, headers, faults -------------------------------------------------------------------

def test_unknown_routes_are_404_json_and_recorded_with_rate_limit_headers(emu: Emulator, repo: EmuRepo) -> None:
    resp = requests.post(f"{emu.url}/repos/flagos/FlagGems/dispatches", json={"event_type": "x"},
                         headers={"Authorization": f"token {token(emu)}"})
    assert resp.status_code == 404 and resp.json()["message"] == "Not Found"
    assert int(resp.headers["X-RateLimit-Remaining"]) < int(resp.headers["X-RateLimit-Limit"])
    last = emu.calls[-1]
    assert (last.method, last.path, last.json, last.status) == (
        "POST", "/repos/flagos/FlagGems/dispatches", {"event_type": "x"}, 404)
    assert emu.writes() == [last]


def test_rate_limit_headers_count_down_on_every_reply_even_errors(emu: Emulator, repo: EmuRepo) -> None:
    emu.inject(method="GET", path="/repos/flagos/FlagGems", status=502)
    url = f"{emu.url}/repos/flagos/FlagGems"
    replies = [requests.get(url), requests.get(url), requests.get(f"{emu.url}/nowhere")]
    assert [r.status_code for r in replies] == [502, 401, 404]
    remaining = [int(r.headers["X-RateLimit-Remaining"]) for r in replies]
    assert remaining == sorted(remaining, reverse=True) and len(set(remaining)) == 3
    assert all(r.headers["X-RateLimit-Resource"] == "core" and r.headers["X-RateLimit-Reset"] for r in replies)


def test_broken_json_body_is_400(emu: Emulator, repo: EmuRepo) -> None:
    resp = requests.post(f"{emu.url}/repos/flagos/FlagGems/labels", data=b"{nope",
                         headers={"Authorization": f"token {token(emu)}"})
    assert resp.status_code == 400


def test_injected_502_surfaces_in_pygithub_then_service_resumes(emu: Emulator, repo: EmuRepo) -> None:
    sha = str(open_feature_pr(emu, repo)["head"]["sha"])  # type: ignore[index]
    emu.inject(method="POST", path=r"/repos/.+/check-runs", status=502, times=1)
    r = client(emu).get_repo("flagos/FlagGems")
    with pytest.raises(GithubException) as exc:
        r.create_check_run("flagbot / patches", sha)
    assert exc.value.status == 502
    r.create_check_run("flagbot / patches", sha)
    assert [c.status for c in emu.calls if c.path.endswith("/check-runs")] == [502, 201]


def test_pygithub_retry_rides_over_an_injected_502(emu: Emulator, repo: EmuRepo) -> None:
    emu.inject(method="GET", path=r"/repos/flagos/FlagGems", status=502, times=2)
    r = client(emu, retry=GithubRetry(total=3, backoff_factor=0.01)).get_repo("flagos/FlagGems")
    assert r.full_name == "flagos/FlagGems"
    assert [c.status for c in emu.calls if c.path == "/repos/flagos/FlagGems"] == [502, 502, 200]


def test_secondary_rate_limit_with_retry_after_is_obeyed_by_github_retry(emu: Emulator, repo: EmuRepo) -> None:
    open_feature_pr(emu, repo)
    emu.inject(method="GET", path=r"/repos/.+/pulls/\d+/files", status=403, times=1, headers={"Retry-After": "1"},
               body={"message": "You have exceeded a secondary rate limit. Please wait a few minutes."})
    pr = client(emu, retry=GithubRetry(total=3)).get_repo("flagos/FlagGems").get_pull(1)
    start = time.monotonic()
    assert len(list(pr.get_files())) == 2
    assert time.monotonic() - start >= 0.9
    files_calls = [c for c in emu.calls if c.path.endswith("/files")]
    assert [c.status for c in files_calls] == [403, 200]
    assert files_calls[1].ts - files_calls[0].ts >= 0.9


def test_secondary_rate_limit_without_retry_raises_with_retry_after(emu: Emulator, repo: EmuRepo) -> None:
    open_feature_pr(emu, repo)
    emu.inject(method="GET", path=r"/repos/.+/pulls/\d+/files", status=403, headers={"Retry-After": "7"})
    pr = client(emu).get_repo("flagos/FlagGems").get_pull(1)
    with pytest.raises(RateLimitExceededException) as exc:
        list(pr.get_files())
    assert exc.value.headers["retry-after"] == "7"  # type: ignore[index]


def test_primary_rate_limit_injection_carries_reset_headers(emu: Emulator, repo: EmuRepo) -> None:
    reset = str(int(time.time()) + 60)
    emu.inject(method="GET", path=r"/repos/flagos/FlagGems", status=403,
               headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset})
    with pytest.raises(RateLimitExceededException) as exc:
        client(emu).get_repo("flagos/FlagGems")
    headers = exc.value.headers or {}
    assert (headers["x-ratelimit-remaining"], headers["x-ratelimit-reset"]) == ("0", reset)
    assert "API rate limit exceeded" in exc.value.data["message"]  # type: ignore[index]


def test_concurrent_writes_lose_nothing(emu: Emulator, repo: EmuRepo) -> None:
    open_feature_pr(emu, repo)
    tok = token(emu)

    def add(i: int) -> None:
        for j in range(5):
            requests.post(f"{emu.url}/repos/flagos/FlagGems/issues/1/labels", json={"labels": [f"l{i}-{j}"]},
                          headers={"Authorization": f"token {tok}"})

    threads = [threading.Thread(target=add, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(emu.issue_labels(repo, 1)) == 40 and len(emu.labels(repo)) == 40
    assert emu.server_errors == []


def test_files_of_a_300_file_pr_are_served_fast(emu: Emulator, repo: EmuRepo) -> None:
    open_feature_pr(emu, repo, n_files=298)
    g = client(emu)
    g.per_page = 100
    pr = g.get_repo("flagos/FlagGems").get_pull(1)
    start = time.monotonic()
    assert len(list(pr.get_files())) == 300
    assert time.monotonic() - start < 0.5


# -- payloads and signatures ----------------------------------------------------------------------

def test_signature_matches_githubs_documented_test_vector() -> None:
    expected = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert sign_body(b"Hello, World!", "It's a Secret to Everybody") == expected


def test_pull_request_payload_matches_the_api_state(emu: Emulator, repo: EmuRepo) -> None:
    pr = open_feature_pr(emu, repo)
    p = emu.payload(event="pull_request", action="opened", repo=repo, number=1, sender="alice")
    assert p["action"] == "opened" and p["number"] == 1 and p["installation"]["id"] == emu.installation_id
    assert p["repository"]["clone_url"] == repo.clone_url and p["repository"]["default_branch"] == "main"
    assert p["pull_request"]["head"]["sha"] == pr["head"]["sha"]  # type: ignore[index]
    assert p["sender"]["login"] == "alice" and p["repository"]["owner"]["login"] == "flagos"
    before = pr["head"]["sha"]  # type: ignore[index]
    emu.push_commit(repo, branch="feature", files={"z.txt": "z\n"})
    emu.update_pull_head(repo, 1)
    sync = emu.payload(event="pull_request", action="synchronize", repo=repo, number=1, before=before)
    assert sync["before"] == before and sync["after"] == sync["pull_request"]["head"]["sha"] != before


def test_issue_comment_payload_creates_the_comment(emu: Emulator, repo: EmuRepo) -> None:
    open_feature_pr(emu, repo)
    p = emu.payload(event="issue_comment", action="created", repo=repo, number=1, sender="bob", body="/unpatch A_X100 aaaa")
    assert p["issue"]["pull_request"]["url"].endswith("/pulls/1")
    assert p["comment"]["body"] == "/unpatch A_X100 aaaa" and p["comment"]["user"]["login"] == "bob"
    assert emu.comments(repo, 1)[0]["id"] == p["comment"]["id"]


def _without_timestamps(obj: object) -> object:
    if isinstance(obj, dict):
        return {k: _without_timestamps(v) for k, v in obj.items() if not k.endswith("_at")}
    if isinstance(obj, list):
        return [_without_timestamps(v) for v in obj]
    return obj


def test_recorded_webhook_payloads_are_what_the_builders_make(tmp_path: Path, app_key: str) -> None:
    with Emulator(tmp_path, app_id="123456", installation_id=45678901, private_key_pem=app_key) as emu:
        built = webhook_fixtures.build(emu)
    assert sorted(built) == sorted(p.stem for p in WEBHOOKS.glob("*.json"))
    for name, text in built.items():
        stored = json.loads((WEBHOOKS / f"{name}.json").read_text())
        assert _without_timestamps(json.loads(text)) == _without_timestamps(stored), name


@pytest.mark.parametrize("name,event", [
    ("ping", "ping"), ("pull_request.opened", "pull_request"), ("pull_request.synchronize", "pull_request"),
    ("pull_request.edited.base", "pull_request"), ("pull_request.opened.fork", "pull_request"),
    ("issue_comment.created", "issue_comment"),
])
def test_recorded_webhook_payloads_have_githubs_shape(name: str, event: str) -> None:
    p = json.loads((WEBHOOKS / f"{name}.json").read_text())
    if event == "ping":
        assert p["zen"] and p["hook"]["app_id"] == 123456
        return
    assert p["installation"]["id"] == 45678901 and p["repository"]["full_name"] == "flagos/FlagGems"
    assert p["repository"]["clone_url"] == "https://github.com/flagos/FlagGems.git"
    if event == "pull_request":
        pr = p["pull_request"]
        assert len(pr["head"]["sha"]) == 40 and pr["base"]["ref"] in ("main", "release-1.0")
        assert pr["number"] == p["number"] and p["action"] in name
    if name.endswith("edited.base"):
        assert p["changes"]["base"]["ref"]["from"] == "main" and p["pull_request"]["base"]["ref"] == "release-1.0"
    if name.endswith("fork"):
        assert p["pull_request"]["head"]["repo"]["full_name"] != p["pull_request"]["base"]["repo"]["full_name"]
    if event == "issue_comment":
        assert p["issue"]["pull_request"] and p["comment"]["body"].startswith("/unpatch")


# -- lifecycle ------------------------------------------------------------------------------------

def test_stop_closes_pooled_connections_and_restart_keeps_the_url(emu: Emulator, repo: EmuRepo) -> None:
    g = client(emu, retry=None)
    assert g.get_repo("flagos/FlagGems").full_name == "flagos/FlagGems"
    url = emu.url
    emu.stop()
    with pytest.raises(Exception):  # noqa: B017 - requests' ConnectionError, whatever the pool state
        g.get_repo("flagos/FlagGems")
    emu.start()
    assert emu.url == url
    assert client(emu).get_repo("flagos/FlagGems").full_name == "flagos/FlagGems"


def test_pull_counts_its_commits(emu: Emulator, repo: EmuRepo) -> None:
    emu.push_commit(repo, branch="feature", files={"a.txt": "a\n"})
    emu.push_commit(repo, branch="feature", files={"b.txt": "b\n"})
    emu.open_pull(repo, head="feature")
    pr = client(emu).get_repo("flagos/FlagGems").get_pull(1)
    assert pr.commits == 2 and [c.commit.message for c in pr.get_commits()] == ["Update", "Update"]
