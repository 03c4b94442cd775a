// Pipelines of actor stages on one node: order, replicas, back-pressure, redelivery.

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "framework/swarm.hpp"

using namespace std::chrono_literals;

namespace {

struct tokenizer : swarm::actor {
  std::vector<std::string> split(const std::string& text) {
    std::istringstream in{text};
    std::vector<std::string> words;
    for (std::string w; in >> w;)
      words.push_back(w);
    return words;
  }
};

struct counter : swarm::actor {
  int count(const std::vector<std::string>& words) {
    return static_cast<int>(words.size());
  }
};

struct scaler : swarm::actor {
  int times_ten(int x) { return 10 * x; }
};

// Crashes (restarts) once, on the call numbered `crash_at`; -1 never.
struct flaky : swarm::actor {
  static std::atomic<int>& calls() {
    static std::atomic<int> n{0};
    return n;
  }
  static std::atomic<int>& crash_at() {
    static std::atomic<int> n{-1};
    return n;
  }
  int pass(int x) {
    if (++calls() == crash_at()) throw swarm::actor_failure("crashed on purpose");
    return x;
  }
};

// A slow sink: each item takes 5 ms; its buffer of 256 KiB is dropped.
struct slow_sink : swarm::actor {
  int take(const std::vector<uint8_t>& buffer) {
    std::this_thread::sleep_for(5ms);
    return static_cast<int>(buffer.size());
  }
};

struct bloater : swarm::actor {
  std::vector<uint8_t> grow(int i) {
    return std::vector<uint8_t>(256 << 10, static_cast<uint8_t>(i));
  }
};

// A side sink counting what it saw.
struct audit : swarm::actor {
  static std::atomic<int>& seen() {
    static std::atomic<int> n{0};
    return n;
  }
  void record(int x) { seen() += x; }
};

struct refuser : swarm::actor {
  int refuse(int x) {
    if (x == 3) throw std::runtime_error("3 is refused");
    return x;
  }
};

struct fixture {
  swarm::application app;
  swarm::actor_class<tokenizer> tokenizer_t = app.actor_type<tokenizer>("tokenizer");
  swarm::actor_class<counter> counter_t = app.actor_type<counter>("counter");
  swarm::actor_class<scaler> scaler_t = app.actor_type<scaler>("scaler");
  swarm::actor_class<flaky> flaky_t = app.actor_type<flaky>("flaky");
  swarm::actor_class<slow_sink> slow_t = app.actor_type<slow_sink>("slow_sink");
  swarm::actor_class<bloater> bloater_t = app.actor_type<bloater>("bloater");
  swarm::actor_class<audit> audit_t = app.actor_type<audit>("audit");
  swarm::actor_class<refuser> refuser_t = app.actor_type<refuser>("refuser");
};

} // namespace

TEST_CASE("a typed pipeline of three stages, one of three replicas, gives every item's "
          "output in the order pushed") {
  fixture f;
  swarm::runtime rt{f.app};
  swarm::stage_options three;
  three.replicas = 3;
  auto run = swarm::pipeline<std::string>{}
                 .then(f.tokenizer_t, &tokenizer::split)
                 .then(f.counter_t, &counter::count, three)
                 .then(f.scaler_t, &scaler::times_ten)
                 .start(rt, 16);
  std::thread source{[&] {
    for (int i = 0; i < 200; ++i)
      REQUIRE(run.push(std::string(static_cast<size_t>(i % 7), 'w') + " end"));
    run.close();
  }};
  std::vector<int> got;
  while (auto out = run.next(10s).value())
    got.push_back(*out);
  source.join();
  REQUIRE(got.size() == 200);
  for (int i = 0; i < 200; ++i)
    CHECK(got[static_cast<size_t>(i)] == 10 * (i % 7 == 0 ? 1 : 2));
  CHECK(run.counts().pushed == 200);
  CHECK(run.counts().in_flight == 0);
}

