"""The one place the core's version and its plugin API version are written.

``pyproject.toml`` reads ``__version__`` from here; plugins declare the
plugin API they are written for as ``TENSORPLUG_API = (major, minor)`` and the
plugin manager checks it with :func:`check_api_version` before enabling them.
"""

__version__ = "0.2.0"

#: ``(major, minor)`` of tensorplug.plugin_api. A plugin loads when the major
#: numbers agree and its minor is at most this one (a minor release only adds).
API_VERSION = (1, 3)


def check_api_version(wanted, plugin="plugin"):
    """Raise ImportError unless plugin API version ``wanted`` (``(major, minor)``) is served here."""
    try:
        major, minor = (int(x) for x in wanted)
    except (TypeError, ValueError):
        raise ImportError(f"{plugin} declares TENSORPLUG_API = {wanted!r}; expected a (major, minor) "
                          f"tuple such as {API_VERSION}") from None
    if major != API_VERSION[0] or minor > API_VERSION[1]:
        raise ImportError(f"{plugin} needs tensorplug plugin API {major}.{minor}, but tensorplug "
                          f"{__version__} provides plugin API {API_VERSION[0]}.{API_VERSION[1]}: install a "
                          f"version of the plugin built for this tensorplug, or a tensorplug that provides "
                          f"API {major}.{minor}")
