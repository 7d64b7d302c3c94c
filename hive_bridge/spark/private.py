"""Private folders and files of this user: what hive-bridge writes for itself on the local machine (scan reports,
the planner's long answers to the JVM) goes into a folder created ``0700`` and checked every time it is opened
(owned by this user, not a symbolic link, not writable by group or others), into files created ``0600``; a file
name that turns out to be a symbolic link is never followed. Folders and files are opened once and used through
their descriptors, so nothing can be swapped between the check and the use."""

from __future__ import annotations

import errno
import os
import stat

from hive_bridge.errors import HiveBridgeError

_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafeFolderError(HiveBridgeError):
    """A folder (or a file in it) hive-bridge keeps private files in is not private: the message names it, says
    why, and says that nothing was written or read."""


def _kind(path: str, dir_fd: int | None = None) -> str:
    try:
        st = os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return "missing"
    if stat.S_ISLNK(st.st_mode):
        return "symbolic link"
    if stat.S_ISDIR(st.st_mode):
        return "folder"
    if stat.S_ISREG(st.st_mode):
        return "file"
    return "special file"


def _check_owner_and_mode(st: os.stat_result, shown: str, what: str, regular: bool) -> None:
    uid = os.geteuid()
    if regular and not stat.S_ISREG(st.st_mode):
        raise UnsafeFolderError(f"{what} {shown} is not a regular file")
    if st.st_uid != uid:
        raise UnsafeFolderError(f"{what} {shown} belongs to uid {st.st_uid}, not to this user (uid {uid})")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafeFolderError(f"{what} {shown} is writable by its group or by others "
                                f"(mode {stat.S_IMODE(st.st_mode):04o})")


def open_private_folder(path: str | os.PathLike[str], what: str, *, create: bool = True) -> int | None:
    """A descriptor of the folder ``path`` (created ``0700`` when missing and ``create``; its parents are created
    as usual), after checking that it is a folder of this user that no one else may write into. None when it is
    missing and not ``create``. :class:`UnsafeFolderError` (naming ``what`` and the path) otherwise."""
    shown = os.fspath(path)
    if create:
        parent = os.path.dirname(os.path.abspath(shown))
        if not os.path.isdir(parent):
            os.makedirs(parent, exist_ok=True)
        try:
            os.mkdir(shown, 0o700)
        except FileExistsError:
            pass
    try:
        fd = os.open(shown, _FOLDER_FLAGS)
    except FileNotFoundError:
        if not create:
            return None
        raise UnsafeFolderError(f"{what} {shown} cannot be created") from None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise UnsafeFolderError(f"{what} {shown} is a {_kind(shown)}, not a folder: hive-bridge does not "
                                    "follow links there") from None
        raise UnsafeFolderError(f"{what} {shown} cannot be opened: {exc.strerror}") from None
    try:
        _check_owner_and_mode(os.fstat(fd), shown, what, regular=False)
    except UnsafeFolderError:
        os.close(fd)
        raise
    return fd


def open_private_file(folder_fd: int, folder: str, name: str, flags: int, what: str) -> int | None:
    """A descriptor of the file ``name`` in the private folder ``folder_fd`` (``folder``: its path, for messages),
    opened with ``flags`` (with ``os.O_CREAT`` it is created ``0600``) and never through a link; the file must be
    a regular file of this user. None when it is missing and ``flags`` do not create it."""
    shown = os.path.join(folder, name)
    try:
        fd = os.open(name, flags | _FILE_FLAGS, 0o600, dir_fd=folder_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeFolderError(f"{what} {shown} is a symbolic link: hive-bridge does not follow it") from None
        raise UnsafeFolderError(f"{what} {shown} cannot be opened: {exc.strerror}") from None
    try:
        _check_owner_and_mode(os.fstat(fd), shown, what, regular=True)
    except UnsafeFolderError:
        os.close(fd)
        raise
    return fd
