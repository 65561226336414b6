"""The report artifact of a finished workflow run: found by name, fetched and unpacked in bounds.

The zip is untrusted: its listed size, its downloaded size and each member's unpacked size are
capped before anything is read, only `report.json` is taken (names with folders or `..` are
ignored), and nothing is written to disk.
"""

from __future__ import annotations

import io
import zipfile

from flagbot.bot.devices.report import MAX_REPORT_BYTES
from flagbot.bot.github import ArtifactTooLarge, GitHubClient

MAX_ZIP_BYTES = 8 * 1024 * 1024
REPORT = "report.json"


class ArtifactError(Exception):
    """No usable report in the run's artifacts; the message says why (shown on the check run)."""


def fetch_report(client: GitHubClient, run_id: int, name: str) -> bytes:
    """The bytes of `report.json` in the run's artifact called `name`."""
    found = [a for a in client.run_artifacts(run_id) if a.name == name]
    if not found:
        raise ArtifactError(f"the run uploaded no artifact named `{name}`")
    art = found[0]
    if art.expired:
        raise ArtifactError(f"the artifact `{name}` has expired")
    if art.size > MAX_ZIP_BYTES:
        raise ArtifactError(f"the artifact `{name}` is {art.size} bytes, over the limit of "
                            f"{MAX_ZIP_BYTES}")
    try:
        data = client.download_artifact(art.id, MAX_ZIP_BYTES)
    except ArtifactTooLarge as exc:
        raise ArtifactError(f"the artifact `{name}` is over the limit of {MAX_ZIP_BYTES} bytes") from exc
    return unpack(data, name)


def unpack(data: bytes, name: str) -> bytes:
    """`report.json` from the zip `data`, read no further than the report size limit."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = {info.filename: info for info in archive.infolist()}
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise ArtifactError(f"the artifact `{name}` is not a zip file: {str(exc)[:200]}") from None
    info = members.get(REPORT)
    if info is None:
        raise ArtifactError(f"the artifact `{name}` holds no `{REPORT}`")
    if info.file_size > MAX_REPORT_BYTES:
        raise ArtifactError(f"`{REPORT}` is {info.file_size} bytes, over the limit of {MAX_REPORT_BYTES}")
    try:
        with archive.open(info) as fh:
            out = fh.read(MAX_REPORT_BYTES + 1)
    except (zipfile.BadZipFile, NotImplementedError, OSError, RuntimeError, EOFError) as exc:
        raise ArtifactError(f"`{REPORT}` cannot be unpacked: {str(exc)[:200]}") from None
    if len(out) > MAX_REPORT_BYTES:
        raise ArtifactError(f"`{REPORT}` unpacks to more than {MAX_REPORT_BYTES} bytes")
    return out
