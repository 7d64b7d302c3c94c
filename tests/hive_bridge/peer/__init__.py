"""Tests against Hudi's own Spark writer and reader (the peer set up by ``tools/hudi_peer.py``)."""

from __future__ import annotations

import pytest


def require_peer() -> None:
    """Set the peer up if it is not (a no-op when ``make hudi-peer`` ran), or skip saying why it cannot be."""
    import hudi_peer  # tools/, put on the path by the peer test modules

    why = hudi_peer.setup()
    if why is not None:
        pytest.skip(f"the Hudi peer could not be set up ({why}); make hudi-peer sets it up")
