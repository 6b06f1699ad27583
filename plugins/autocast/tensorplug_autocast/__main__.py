"""``python -m tensorplug_autocast``: print the default op lists as docs/autocast.md shows them."""

from .policy import markdown_tables

print(markdown_tables(), end="")
