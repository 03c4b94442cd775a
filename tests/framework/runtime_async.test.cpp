// Functions and actor methods that return futures: their result is that future's,
// and nothing waits for it.

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "framework/swarm.hpp"

using namespace std::chrono_literals;

namespace {

std::atomic<bool> gate_open{false};

/// Waits (bounded) until the gate opens; 1 when it did.
int wait_for_gate() {
  for (int i = 0; i < 1000 && !gate_open; ++i)
    std::this_thread::sleep_for(5ms);
  return gate_open ? 1 : 0;
}

struct stage : swarm::actor {
  explicit stage(std::string label = "") : name(std::move(label)) {}
  void link(swarm::actor_handle<stage> n) { next = std::move(n); }
  // Hands the path on and returns at once: the next stage's answer is the call's.
  swarm::object_ref<std::string> pass(std::string path) {
    path += "/" + name;
    if (!next.valid()) return actor_context().put(path);
    return next.call(&stage::pass, path);
  }
  // Starts work that waits for the gate; the actor takes other calls meanwhile.
  swarm::object_ref<int> gated() {
    auto fn = actor_context().app().find_function<int()>("wait_for_gate").value();
    return actor_context().submit(fn);
  }
  int ping() { return ++pings; }
  swarm::object_ref<int> broken() { return {}; }

  std::string name;
  swarm::actor_handle<stage> next;
  int pings = 0;
};

struct fixture {
  swarm::application app;
  swarm::actor_class<stage> stage_t =
      app.actor_type<stage>("stage").constructor<std::string>();
  swarm::task_fn<int()> gate = app.function("wait_for_gate", wait_for_gate);
  swarm::task_fn<int(int)> inc = app.function("inc", [](int x) { return x + 1; });
  swarm::task_fn<int(int)> fail =
      app.function("fail", [](int) -> int { throw std::runtime_error("no luck"); });
  swarm::task_fn<swarm::object_ref<int>(int)> twice =
      app.function("twice", [](swarm::context& ctx, int x) {
        auto one = ctx.app().find_function<int(int)>("inc").value();
        return ctx.submit(one, ctx.submit(one, x));
      });
};

} // namespace

TEST_CASE("a pipeline of async stages needs no thread of its own per stage") {
  fixture f;
  swarm::runtime_config cfg;
  cfg.scheduler_threads = 2;
  swarm::runtime rt{f.app, cfg};
  std::vector<swarm::actor_handle<stage>> stages;
  for (auto* n : {"a", "b", "c", "d", "e"})
    stages.push_back(rt.spawn(f.stage_t, std::string{n}));
  for (size_t i = 0; i + 1 < stages.size(); ++i)
    stages[i].call(&stage::link, stages[i + 1]);
  CHECK(stages[0].call(&stage::pass, std::string{"in"}).get(5s).value() ==
        "in/a/b/c/d/e");
}

TEST_CASE("an actor whose method returned a future takes other calls while it waits") {
  fixture f;
  swarm::runtime rt{f.app};
  gate_open = false;
  auto s = rt.spawn(f.stage_t, std::string{"s"});
  auto waiting = s.call(&stage::gated);
  CHECK(s.call(&stage::ping).get(5s).value() == 1);
  CHECK(s.call(&stage::ping).get(5s).value() == 2);
  CHECK_FALSE(waiting.ready());
  gate_open = true;
  CHECK(waiting.get(10s).value() == 1);
}

TEST_CASE("max_concurrency bounds the calls of an actor waiting on futures: later calls "
          "wait their turn, in order") {
  fixture f;
  swarm::runtime rt{f.app};
  gate_open = false;
  swarm::actor_options two;
  two.max_concurrency = 2;
  auto s = rt.spawn(two, f.stage_t, std::string{"s"});
  auto first = s.call(&stage::gated);
  auto second = s.call(&stage::gated);
  auto third = s.call(&stage::gated);
  auto ping = s.call(&stage::ping);
  // Two wait on the gate; the third call, and the ping after it, have not run.
  CHECK(ping.get(300ms).err().code == swarm::errc::timeout);
  gate_open = true;
  CHECK(ping.get(10s).value() == 1);
  for (auto* r : {&first, &second, &third})
    CHECK(r->get(10s).value() == 1);
}

TEST_CASE("a task or continuation that returns a future gives that future's value, and "
          "its failure names it") {
  fixture f;
  swarm::runtime rt{f.app};
  CHECK(rt.submit(f.twice, 40).get(5s).value() == 42);
  auto chained =
      rt.then(rt.submit(f.inc, 1), [&rt, &f](int x) { return rt.submit(f.inc, x); });
  CHECK(chained.get(5s).value() == 3);
  auto failed =
      rt.then(rt.submit(f.inc, 1), [&rt, &f](int x) { return rt.submit(f.fail, x); });
  auto e = failed.get(5s);
  REQUIRE_FALSE(e);
  CHECK(e.err().message.find("returned failed") != std::string::npos);
  CHECK(e.err().message.find("no luck") != std::string::npos);
  auto s = rt.spawn(f.stage_t, std::string{"s"});
  auto empty = s.call(&stage::broken).get(5s);
  REQUIRE_FALSE(empty);
  CHECK(empty.err().message.find("empty future") != std::string::npos);
}
