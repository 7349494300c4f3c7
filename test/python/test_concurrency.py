"""Python threads using tessera at once: backward on separate graphs and into one shared
leaf (backward releases the GIL, so the engine really runs them side by side), and ops
while another thread changes the thread count. The TSan build runs this file with the
ThreadSanitizer runtime preloaded (test/python/CMakeLists.txt); everywhere the results are
checked against torch."""
import threading

import pytest
import torch

import tessera

THREADS = 8


def run_threads(n, fn):
    errors = []

    def body(i):
        try:
            fn(i)
        except BaseException as e:  # noqa: BLE001 - reported on the main thread
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    if errors:
        raise errors[0]


def test_thread_backward_on_separate_graphs():
    results = {}

    def work(i):
        x = tessera.linspace(-1, 1, 4096, dtype=tessera.float64).mul(i + 1).requires_grad_()
        for _ in range(5):
            x.grad = None
            (x.tanh() * x).sin().sum().backward()
        results[i] = x.grad.numpy().copy()

    run_threads(THREADS, work)
    for i in range(THREADS):
        x = torch.linspace(-1, 1, 4096, dtype=torch.float64).mul(i + 1).requires_grad_()
        (x.tanh() * x).sin().sum().backward()
        assert torch.allclose(torch.from_numpy(results[i]), x.grad, rtol=1e-12, atol=1e-12)


def test_thread_backward_into_one_shared_leaf():
    w = tessera.full((4096,), 0.5, dtype=tessera.float64, requires_grad=True)
    rounds = 5

    def work(i):
        for _ in range(rounds):
            (w * float(i + 1)).sum().backward()

    run_threads(THREADS, work)
    expected = rounds * THREADS * (THREADS + 1) / 2
    assert tessera.equal(w.grad, tessera.full((4096,), expected, dtype=tessera.float64))


def test_thread_count_changes_while_threads_compute():
    stop = threading.Event()
    before = tessera.get_num_threads()

    def changer():
        k = 0
        while not stop.is_set():
            tessera.set_num_threads(1 + k % 4)
            k += 1

    c = threading.Thread(target=changer)
    c.start()
    try:
        def work(i):
            x = tessera.full((1 << 15,), float(i + 1), dtype=tessera.float64)
            for _ in range(20):
                assert (x + x).sum().item() == 2.0 * (i + 1) * (1 << 15)

        run_threads(4, work)
    finally:
        stop.set()
        c.join()
        tessera.set_num_threads(before)


if __name__ == "__main__":
    raise SystemExit(pytest.main([__file__, "-q"]))
