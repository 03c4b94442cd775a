// The writer's end of a stream read on another node: it sends at most a window ahead of
// what the reader took, and stops once the reader went away.

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "actors/ownership/stream_sender.hpp"
#include "framework/detail/wire_convert.hpp"

using namespace swarm::actors;
using namespace std::chrono_literals;
namespace detail = swarm::detail;
namespace wire_msg = swarm::wire_msg;

namespace {

// What the sender sent, for a reader thread to take.
struct fake_link {
  std::mutex mtx;
  std::condition_variable cv;
  std::deque<wire_msg::stream_item> sent;
  bool ended = false;

  stream_route route() {
    stream_route r;
    r.send = [this](wire_msg::message m) {
      std::lock_guard<std::mutex> guard{mtx};
      sent.push_back(std::get<wire_msg::stream_item>(std::move(m)));
      cv.notify_all();
    };
    r.connected = [] { return true; };
    r.travel = [](const swarm::object_id& id, const detail::boxed_value&) {
      return wire_msg::task_result{detail::to_wire(id), wire_msg::value{"int", {}}};
    };
    r.ended = [this] { ended = true; };
    return r;
  }
};

} // namespace

TEST_CASE(
    "concurrent: a stream sender writes at most its window ahead of what the reader "
    "took, and a write after the reader went away is cancelled") {
  fake_link link;
  std::atomic<bool> cancelled{false};
  constexpr uint64_t total = 2000, window = 4;
  {
    auto sender = std::make_shared<stream_sender>(link.route(), swarm::object_id{1, 2},
                                                  uint64_t{9} << 40, window);
    std::atomic<uint64_t> taken{0};
    std::thread reader{[&] {
      for (uint64_t n = 0; n < total; ++n) {
        std::unique_lock<std::mutex> guard{link.mtx};
        REQUIRE(link.cv.wait_for(guard, 10s, [&] { return !link.sent.empty(); }));
        auto m = std::move(link.sent.front());
        link.sent.pop_front();
        guard.unlock();
        CHECK(m.seq == n);
        CHECK(m.seq < taken.load() + window); // never beyond the window
        CHECK(swarm::object_id{m.item.result.owner, m.item.result.seq} ==
              detail::stream_item_id(uint64_t{9} << 40, n));
        taken = n + 1;
        sender->taken(n + 1);
      }
    }};
    for (uint64_t seq = 0; seq < total; ++seq)
      REQUIRE(sender->write(seq, detail::boxed_value::make(static_cast<int>(seq)),
                            cancelled));
    reader.join();
    sender->taken(detail::reader_gone);
    auto after = sender->write(total, detail::boxed_value::make(0), cancelled);
    REQUIRE_FALSE(after);
    CHECK(after.err().code == swarm::errc::cancelled);
  }
  CHECK(link.ended); // its registration goes with it
}
