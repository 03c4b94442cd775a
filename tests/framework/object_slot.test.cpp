#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "framework/detail/object_slot.hpp"

using namespace std::chrono_literals;
using swarm::detail::boxed_value;
using swarm::detail::object_slot;

namespace {

object_slot::clock::time_point in(std::chrono::milliseconds d) {
  return object_slot::clock::now() + d;
}

} // namespace

TEST_CASE("a value published on one thread wakes every waiter on others") {
  object_slot slot{{1, 1}};
  std::atomic<int> woke{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < 4; ++i)
    waiters.emplace_back([&] {
      if (slot.wait_until(in(10s)) &&
          *static_cast<const int*>(slot.read()->ptr.get()) == 9)
        ++woke;
    });
  std::thread producer{[&] { slot.set_value(boxed_value::make(9)); }};
  producer.join();
  for (auto& t : waiters)
    t.join();
  CHECK(woke.load() == 4);
}

TEST_CASE("a slot completes once: later values and errors are refused") {
  object_slot slot{{1, 2}};
  CHECK(slot.set_error({swarm::errc::cancelled, "stop"}));
  CHECK_FALSE(slot.set_value(boxed_value::make(1)));
  CHECK_FALSE(slot.set_error({swarm::errc::timeout, "late"}));
  CHECK(slot.read().err().code == swarm::errc::cancelled);
}

TEST_CASE("callbacks registered while the slot completes run exactly once each") {
  for (int round = 0; round < 50; ++round) {
    object_slot slot{{1, static_cast<uint64_t>(round)}};
    std::atomic<int> calls{0};
    std::thread registrar{[&] {
      for (int i = 0; i < 100; ++i)
        slot.when_done([&] { ++calls; });
    }};
    slot.set_value(boxed_value::make(round));
    registrar.join();
    REQUIRE(calls.load() == 100);
  }
}

TEST_CASE("waiting for k of n slots returns when k are done or at the deadline") {
  object_slot a{{2, 1}}, b{{2, 2}}, c{{2, 3}};
  std::vector<object_slot*> all{&a, &b, &c};
  std::thread t{[&] {
    a.set_value(boxed_value::make(1));
    c.set_value(boxed_value::make(3));
  }};
  auto done = swarm::detail::wait_for_slots(all, 2, in(10s));
  t.join();
  CHECK(done == std::vector<bool>{true, false, true});
  auto timed_out = swarm::detail::wait_for_slots(all, 3, in(10ms));
  CHECK(timed_out == std::vector<bool>{true, false, true});
}

TEST_CASE("freeing a slot drops its value and wakes waiters with object_freed") {
  object_slot slot{{3, 1}};
  std::thread t{[&] { slot.free(); }};
  CHECK(slot.wait_until(in(10s)));
  t.join();
  CHECK(slot.read().err().code == swarm::errc::object_freed);
}
