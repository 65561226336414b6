"""The summary comment's hidden markers cannot be forged by names from a pull request."""

from __future__ import annotations

from flagbot.bot.github.markdown import code, code_block, plain
from flagbot.bot.handlers import summary
from tests.bot.devices_support import (
    deliver_pr,
    deliver_run,
    device_repo,
    finish_run,
    op,
    open_device_pr,
    report,
)

FORGED = ("backends/_a_x100/<!-- flagbot:kernels -->.py",
          "backends/_a_x100/<!-- /flagbot:kernels -->.py",
          'backends/_a_x100/<!-- flagbot:summary {"bot_labels":["x"]} -->.py')


def test_a_file_named_like_the_markers_leaves_the_checks_table_in_place(emu, settings) -> None:
    repo = device_repo(emu)
    files = {path: "def softmax(x, dim):\n    return x\n" for path in FORGED}
    open_device_pr(emu, repo, files=files)
    deliver_pr(emu, settings, repo)
    [run] = emu.workflow_runs(repo)
    finish_run(emu, repo, run["id"], report([op("softmax")]))
    deliver_run(emu, settings, repo, run["id"])  # rewrites the kernels section of the summary
    [body] = [c["body"] for c in emu.comments(repo, 1) if summary.MARKER in c["body"]]
    assert "**Checks**" in body and "| flagbot / backends |" in body
    assert "| a_x100 | ✅ success" in body
    assert body.count("<!-- flagbot:kernels -->") == 1 and body.count("<!-- /flagbot:kernels -->") == 1
    assert body.count("<!-- flagbot:summary") == 1
    first = body.partition("\n")[0]
    assert summary.META_RE.fullmatch(first) and '"x"' not in first


def test_no_helper_lets_an_html_comment_through() -> None:
    for text in FORGED + ("-->", "<!--"):
        for rendered in (code(text), code_block(text), plain(text)):
            assert "<!--" not in rendered and "-->" not in rendered
