"""``python -m hive_bridge`` is the ``hive-bridge`` command."""

from hive_bridge.app.cli import main

raise SystemExit(main())
