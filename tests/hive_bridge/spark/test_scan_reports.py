"""The scan-report file of the hudi-hive data source stays bounded in a long-lived driver, and the latest report
of a table is still found after a rotation; the report folder is the user's own (private, checked), and a link
planted in it is never followed."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from hive_bridge import config
from hive_bridge.spark import reports
from hive_bridge.spark.private import UnsafeFolderError
from hive_bridge.spark.reports import last_scan_report, record_scan


def test_reports_rotate_and_the_latest_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVE_BRIDGE_SCAN_REPORTS", str(tmp_path / "reports"))
    monkeypatch.setattr(reports, "ROTATE_BYTES", 2_000)
    record_scan({"path": "/t/only-early", "files_read": 7})
    for i in range(400):
        record_scan({"path": f"/t/{i % 3}", "files_read": i, "filter": "x" * 20})
    name = reports.report_file()
    files = sorted(os.listdir(os.path.dirname(name)))
    assert files == ["scans.jsonl", "scans.jsonl.1"]
    # bounded: each file is at most the limit plus one report
    assert all(os.path.getsize(os.path.join(os.path.dirname(name), f)) < 2_200 for f in files)
    assert last_scan_report() == {"path": "/t/0", "files_read": 399, "filter": "x" * 20}
    assert last_scan_report("/t/2")["files_read"] == 398  # type: ignore[index]
    assert last_scan_report("/t/only-early") is None  # rotated away twice over: gone, not wrong


def test_a_report_only_in_the_rotated_file_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVE_BRIDGE_SCAN_REPORTS", str(tmp_path / "reports"))
    for i in range(6):
        record_scan({"path": "/t/a", "files_read": i, "filter": "y" * 30})
    monkeypatch.setattr(reports, "ROTATE_BYTES", 1)
    record_scan({"path": "/t/b", "files_read": 1})  # rotates: every report of /t/a is in scans.jsonl.1 now
    name = reports.report_file()
    assert Path(name).read_text().count("\n") == 1 and Path(name + ".1").read_text().count("\n") == 6
    assert last_scan_report("/t/a")["files_read"] == 5  # type: ignore[index]
    assert last_scan_report("file:/t/b")["files_read"] == 1  # type: ignore[index]
    assert last_scan_report()["path"] == "/t/b"  # type: ignore[index]


# -- the report folder is private --------------------------------------------------------------------------------

def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_the_default_folder_is_the_users_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HIVE_BRIDGE_SCAN_REPORTS", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert config.settings().scan_reports == tmp_path / "home" / ".cache" / "hive-bridge" / "scans"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    # HIVE_BRIDGE_CACHE (which a driver may set after its workers started) does not move the reports
    monkeypatch.setenv("HIVE_BRIDGE_CACHE", str(tmp_path / "cache"))
    assert config.settings().scan_reports == tmp_path / "xdg" / "hive-bridge" / "scans"
    old = os.umask(0)  # the modes are the ones asked for, whatever the umask
    try:
        record_scan({"path": "/t/a", "files_read": 3})
    finally:
        os.umask(old)
    folder = tmp_path / "xdg" / "hive-bridge" / "scans"
    assert _mode(folder) == 0o700 and _mode(folder / "scans.jsonl") == 0o600
    assert os.lstat(folder).st_uid == os.geteuid()
    assert last_scan_report("/t/a") == {"path": "/t/a", "files_read": 3}


def test_a_planted_link_is_never_followed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "reports"
    monkeypatch.setenv("HIVE_BRIDGE_SCAN_REPORTS", str(folder))
    monkeypatch.setattr(reports, "_TOLD", set())
    folder.mkdir(mode=0o700)
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    (folder / "scans.jsonl").symlink_to(victim)
    with pytest.warns(RuntimeWarning, match=r"scans\.jsonl is a symbolic link: hive-bridge does not follow it"):
        record_scan({"path": "/t/a", "files_read": 1})
    assert victim.read_text() == "keep me\n"
    with pytest.raises(UnsafeFolderError, match="symbolic link"):
        last_scan_report()
    # a rotation over a planted scans.jsonl.1 moves the name, never writes through the link
    (folder / "scans.jsonl").unlink()
    (folder / "scans.jsonl.1").symlink_to(victim)
    monkeypatch.setattr(reports, "ROTATE_BYTES", 1)
    record_scan({"path": "/t/a", "files_read": 1})
    record_scan({"path": "/t/b", "files_read": 2})  # rotates scans.jsonl onto the name scans.jsonl.1
    assert victim.read_text() == "keep me\n"
    assert not (folder / "scans.jsonl.1").is_symlink()
    assert last_scan_report()["path"] == "/t/b"  # type: ignore[index]
    assert last_scan_report("/t/a")["files_read"] == 1  # type: ignore[index]


def test_a_folder_that_is_a_link_or_writable_by_others_is_refused(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reports, "_TOLD", set())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(elsewhere)
    monkeypatch.setenv("HIVE_BRIDGE_SCAN_REPORTS", str(link))
    with pytest.warns(RuntimeWarning, match=r"link is a symbolic link, not a folder"):
        record_scan({"path": "/t/a", "files_read": 1})
    assert list(elsewhere.iterdir()) == []
    with pytest.raises(UnsafeFolderError, match="not a folder"):
        last_scan_report()
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("HIVE_BRIDGE_SCAN_REPORTS", str(shared))
    with pytest.warns(RuntimeWarning, match=r"shared is writable by its group or by others \(mode 0777\)"):
        record_scan({"path": "/t/a", "files_read": 1})
    assert list(shared.iterdir()) == []
    with pytest.raises(UnsafeFolderError, match="writable by its group or by others"):
        last_scan_report()


def test_a_folder_of_another_user_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a folder to another user needs root")
    monkeypatch.setattr(reports, "_TOLD", set())
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, 65534, 65534)  # nobody
    monkeypatch.setenv("HIVE_BRIDGE_SCAN_REPORTS", str(theirs))
    with pytest.warns(RuntimeWarning, match=r"theirs belongs to uid 65534, not to this user"):
        record_scan({"path": "/t/a", "files_read": 1})
    assert list(theirs.iterdir()) == []
    with pytest.raises(UnsafeFolderError, match="belongs to uid 65534"):
        last_scan_report()
