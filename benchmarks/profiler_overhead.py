"""Profiler overhead on a small op: ``x + y`` on float32[4].

Usage: ``python benchmarks/profiler_overhead.py``

Three configurations in one run: the profiler plugin disabled
(``tensorplug.plugins.disable("profiler")``), enabled with no profile active
(the key is in no key set, so this should match the disabled figure), and
inside an active ``profile`` (every call recorded). Each figure is the best
of several ``timeit`` repeats; ratios are against the disabled plugin.
"""

from __future__ import annotations

import timeit

import tensorplug as tp


def best_time(fn, number=20000, repeat=7):
    """Seconds per call: best of ``repeat`` runs of ``number`` calls."""
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main():
    """Time the three configurations and print the table."""
    x, y = tp.ones(4), tp.ones(4)

    def add():
        return x + y

    # interleaved (disabled, enabled, disabled, enabled): drift on a shared machine hits both sides
    disabled, enabled = [], []
    for _ in range(3):
        tp.plugins.disable("profiler")
        disabled.append(best_time(add))
        tp.plugins.enable("profiler")
        enabled.append(best_time(add))
    with tp.profiler.profile() as prof:
        active = best_time(add, number=2000)
    with tp.profiler.profile(record_shapes=True, profile_memory=True):
        active_full = best_time(add, number=2000)
    assert prof.events(), "the profile recorded nothing"
    base = min(disabled)
    rows = [("plugin disabled", base), ("enabled, no profile active", min(enabled)),
            ("inside profile()", active), ("inside profile(record_shapes, profile_memory)", active_full)]
    print(f"{'x + y, float32[4]':<48}{'us/call':>10}{'ratio':>8}")
    for name, t in rows:
        print(f"{name:<48}{t * 1e6:>10.3f}{t / base:>8.2f}")


if __name__ == "__main__":
    main()
