"""The generated NumPy kernel's half-pairing path: blocks, threads and output aliasing.

The path cuts x into blocks of rows, takes each block's table rows once and may split the blocks
over threads.  None of that may change a single bit of the result, and an ``out`` that would be
overwritten while still being read must be refused."""

import threading

import numpy as np
import pytest

from symproof.kernels import ROPE_REFERENCES, rope_kernel, rope_spec
from symproof.kernels._reference import reference_frequencies


def _private_kernel(pairing="half", **constants):
    """A kernel instance of its own (``rope_kernel`` is cached), with module constants overridden."""
    kernel = rope_kernel.__wrapped__(rope_spec(head_dim=16, rotary_dim=12, denominator=16, pairing=pairing))
    kernel.apply.__globals__.update(constants)
    return kernel


# (x shape, positions shape): layouts and broadcasts of the ids, several blocks each
LAYOUTS = [
    pytest.param((3, 37, 4, 16), (37, 1), id="bthd-shared"),
    pytest.param((3, 37, 4, 16), (3, 37, 1), id="bthd-per-sample"),
    pytest.param((3, 4, 37, 16), (37,), id="bhtd-shared"),
    pytest.param((3, 4, 37, 16), (3, 1, 37), id="bhtd-per-sample"),
    pytest.param((3, 4, 37, 16), (3, 4, 37), id="per-head-ids"),
    pytest.param((5, 16), (5,), id="one-block"),
]


@pytest.mark.parametrize("x_shape, positions_shape", LAYOUTS)
@pytest.mark.parametrize("direction", ["apply", "backward"])
@pytest.mark.parametrize("in_place", [False, True], ids=["out", "in-place"])
def test_threads_and_blocks_do_not_change_a_bit(x_shape, positions_shape, direction, in_place):
    rng = np.random.default_rng(11)
    x = rng.standard_normal(x_shape).astype(np.float32)
    positions = rng.integers(0, 500, positions_shape)
    # a few rows per block and no size threshold, so every split below really happens
    kernel = _private_kernel(BLOCK_ELEMENTS=3 * 16, PARALLEL_ELEMENTS=1)
    rotate = getattr(kernel, direction)
    single = rotate(x, positions, threads=1)
    want = ROPE_REFERENCES["rotate_half"](x.astype(np.float64), positions, reference_frequencies(12, 10000.0, 16),
                                          rotary_dim=12, pairing="half", transpose=direction == "backward")
    assert np.max(np.abs(single - want)) <= 4 * np.finfo(np.float32).eps * np.max(np.abs(x))
    for threads in (2, 3, 7):
        y = x.copy()
        got = rotate(y, positions, out=y, threads=threads) if in_place else rotate(x, positions, threads=threads)
        np.testing.assert_array_equal(got, single)
    np.testing.assert_array_equal(single[..., 12:], x[..., 12:])


def test_large_array_at_default_constants_equals_single_thread():
    kernel = rope_kernel(rope_spec(head_dim=128, pairing="half"))
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 8, 1100, 128)).astype(np.float32)  # above PARALLEL_ELEMENTS
    assert x.size >= kernel.PARALLEL_ELEMENTS
    positions = np.maximum(np.arange(1100)[None, :] - np.array([[0], [40]]), 0)[:, None, :]
    np.testing.assert_array_equal(kernel.apply(x, positions, threads=2), kernel.apply(x, positions, threads=1))


def test_a_failure_in_a_helper_thread_reaches_the_caller():
    kernel = _private_kernel(BLOCK_ELEMENTS=16, PARALLEL_ELEMENTS=1)
    namespace = kernel.apply.__globals__
    blocks = namespace["_rotate_half_blocks"]

    def fail_in_helpers(part_blocks, *rest):
        if threading.current_thread() is not threading.main_thread():
            raise MemoryError("scratch in a helper thread")
        return blocks(part_blocks, *rest)

    namespace["_rotate_half_blocks"] = fail_in_helpers
    with pytest.raises(MemoryError, match="helper thread"):
        kernel.apply(np.ones((4, 16)), np.arange(4), threads=2)


def test_a_huge_thread_count_starts_at_most_max_threads(monkeypatch):
    kernel = _private_kernel(BLOCK_ELEMENTS=16, PARALLEL_ELEMENTS=1, MAX_THREADS=3)
    started = []
    real_thread = threading.Thread

    def counting_thread(*args, **kwargs):
        started.append(1)
        return real_thread(*args, **kwargs)

    monkeypatch.setattr(kernel.apply.__globals__["threading"], "Thread", counting_thread)
    x = np.random.default_rng(16).standard_normal((50, 16))
    np.testing.assert_array_equal(kernel.apply(x, np.arange(50), threads=10**9), kernel.apply(x, np.arange(50), threads=1))
    assert len(started) == 2  # the calling thread does one part itself


