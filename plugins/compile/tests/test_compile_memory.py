"""Memory planning: results only lowered calls read live in buffers the program owns, shared by
results whose lifetimes do not overlap and reused from call to call; nothing escapes from them."""

import re
import tracemalloc

import numpy as np

import tensorplug as tp

from compile_helpers import same


def chain(a, b, c, d):
    return ((a * b + c).relu() * d).tanh() * 0.5


def inputs(n, seed=0):
    rng = np.random.default_rng(seed)
    return [tp.from_numpy(rng.standard_normal(n).astype(np.float32)) for _ in range(4)]


def test_intermediates_share_buffers_and_results_are_fresh():
    cf = tp.compile(chain)
    xs = inputs(1000)
    outs = [cf(*xs) for _ in range(4)]
    assert cf.graphs
    buffers = set(re.findall(r"_fbuf\d+", cf.code))
    assert 1 <= len(buffers) <= 2  # five intermediates, at most two alive at once
    assert all(same(o, chain(*xs)) for o in outs)
    assert len({id(o.numpy()) for o in outs}) == 4 and not np.shares_memory(outs[2].numpy(), outs[3].numpy())


def test_a_compiled_chain_allocates_only_its_result():
    xs = inputs(10 ** 5)
    cf = tp.compile(chain)
    for _ in range(3):
        cf(*xs)

    def peak(fn):
        tracemalloc.start()
        fn(*xs)
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top
    eager, compiled = peak(chain), peak(cf)
    result = 10 ** 5 * 4
    assert eager >= 2 * result  # eager holds a temporary beside each new result
    assert compiled < 1.05 * result, (compiled, eager)  # compiled: the result is the only new array


def test_two_threads_replaying_one_program_each_get_their_own_results():
    import threading
    cf = tp.compile(chain)
    xs = inputs(1000)
    for _ in range(3):
        cf(*xs)
    assert cf.graphs
    errors = []

    def work(seed):
        try:
            for i in range(50):
                mine = inputs(1000, seed=seed * 100 + i)
                if not same(cf(*mine), chain(*mine)):
                    errors.append((seed, i))
        except Exception as e:  # reported below, not lost in the thread
            errors.append(e)
    threads = [threading.Thread(target=work, args=(s,)) for s in (1, 2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
