"""Can an output path be written? Checked before a command's work starts, so a bad path
fails at once, naming itself, instead of after minutes of replay, measurement or tracking.

Each check creates the missing folders on the way (the write would need them anyway) and
raises :class:`OSError` whose ``filename`` is the path given and whose ``strerror`` says
what is wrong, in words a user can act on (``folder /x is not writable``). Permission bits
are not trusted alone: a file is probed by opening it for appending (which truncates
nothing and leaves nothing behind), a folder by creating and removing a temporary file in
it, which catches /proc, /sys, read-only mounts and running as root.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path


def probe_file(p: Path) -> None:
    """Open ``p`` for appending (creates nothing lasting, truncates nothing). Raises OSError."""
    existed = p.exists()
    with open(p, "ab"):
        pass
    if not existed:
        p.unlink()


def _no_file_in_the_way(folder: Path, path) -> None:
    """NotADirectoryError naming the nearest existing ancestor of ``folder`` when it is a file."""
    for d in (folder, *folder.parents):
        if d.exists():
            if not d.is_dir():
                raise NotADirectoryError(errno.ENOTDIR, f"{d} is a file, not a folder", str(path))
            return


def check_file(path: str | os.PathLike, *, folder_reason: str = "is a folder, not a file") -> Path:
    """``path`` as a Path once it is known to be a writable file name: not a folder, its
    folder created when missing and writable, the file itself openable for writing.

    Raises:
        OSError: naming ``path``; ``folder_reason`` is the reason when it is a folder.
    """
    p = Path(path).expanduser()
    if p.is_dir():
        raise IsADirectoryError(errno.EISDIR, folder_reason, str(path))
    parent = p.parent
    _no_file_in_the_way(parent, path)
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OSError(exc.errno, f"cannot create its folder {parent} ({exc.strerror or exc})", str(path)) from None
    if not os.access(parent, os.W_OK):
        raise PermissionError(errno.EACCES, f"folder {parent} is not writable", str(path))
    try:
        probe_file(p)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
    return p


def check_folder(path: str | os.PathLike) -> Path:
    """``path`` as a Path once it is a writable folder (created when missing).

    Raises:
        OSError: naming ``path``: a file is in the way, it cannot be created, or nothing
            can be written into it.
    """
    d = Path(path).expanduser()
    if d.exists() and not d.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "exists and is not a folder", str(path))
    _no_file_in_the_way(d.parent, path)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OSError(exc.errno, f"cannot create the folder ({exc.strerror or exc})", str(path)) from None
    if not os.access(d, os.W_OK):
        raise PermissionError(errno.EACCES, "folder is not writable", str(path))
    try:
        with tempfile.TemporaryFile(dir=d):
            pass
    except OSError as exc:
        raise OSError(exc.errno, f"nothing can be written into it ({exc.strerror or exc})", str(path)) from None
    return d
