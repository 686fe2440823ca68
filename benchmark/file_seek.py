"""Every seek to an offset that comes from outside (a query parameter, a stored upload
offset, a record inside an archive) goes through ``seek_clamped``: an offset past the
end of a file, or past what the operating system can seek to, would raise ``OSError``
or ``OverflowError`` (a server error) instead of reading nothing. A test bans any other
``.seek(`` with a computed offset."""

import os
from typing import BinaryIO


def seek_clamped(handle: BinaryIO, offset: int) -> int:
    """Move ``handle`` to ``offset`` clamped to the file: below 0 is 0, past the end is the
    end. Returns the position reached."""
    size = os.fstat(handle.fileno()).st_size
    position = min(max(0, int(offset)), size)
    handle.seek(position)
    return position