TEST_CASE("memory stays bounded with a slow sink: the source waits while the window is "
          "full, and the store never holds more than the window's items") {
  fixture f;
  swarm::runtime rt{f.app};
  swarm::stage_options own;
  own.actor.dedicated_thread = true;
  auto run = swarm::pipeline<int>{}
                 .then(f.bloater_t, &bloater::grow)
                 .then(f.slow_t, &slow_sink::take, own)
                 .start(rt, 4);
  std::atomic<bool> done{false};
  size_t most_in_flight = 0, most_bytes = 0;
  std::thread watch{[&] {
    while (!done) {
      most_in_flight = std::max<size_t>(most_in_flight, run.counts().in_flight);
      most_bytes = std::max(most_bytes, rt.stats().store_bytes);
      std::this_thread::sleep_for(1ms);
    }
  }};
  std::thread source{[&] {
    for (int i = 0; i < 60; ++i)
      REQUIRE(run.push(i));
    run.close();
  }};
  // A reader that falls behind holds the source back too.
  std::this_thread::sleep_for(100ms);
  CHECK(run.counts().pushed <= 4);
  auto refused = run.push(99, 0ms);
  REQUIRE_FALSE(refused);
  CHECK(refused.err().code == swarm::errc::timeout);
  int n = 0;
  while (auto out = run.next(10s).value()) {
    CHECK(*out == 256 << 10);
    ++n;
  }
  source.join();
  done = true;
  watch.join();
  CHECK(n == 60);
  CHECK(most_in_flight <= 4);
  // Each item's buffer lives in the store between the stages: never more than the
  // window's (and one being made).
  CHECK(most_bytes <= size_t{5} * (256 << 10) + (64 << 10));
}

TEST_CASE("a stage that crashes mid-stream loses nothing: the item in flight to it is "
          "delivered again to its restart") {
  fixture f;
  swarm::runtime rt{f.app};
  flaky::calls() = 0;
  flaky::crash_at() = 30;
  auto run = swarm::pipeline<int>{}
                 .then(f.flaky_t, &flaky::pass)
                 .then(f.scaler_t, &scaler::times_ten)
                 .start(rt, 8);
  std::thread source{[&] {
    for (int i = 0; i < 100; ++i)
      REQUIRE(run.push(i));
    run.close();
  }};
  std::vector<int> got;
  while (auto out = run.next(10s).value())
    got.push_back(*out);
  source.join();
  REQUIRE(got.size() == 100);
  for (int i = 0; i < 100; ++i)
    CHECK(got[static_cast<size_t>(i)] == 10 * i);
  CHECK(run.counts().redeliveries >= 1);
  flaky::crash_at() = -1;
}

TEST_CASE("a tee gets every item beside the main path, and an item a stage fails past "
          "its redeliveries comes out as an error naming the stage") {
  fixture f;
  swarm::runtime rt{f.app};
  audit::seen() = 0;
  swarm::stage_options once;
  once.max_redeliveries = 1;
  auto run = swarm::pipeline<int>{}
                 .then(f.scaler_t, &scaler::times_ten)
                 .tee(f.audit_t, &audit::record)
                 .then(f.refuser_t, &refuser::refuse, once)
                 .start(rt);
  for (int i = 0; i < 5; ++i)
    REQUIRE(run.push(i));
  run.close();
  CHECK(*run.next(10s).value() == 0);
  CHECK(*run.next(10s).value() == 10);
  CHECK(*run.next(10s).value() == 20);
  CHECK(*run.next(10s).value() == 30);
  CHECK(*run.next(10s).value() == 40);
  CHECK_FALSE(run.next(10s).value());
  CHECK(audit::seen() == 100);
  // 3 is refused only as an input: times ten, none is; a stage refusing one fails it.
  auto strict =
      swarm::pipeline<int>{}.then(f.refuser_t, &refuser::refuse, once).start(rt);
  REQUIRE(strict.push(3));
  auto failed = strict.next(10s);
  REQUIRE_FALSE(failed);
  CHECK(failed.err().message.find("stage 'refuser'") != std::string::npos);
  CHECK(failed.err().message.find("after 2 deliveries") != std::string::npos);
  CHECK(failed.err().message.find("3 is refused") != std::string::npos);
}
