"""Toy plugins for the core's tests.

* :mod:`.testdev`: a compute backend over numpy (device ``testdev``, key
  ``TestDev``) with a few kernels, so dispatch is tested without the cpu plugin;
* :mod:`.logging_key`: a functionality key ``Logging`` between Autograd and
  Dense whose boxed fallback logs each op and redispatches;
* :mod:`.broken`: registers a key, a backend and kernels, then raises;
* :mod:`.exits`: the same with SystemExit and KeyboardInterrupt;
* :mod:`.testdev_extras`: kernels for :mod:`.testdev`'s backend, so it must load after it.

Tests register them in-process (``tensorplug.plugins.register``) or through
entry points of a ``*.dist-info`` directory written at test time.
"""
