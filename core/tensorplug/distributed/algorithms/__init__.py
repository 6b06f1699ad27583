"""``tensorplug.distributed.algorithms``: algorithms on the public distributed functions (DDP's
communication hooks)."""
