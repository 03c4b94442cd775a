#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "framework/swarm.hpp"

using namespace std::chrono_literals;

namespace {

struct counter : swarm::actor {
  int add(int k) { return value += k; }
  int get() const { return value; }
  void crash() { throw swarm::actor_failure("crash requested"); }
  void on_restart(const swarm::error& cause) override { cause_ = cause.message; }
  std::string cause() const { return cause_; }

  int value = 0;
  std::string cause_;
};

struct tree_fixture {
  swarm::application app;
  swarm::actor_class<counter> counter_t = app.actor_type<counter>("counter");
  swarm::runtime rt{app, config()};

  static swarm::runtime_config config() {
    swarm::runtime_config cfg;
    cfg.cpus = 2;
    return cfg;
  }

  swarm::actor_handle<counter> child(const swarm::actor_group& g, const std::string& id) {
    return g.child(counter_t, id).value();
  }
};

// Reads a counter; a call made while it restarts waits for the restart.
int value_of(const swarm::actor_handle<counter>& h) {
  auto r = h.call(&counter::get).get(5s);
  INFO((r ? std::string{} : r.err().to_string()));
  REQUIRE(r);
  return *r;
}

bool saw(const swarm::actor_group& g, const std::string& event) {
  for (int i = 0; i < 500; ++i) {
    auto ev = g.events();
    if (std::find(ev.begin(), ev.end(), event) != ev.end()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return false;
}

void bump_all(const std::vector<swarm::actor_handle<counter>>& hs) {
  for (auto& h : hs)
    REQUIRE(h.call(&counter::add, 5).get(5s).value() == 5);
}

} // namespace

TEST_CASE("one_for_one restarts only the crashed actor, which learns why") {
  tree_fixture f;
  auto g = f.rt.supervise(swarm::supervisor_spec{swarm::strategy::one_for_one}
                              .child("a", f.counter_t)
                              .child("b", f.counter_t));
  auto a = f.child(g, "a"), b = f.child(g, "b");
  bump_all({a, b});
  b.call(&counter::crash);
  REQUIRE(saw(g, "restart b"));
  CHECK(value_of(b) == 0);
  CHECK(value_of(a) == 5);
  CHECK(b.call(&counter::cause).get(5s).value().find("crash requested") !=
        std::string::npos);
}

TEST_CASE("one_for_all restarts every actor of the tree when one crashes") {
  tree_fixture f;
  auto g = f.rt.supervise(swarm::supervisor_spec{swarm::strategy::one_for_all}
                              .child("a", f.counter_t)
                              .child("b", f.counter_t)
                              .child("c", f.counter_t));
  auto a = f.child(g, "a"), b = f.child(g, "b"), c = f.child(g, "c");
  bump_all({a, b, c});
  b.call(&counter::crash);
  REQUIRE(saw(g, "restart c"));
  CHECK(value_of(a) == 0);
  CHECK(value_of(b) == 0);
  CHECK(value_of(c) == 0);
}

TEST_CASE("rest_for_one restarts the crashed actor and those started after it") {
  tree_fixture f;
  auto g = f.rt.supervise(swarm::supervisor_spec{swarm::strategy::rest_for_one}
                              .child("a", f.counter_t)
                              .child("b", f.counter_t)
                              .child("c", f.counter_t));
  auto a = f.child(g, "a"), b = f.child(g, "b"), c = f.child(g, "c");
  bump_all({a, b, c});
  b.call(&counter::crash);
  REQUIRE(saw(g, "restart c"));
  CHECK(value_of(a) == 5);
  CHECK(value_of(b) == 0);
  CHECK(value_of(c) == 0);
}

TEST_CASE("a tree past its restart intensity stops its actors and says so") {
  tree_fixture f;
  auto g =
      f.rt.supervise(swarm::supervisor_spec{swarm::strategy::one_for_one, {1, 10s}}.child(
          "a", f.counter_t));
  auto a = f.child(g, "a");
  a.call(&counter::crash);
  REQUIRE(saw(g, "restart a"));
  REQUIRE(value_of(a) == 0);
  a.call(&counter::crash);
  REQUIRE(saw(g, "escalate"));
  CHECK_FALSE(g.alive());
  auto r = a.call(&counter::get).get(5s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == swarm::errc::actor_died);
}

TEST_CASE("calls made while a supervised actor restarts wait for it and run in order") {
  tree_fixture f;
  auto g = f.rt.supervise(swarm::supervisor_spec{swarm::strategy::one_for_all}
                              .child("a", f.counter_t)
                              .child("b", f.counter_t));
  auto a = f.child(g, "a"), b = f.child(g, "b");
  bump_all({a, b});
  // Sent right behind the crash: they reach the ending instance or wait for its
  // successor, and none fails with actor_died.
  b.call(&counter::crash);
  auto b1 = b.call(&counter::add, 1), b2 = b.call(&counter::add, 2);
  auto a1 = a.call(&counter::add, 10);
  auto b3 = b.call(&counter::get);
  for (auto* r : {&b1, &b2, &a1, &b3}) {
    auto v = r->get(5s);
    INFO((v ? std::string{} : v.err().to_string()));
    CHECK(v);
  }
  REQUIRE(saw(g, "restart b"));
  CHECK(b1.get(0s).value() == 1);
  CHECK(b2.get(0s).value() == 3);
  CHECK(b3.get(0s).value() == 3);
}

TEST_CASE("calls waiting for a supervised restart fail when the supervisor gives up") {
  tree_fixture f;
  auto g =
      f.rt.supervise(swarm::supervisor_spec{swarm::strategy::one_for_one, {0, 10s}}.child(
          "a", f.counter_t));
  auto a = f.child(g, "a");
  a.call(&counter::crash);
  auto waiting = a.call(&counter::get);
  auto r = waiting.get(5s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == swarm::errc::actor_died);
  CHECK(r.err().message.find("intensity_exceeded") != std::string::npos);
  REQUIRE(saw(g, "escalate"));
  auto later = a.call(&counter::get).get(5s);
  REQUIRE_FALSE(later);
  CHECK(later.err().code == swarm::errc::actor_died);
}

TEST_CASE("a nested supervisor that gives up is restarted by its parent") {
  tree_fixture f;
  swarm::supervisor_spec inner{swarm::strategy::one_for_all, {0, 10s}};
  inner.child("x", f.counter_t).child("y", f.counter_t);
  auto g = f.rt.supervise(swarm::supervisor_spec{swarm::strategy::one_for_one}
                              .child("solo", f.counter_t)
                              .child("inner", inner));
  auto solo = f.child(g, "solo"), x = f.child(g, "x"), y = f.child(g, "y");
  bump_all({solo, x, y});
  x.call(&counter::crash);
  REQUIRE(saw(g, "restart inner"));
  CHECK(value_of(x) == 0);
  CHECK(value_of(y) == 0);
  CHECK(value_of(solo) == 5);
  CHECK(g.alive());
}

TEST_CASE("a tree with a repeated child id or an unregistered type is rejected") {
  tree_fixture f;
  try {
    f.rt.supervise(
        swarm::supervisor_spec{}.child("a", f.counter_t).child("a", f.counter_t));
    FAIL("supervise should have thrown");
  } catch (const swarm::failure& e) {
    CHECK(std::string{e.what()}.find("'a' appears twice") != std::string::npos);
  }
  swarm::application other;
  auto stranger = other.actor_type<counter>("stranger");
  CHECK_THROWS_WITH_AS(f.rt.supervise(swarm::supervisor_spec{}.child("s", stranger)),
                       doctest::Contains("stranger"), swarm::failure);
  auto g = f.rt.supervise(swarm::supervisor_spec{}.child("a", f.counter_t));
  CHECK_FALSE(g.child(f.counter_t, "nope"));
}
