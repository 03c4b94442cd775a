"""Values between Python and the registered C++ types, on an embedded node."""

import asyncio

import numpy as np
import pytest

import swarm

pytestmark = pytest.mark.usefixtures("embedded")


def call(name, *args, **options):
    return swarm.get(swarm.function(name).remote(*args, **options), timeout=30)


def data_pointer(a):
    return a.__array_interface__["data"][0]


def test_numbers_strings_and_bools_convert_to_their_cpp_types_and_back():
    assert call("add", 2, 40) == 42
    assert call("add_small", 7, -2) == 5
    assert call("byte_of", 255) == 255
    assert call("half", 3) == 1.5
    assert call("greet", "swarm") == "hello, swarm"
    assert call("greet", b"bytes") == "hello, bytes"
    assert call("negate", True) is False
    assert call("add", np.int64(1), np.int32(2)) == 3


def test_containers_convert_lists_dicts_tuples_and_optionals():
    assert call("word_lengths", ["a", "abc"]) == {"a": 1, "abc": 3}
    assert call("describe", (21, "hi"), None) == (42, "hi!", None)
    assert call("describe", [1, "x"], 2.5) == (2, "x!", 2.5)
    rows = call("nested", [[1, 2], np.array([], dtype=np.int32)])
    assert [r.tolist() for r in rows] == [[1, 2, 2], [0]]
    assert call("nothing") is None


def test_numpy_arrays_and_lists_of_numbers_become_vectors_and_come_back_as_arrays():
    xs = np.arange(100_000, dtype=np.float32)
    out = call("scale", xs, 2.0)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    np.testing.assert_array_equal(out, xs * 2)
    np.testing.assert_array_equal(call("scale", [1, 2, 3], 0.5), [0.5, 1, 1.5])
    assert call("sum_doubles", np.ones(10)) == 10.0
    assert len(call("scale", np.zeros(0, dtype=np.float32), 1.0)) == 0


def test_a_type_mismatch_raises_type_error_naming_the_function_parameter_and_types():
    with pytest.raises(TypeError, match=r"function 'add' argument 1 \(long\): expected an int, got str"):
        swarm.function("add").remote("one", 2)
    with pytest.raises(TypeError, match=r"expected float32 data.*float64|format 'd'"):
        swarm.function("scale").remote(np.ones(4), 1.0)
    with pytest.raises(TypeError, match=r"takes 2 argument\(s\), got 1"):
        swarm.function("add").remote(1)
    with pytest.raises(TypeError, match=r"element 1"):
        swarm.function("sum_doubles").remote([1.0, "two"])
    with pytest.raises(TypeError, match=r"1-D"):
        swarm.function("scale").remote(np.ones((2, 2), dtype=np.float32), 1.0)


def test_a_number_out_of_its_cpp_range_raises_overflow_error():
    with pytest.raises(OverflowError, match="argument 1"):
        swarm.function("add_small").remote(2**31, 1)
    with pytest.raises(OverflowError, match="argument 1"):
        swarm.function("byte_of").remote(-1)


def test_put_and_get_keep_values_and_a_large_array_is_read_without_a_copy():
    for value in [7, 2.5, "text", True, ["a", "b"], {"k": 1}, {"k": "v"}]:
        assert swarm.get(swarm.put(value)) == value
    # A list of numbers is stored as a vector, which comes back as an array.
    assert swarm.get(swarm.put([1, 2, 3])).tolist() == [1, 2, 3]
    assert swarm.get(swarm.put(b"\xff\x00")) == b"\xff\x00"
    big = np.random.default_rng(1).random(1 << 20).astype(np.float32)  # 4 MiB
    ref = swarm.put(big)
    assert ref.type_name == "std::vector<float, std::allocator<float> >"
    first, second = swarm.get(ref), swarm.get(ref)
    np.testing.assert_array_equal(first, big)
    # Both view the stored vector's memory: no copy on get, and it cannot be written.
    assert data_pointer(first) == data_pointer(second)
    assert not first.flags.writeable
    del ref
    np.testing.assert_array_equal(first, big)  # the view keeps the value alive


def test_an_array_made_by_swarm_empty_makes_a_round_trip_without_any_copy():
    a = swarm.empty(1 << 20, np.float32)
    assert a.flags.writeable and a.dtype == np.float32 and not a.any()
    a[:] = np.arange(1 << 20, dtype=np.float32)
    ref = swarm.put(a)
    assert not a.flags.writeable  # stored as it is: it may not change any more
    back = swarm.get(ref)
    assert data_pointer(back) == data_pointer(a)  # the same memory: no copy either way
    np.testing.assert_array_equal(back, np.arange(1 << 20, dtype=np.float32))
    # Passed to a function, it is taken as it is too; a slice of it is copied.
    b = swarm.empty(100_000, "float32")
    b[:] = 2
    assert call("sum_doubles", swarm.empty(10, np.float64)) == 0.0
    np.testing.assert_array_equal(call("scale", b, 2.0), np.full(100_000, 4, np.float32))
    np.testing.assert_array_equal(call("scale", b[:10], 1.0), np.full(10, 2, np.float32))
    with pytest.raises(TypeError, match="arrays of numbers"):
        swarm.empty(3, "U4")


def test_device_buffers_take_any_buffer_and_come_back_as_byte_arrays():
    assert call("buffer_size", np.arange(10, dtype=np.float32)) == 40
    assert call("buffer_size", b"abc") == 3
    out = call("make_buffer", 100_000)
    assert out.dtype == np.uint8 and len(out) == 100_000 and (out == 7).all()
    with pytest.raises(TypeError, match="expected a buffer"):
        swarm.function("buffer_size").remote("text")


