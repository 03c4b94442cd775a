// Streams from tasks run on other node processes: items as written, large ones pulled,
// back-pressure, a failure ending the stream, and a writer's node killed mid-stream.

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/cluster/three_nodes.hpp"

using namespace std::chrono_literals;
using swarm::cluster_test::eventually;
using swarm::cluster_test::three_nodes;

namespace {

using item = std::vector<int64_t>;

// On a worker (only they have a `slot`), the scheduler's choice of which.
swarm::task_options on_a_worker(uint32_t window = 16) {
  swarm::task_options o;
  o.resources.set("slot", 1);
  o.stream_window = window;
  return o;
}

} // namespace

TEST_CASE("a task on another node streams its items, small and large, in order, and the "
          "reader's node owns them") {
  three_nodes c;
  auto blobs = c.app.find_stream<std::vector<uint8_t>(int, int)>("blobs").value();
  // 64 KiB travels inline, 256 KiB is pulled from the writer's node.
  for (int bytes : {1000, 256 << 10}) {
    auto s = c.rt->submit(c.on("worker-1"), blobs, 12, bytes);
    for (int i = 0; i < 12; ++i) {
      auto next = s.next(20s);
      REQUIRE_MESSAGE(next, next.err().message);
      REQUIRE(next->has_value());
      auto& ref = **next;
      CHECK((ref.id().owner >> 40) == 1); // the head is node 0: index 0 + 1
      auto v = ref.get(20s);
      REQUIRE_MESSAGE(v, v.err().message);
      CHECK(v->size() == static_cast<size_t>(bytes));
      CHECK(v->front() == static_cast<uint8_t>(i));
      CHECK(v->back() == static_cast<uint8_t>(i));
    }
    CHECK_FALSE(s.next(20s).value().has_value());
    CHECK(s.done().get(20s).value() == 12);
  }
}

TEST_CASE("a writer on another node waits for a reader that falls behind") {
  three_nodes c;
  auto count_up = c.app.find_stream<item(int, int)>("count_up").value();
  auto s = c.rt->submit(on_a_worker(4), count_up, 200, 0);
  // Four items at most are written before the first is taken: the writer has not ended.
  REQUIRE(s.next(20s).value().has_value());
  std::this_thread::sleep_for(300ms);
  CHECK_FALSE(s.done().ready());
  auto rest = s.collect(30s);
  REQUIRE_MESSAGE(rest, rest.err().message);
  REQUIRE(rest->size() == 199);
  for (size_t i = 0; i < rest->size(); ++i)
    CHECK((*rest)[i][0] == static_cast<int64_t>(i + 1));
  CHECK(s.done().get(20s).value() == 200);
}

TEST_CASE("a failure on another node ends the stream with its error after the items "
          "written before it") {
  three_nodes c;
  auto fails = c.app.find_stream<int(int, std::string)>("count_then_fail").value();
  auto s = c.rt->submit(c.on("worker-2"), fails, 5, "the feed broke");
  for (int i = 0; i < 5; ++i) {
    auto next = s.next(20s);
    REQUIRE_MESSAGE(next, next.err().message);
    REQUIRE(next->has_value());
    CHECK((*next)->get(20s).value() == i);
  }
  auto end = s.next(20s);
  REQUIRE_FALSE(end);
  CHECK(end.err().message.find("the feed broke") != std::string::npos);
  CHECK(end.err().message.find("worker-2") != std::string::npos);
}

TEST_CASE("a stream whose writer's node is killed mid-stream goes on from a run on "
          "another node, each item once and in order") {
  three_nodes c;
  auto count_up = c.app.find_stream<item(int, int)>("count_up").value();
  auto s = c.rt->submit(on_a_worker(4), count_up, 60, 20);
  std::vector<item> got;
  for (int i = 0; i < 10; ++i) {
    auto next = s.next(20s);
    REQUIRE_MESSAGE(next, next.err().message);
    REQUIRE(next->has_value());
    got.push_back((*next)->get(20s).value());
  }
  auto first = got.back()[1];
  (first == c.w1->pid() ? c.w1 : c.w2)->kill_now();
  auto rest = s.collect(60s);
  REQUIRE_MESSAGE(rest, rest.err().message);
  got.insert(got.end(), rest->begin(), rest->end());
  REQUIRE(got.size() == 60);
  for (size_t i = 0; i < got.size(); ++i)
    CHECK(got[i][0] == static_cast<int64_t>(i));
  CHECK(got.back()[1] != first); // the end came from the other worker
}

TEST_CASE("an actor on another node streams from a method, and a reader that goes away "
          "stops it") {
  three_nodes c;
  auto cls = c.app.find_actor_type<swarm::cluster_test::ticker>("ticker").value();
  swarm::actor_options o;
  o.node = "worker-2";
  auto t = c.rt->spawn(o, cls);
  auto all = t.call_stream(4, &swarm::cluster_test::ticker::ticks, 100).collect(30s);
  REQUIRE_MESSAGE(all, all.err().message);
  REQUIRE(all->size() == 100);
  CHECK(all->front() == 0);
  CHECK(all->back() == 99);
  {
    auto endless = t.call_stream(4, &swarm::cluster_test::ticker::ticks, 1 << 30);
    CHECK(endless.next(20s).value()->get(20s).value() == 100);
  } // dropped: the method stops at its next write, and the actor takes calls again
  auto now = t.call(&swarm::cluster_test::ticker::where_now).get(30s);
  REQUIRE_MESSAGE(now, now.err().message);
  CHECK(*now >= 101);
  CHECK(*now < 100 + 64);
}
