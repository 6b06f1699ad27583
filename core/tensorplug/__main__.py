"""``python -m tensorplug``: the ``tensorplug`` command (see :mod:`tensorplug.cli`)."""

from .cli import main

raise SystemExit(main())
