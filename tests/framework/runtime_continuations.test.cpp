// Continuations and combinators on futures (then, when_any, when_all), and cancelling
// running tasks.

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "framework/swarm.hpp"

using namespace std::chrono_literals;

namespace {

swarm::runtime_config one_cpu() {
  swarm::runtime_config cfg;
  cfg.cpus = 1;
  return cfg;
}

// `x` after `ms` of sleep.
int late(int x, int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  return x;
}

} // namespace

TEST_CASE("then runs a continuation on a future's value once it is ready, and chains, "
          "with no thread waiting for it") {
  swarm::application app;
  auto slow = app.function("late", late);
  swarm::runtime rt{app, one_cpu()};
  auto base = rt.submit(slow, 20, 100);
  // Fifty continuations wait on one CPU: none holds it while it waits.
  std::vector<swarm::object_ref<int>> plus;
  for (int i = 0; i < 50; ++i)
    plus.push_back(rt.then(base, [i](const int& x) { return x + i; }));
  auto text =
      rt.then(plus.back(), [](const int& x) { return "got " + std::to_string(x); });
  CHECK(text.get(10s).value() == "got 69");
  for (int i = 0; i < 50; ++i)
    CHECK(plus[static_cast<size_t>(i)].get(10s).value() == 20 + i);
}

TEST_CASE("a continuation of a failed future fails naming it, and one that throws fails "
          "its own future") {
  swarm::application app;
  auto boom = app.function("boom", [](int) -> int { throw std::runtime_error("boom"); });
  auto slow = app.function("late", late);
  swarm::runtime rt{app, one_cpu()};
  auto failed = rt.submit(boom, 1);
  auto after = rt.then(failed, [](const int& x) { return x; });
  auto e = after.get(10s);
  REQUIRE_FALSE(e);
  CHECK(e.err().code == swarm::errc::dependency_failed);
  CHECK(e.err().message.find(failed.id().to_string()) != std::string::npos);

  auto thrown = rt.then(rt.submit(slow, 1, 0), [](const int&) -> int {
    throw std::runtime_error("in the continuation");
  });
  auto t = thrown.get(10s);
  REQUIRE_FALSE(t);
  CHECK(t.err().code == swarm::errc::application_error);
  CHECK(t.err().message.find("in the continuation") != std::string::npos);
}

TEST_CASE("when_any holds the index of the first future done, when_all every value") {
  swarm::application app;
  auto slow = app.function("late", late);
  swarm::runtime_config cfg;
  cfg.cpus = 3;
  swarm::runtime rt{app, cfg};
  std::vector<swarm::object_ref<int>> refs{
      rt.submit(slow, 1, 400), rt.submit(slow, 2, 10), rt.submit(slow, 3, 400)};
  auto first = rt.when_any(refs);
  CHECK(first.get(10s).value() == 1);
  CHECK(rt.when_all(refs).get(10s).value() == std::vector<int>{1, 2, 3});
  // A failure counts as done.
  std::vector<swarm::object_ref<int>> with_failure{
      rt.submit(slow, 1, 400),
      rt.then(refs[1], [](const int&) -> int { throw std::runtime_error("no"); })};
  CHECK(rt.when_any(with_failure).get(10s).value() == 1);
  auto none = rt.when_any(std::vector<swarm::object_ref<int>>{});
  auto e = none.get(1s);
  REQUIRE_FALSE(e);
  CHECK(e.err().code == swarm::errc::invalid_argument);
}

TEST_CASE("a running task that is cancelled sees it through its context and its future "
          "fails with cancelled, forced, the future fails at once") {
  swarm::application app;
  std::atomic<bool> started{false};
  auto spin = app.function("spin", [&started](swarm::context& ctx, int ms) {
    started = true;
    int rounds = 0;
    for (; rounds < ms && !ctx.cancelled(); ++rounds)
      std::this_thread::sleep_for(1ms);
    return rounds;
  });
  auto slow = app.function("late", late);
  swarm::runtime_config cfg;
  cfg.cpus = 2;
  swarm::runtime rt{app, cfg};
  auto r = rt.submit(spin, 10000);
  // Bounded: it starts within 10 s.
  for (int i = 0; i < 1000 && !started; ++i)
    std::this_thread::sleep_for(10ms);
  REQUIRE(started);
  CHECK(rt.cancel(r));
  auto got = r.get(10s);
  REQUIRE_FALSE(got);
  CHECK(got.err().code == swarm::errc::cancelled);
  CHECK(got.err().message.find("while it ran") != std::string::npos);

  auto stubborn = rt.submit(slow, 1, 2000);
  CHECK(rt.cancel(stubborn, true));
  auto forced = stubborn.get(500ms);
  REQUIRE_FALSE(forced);
  CHECK(forced.err().code == swarm::errc::cancelled);
  CHECK_FALSE(rt.cancel(rt.put(1)));
}