@pytest.mark.parametrize("threads", [0, -1, 1.5, True, "2"])
def test_threads_must_be_a_positive_integer(threads):
    kernel = rope_kernel(rope_spec(head_dim=16, pairing="half"))
    with pytest.raises(ValueError, match=r"threads must be a positive integer, got " + repr(threads).replace(".", r"\.")):
        kernel.apply(np.ones((2, 16)), np.arange(2), threads=threads)


@pytest.mark.parametrize("pairing", ["adjacent", "half"])
def test_out_overlapping_x_is_refused(pairing):
    kernel = rope_kernel(rope_spec(head_dim=8, pairing=pairing))
    buffer = np.random.default_rng(13).standard_normal((6, 8))
    with pytest.raises(ValueError, match="out must be x itself or an array that does not overlap x"):
        kernel.apply(buffer[:-1], np.arange(5), out=buffer[1:])


@pytest.mark.parametrize("pairing", ["adjacent", "half"])
def test_out_interleaved_with_x_without_overlap_is_accepted(pairing):
    kernel = rope_kernel(rope_spec(head_dim=8, pairing=pairing))
    buffer = np.random.default_rng(14).standard_normal((10, 8))
    x = buffer[0::2]
    want = kernel.apply(x.copy(), np.arange(5))
    got = kernel.apply(x, np.arange(5), out=buffer[1::2])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(buffer[0::2], x)


@pytest.mark.parametrize("pairing", ["adjacent", "half"])
def test_calls_from_several_threads_while_the_table_grows_agree_with_one_thread(pairing):
    """The position-range table is shared by the calls of every thread and grows when a call
    needs later ids: a call must keep to the table and first id it started with."""
    kernel, reference = _private_kernel(pairing), _private_kernel(pairing)
    rng = np.random.default_rng(15)
    x = rng.standard_normal((64, 16))
    jobs = [np.arange(64) + 37 * k for k in range(200)]  # each start later: the range grows often
    want = [reference.apply(x, ids) for ids in jobs]
    got = [None] * len(jobs)

    def run(first):
        for k in range(first, len(jobs), 4):
            got[k] = kernel.apply(x, jobs[k], threads=1)

    workers = [threading.Thread(target=run, args=(first,)) for first in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    for k in range(len(jobs)):
        np.testing.assert_array_equal(got[k], want[k])


def _native_or_skip(kernel):
    if kernel.apply.__globals__["_native_functions"]() is None:
        pytest.skip(f"the C kernel is not available here ({kernel.native_status()})")


@pytest.mark.parametrize("x_shape, positions_shape", LAYOUTS + [pytest.param((3, 40, 16), (3, 40), id="far-apart-ids")])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("direction", ["apply", "backward"])
@pytest.mark.parametrize("in_place", [False, True], ids=["out", "in-place"])
def test_the_c_kernel_gives_the_numpy_path_to_the_bit(x_shape, positions_shape, dtype, direction, in_place):
    """Same products, same sums (no fused multiply-add in either): equal bits, whatever the thread split."""
    native = _private_kernel(NATIVE_ELEMENTS=1, PARALLEL_ELEMENTS=1)
    _native_or_skip(native)

    def no_numpy_blocks(*args):  # the C kernel must serve these calls
        raise AssertionError("the NumPy block path ran where the C kernel should")

    native.apply.__globals__["_rotate_half_blocks"] = no_numpy_blocks
    numpy_only = _private_kernel(NATIVE=False)
    rng = np.random.default_rng(17)
    x = rng.standard_normal(x_shape).astype(dtype)
    high = 10**12 if x_shape == (3, 40, 16) else 500  # far apart: each id tabulated on its own
    positions = rng.integers(0, high, positions_shape)
    want = getattr(numpy_only, direction)(x, positions, threads=1)
    for threads in (1, 3):
        y = x.copy()
        rotate = getattr(native, direction)
        got = rotate(y, positions, out=y, threads=threads) if in_place else rotate(x, positions, threads=threads)
        np.testing.assert_array_equal(got, want)


def test_without_the_c_kernel_large_arrays_stay_in_numpy(monkeypatch, tmp_path):
    kernel = _private_kernel(NATIVE_ELEMENTS=1)
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    monkeypatch.setenv("SYMPROOF_CACHE", str(tmp_path / "cache"))  # nothing cached there either
    assert kernel.native_status().startswith("pure numpy: ")
    x = np.random.default_rng(18).standard_normal((3, 5, 16))
    want = ROPE_REFERENCES["rotate_half"](x, np.arange(5), reference_frequencies(12, 10000.0, 16), rotary_dim=12,
                                          pairing="half")
    np.testing.assert_allclose(kernel.apply(x, np.arange(5)), want, rtol=0, atol=1e-12)