def test_refs_pass_as_arguments_and_a_ref_of_the_wrong_type_is_refused():
    xs = swarm.put(np.arange(8, dtype=np.float32))
    np.testing.assert_array_equal(call("scale", xs, 3.0), np.arange(8) * 3)
    chained = swarm.function("add").remote(swarm.function("add").remote(1, 2), 3)
    assert swarm.get(chained) == 6
    # A C++ function returning a ref (of a task it started) gives that task's value.
    assert call("forward", 21) == 42
    with pytest.raises(TypeError, match="future of"):
        swarm.function("add").remote(swarm.put("text"), 1)


def test_put_refuses_a_value_it_has_no_type_for_and_a_user_type_cannot_be_read():
    with pytest.raises(TypeError, match="put cannot store a object"):
        swarm.put(object())
    ref = swarm.function("origin").remote()
    with pytest.raises(TypeError, match="cannot be read in Python"):
        swarm.get(ref)


def test_a_task_that_throws_raises_task_error_with_its_message():
    with pytest.raises(swarm.TaskError, match="boom") as e:
        call("fail", "boom")
    assert e.value.code == "application_error"


def test_get_with_a_timeout_raises_get_timeout_error_and_wait_splits_ready_refs():
    slow = swarm.function("sleep_ms").remote(3000)
    with pytest.raises(swarm.GetTimeoutError) as e:
        swarm.get(slow, timeout=0.05)
    assert isinstance(e.value, TimeoutError)
    fast = swarm.function("add").remote(1, 1)
    ready, pending = swarm.wait([slow, fast], num_returns=1, timeout=10)
    assert ready == [fast] and pending == [slow]
    assert swarm.cancel(slow, force=True) in (True, False)


def test_a_task_cancelled_before_it_runs_raises_task_cancelled_error():
    blockers = [swarm.function("sleep_ms").remote(500) for _ in range(8)]
    queued = swarm.function("sleep_ms").remote(1)
    if swarm.cancel(queued):
        with pytest.raises(swarm.TaskCancelledError):
            swarm.get(queued, timeout=30)
    swarm.get(blockers, timeout=30)


def test_actors_are_created_by_type_name_and_their_methods_called():
    counter = swarm.actor_type("counter").remote(5)
    assert swarm.get(counter.add.remote(3)) == 8
    assert swarm.get(counter.value.remote()) == 8
    zero = swarm.actor_type("counter").remote()
    assert swarm.get(zero.value.remote()) == 0
    moving = swarm.actor_type("counter").options(move_if_node_lost=True).remote(1)
    assert swarm.get(moving.add.remote(1)) == 2
    with pytest.raises(TypeError, match="option move_if_node_lost has the wrong type"):
        swarm.actor_type("counter").remote(1, move_if_node_lost="yes")
    with pytest.raises(AttributeError, match="has no registered method 'nope'"):
        counter.nope
    with pytest.raises(TypeError, match="no constructor taking 2"):
        swarm.actor_type("counter").remote(1, 2)
    swarm.kill(counter)
    with pytest.raises(swarm.ActorDiedError):
        swarm.get(counter.value.remote(), timeout=10)


def test_unknown_names_and_options_are_refused_naming_what_there_is():
    with pytest.raises(swarm.SwarmError, match="no function 'missing'"):
        swarm.function("missing")
    with pytest.raises(TypeError, match="unknown option 'cpus'"):
        swarm.function("add").remote(1, 2, cpus=1)
    assert "add" in swarm.functions() and "counter" in swarm.actor_types()
    assert swarm.function("add").signature == "long(long, long)"


def test_a_streaming_function_gives_its_items_as_refs_in_order_and_then_its_error():
    stream = swarm.function("squares").remote(6, 100)
    assert isinstance(stream, swarm.ObjectRefStream)
    assert [swarm.get(r) for r in stream] == [0, 1, 4, 9, 16, 25]
    assert swarm.get(stream.done()) == 6
    failing = swarm.function("squares").options(stream_window=2).remote(10, 3)
    assert swarm.get(failing.next(timeout=30)) == 0
    assert swarm.get(failing.next(timeout=30)) == 1
    assert swarm.get(failing.next(timeout=30)) == 4
    with pytest.raises(swarm.TaskError, match="squares failed after 3"):
        failing.next(timeout=30)


def test_a_streaming_actor_method_streams_and_a_dropped_stream_cancels_its_task():
    counter = swarm.actor_type("counter").remote(0)
    assert [swarm.get(r) for r in counter.count_up.remote(3)] == [1, 2, 3]
    long_stream = swarm.function("squares").options(stream_window=1).remote(1_000_000, 2_000_000)
    assert swarm.get(long_stream.next(timeout=30)) == 0
    done = long_stream.done()
    long_stream.cancel()
    with pytest.raises(swarm.TaskCancelledError):
        swarm.get(done, timeout=30)


def test_refs_are_awaitable_have_futures_and_compare_by_object():
    async def both():
        return await swarm.function("add").remote(1, 2), await swarm.put("x")
    assert asyncio.run(both()) == (3, "x")
    assert swarm.function("half").remote(5).future().result(timeout=30) == 2.5
    failing = swarm.function("fail").remote("no").future()
    with pytest.raises(swarm.TaskError, match="no"):
        failing.result(timeout=30)
    ref = swarm.put(1)
    assert ref.get(timeout=30) == 1 and ref.ready()
    assert ref == ref and ref != swarm.put(1) and len({ref, ref}) == 1
