// The reading end of a stream, fed from another thread as a node feeds it the items a
// writer on another node sent.

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "framework/detail/stream_channel.hpp"
#include "framework/detail/type_descriptor.hpp"

using namespace std::chrono_literals;
namespace detail = swarm::detail;

namespace {

detail::slot_ptr item(uint64_t seq, int value) {
  auto s = std::make_shared<detail::object_slot>(detail::stream_item_id(7, seq));
  s->set_value(detail::boxed_value::make(value));
  return s;
}

auto soon() {
  return detail::object_slot::clock::now() + 10s;
}

} // namespace

TEST_CASE("a stream channel hands the items delivered from another thread to its reader "
          "in order, and tells the writer's side how far the reader got") {
  constexpr uint64_t total = 5000, window = 8;
  detail::stream_channel ch{nullptr, 7, window, &detail::type_of<int>()};
  std::atomic<uint64_t> taken{0};
  ch.on_taken([&](uint64_t n) {
    if (n != detail::reader_gone) taken = n;
  });
  auto result = std::make_shared<detail::object_slot>(swarm::object_id{1, 1});
  std::atomic<bool> overran{false};
  std::thread writer{[&] {
    for (uint64_t seq = 0; seq < total; ++seq) {
      auto until = std::chrono::steady_clock::now() + 10s; // bounded
      while (seq >= taken.load() + window && std::chrono::steady_clock::now() < until)
        std::this_thread::yield();
      overran = overran || seq >= taken.load() + window;
      CHECK(ch.deliver(seq, item(seq, static_cast<int>(seq))));
    }
    result->set_value(detail::boxed_value::make(total));
    ch.notify();
  }};
  uint64_t got = 0;
  for (;;) {
    auto next = ch.next(result, soon());
    REQUIRE_MESSAGE(next, next.err().message);
    if (!*next) break;
    CHECK(*static_cast<const int*>((**next)->read().value().ptr.get()) ==
          static_cast<int>(got));
    ++got;
  }
  writer.join();
  CHECK(got == total);
  CHECK_FALSE(overran.load());
  CHECK(ch.taken() == total);
}

TEST_CASE("a stream channel refuses an item it has, and a closed one wakes its reader "
          "and tells the writer's side the reader is gone") {
  detail::stream_channel ch{nullptr, 7, 4, &detail::type_of<int>()};
  std::atomic<uint64_t> told{0};
  ch.on_taken([&](uint64_t n) { told = n; });
  CHECK(ch.expects(0));
  CHECK(ch.deliver(0, item(0, 0)));
  CHECK_FALSE(ch.expects(0));
  CHECK_FALSE(ch.deliver(0, item(0, 0))); // a run again sends it again
  CHECK(ch.deliver(2, item(2, 2)));       // out of order: kept until 1 comes
  auto result = std::make_shared<detail::object_slot>(swarm::object_id{1, 1});
  CHECK(ch.next(result, soon()).value().has_value());
  CHECK(ch.next(result, detail::object_slot::clock::now() + 20ms).err().code ==
        swarm::errc::timeout);
  std::thread reader{[&] {
    auto next = ch.next(result, soon());
    REQUIRE_FALSE(next);
    CHECK(next.err().code == swarm::errc::cancelled);
  }};
  ch.close();
  reader.join();
  CHECK(told.load() == detail::reader_gone);
  CHECK_FALSE(ch.deliver(1, item(1, 1)));
}
