#include <doctest/doctest.h>

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "framework/swarm.hpp"

using namespace std::chrono_literals;

namespace {

struct counter : swarm::actor {
  explicit counter(int start = 0) : value(start) {}
  int add(int k) {
    value += k;
    return value;
  }
  int get() const { return value; }
  std::vector<int> log_append(int x) {
    log.push_back(x);
    return log;
  }
  void crash(const std::string& why) { throw swarm::actor_failure(why); }
  int fail_call() { throw std::runtime_error("just this call"); }
  // Writes the file `started`, then waits (at most 10 s) for the file `open`.
  bool hold(const std::string& started, const std::string& open) {
    std::ofstream{started} << "started";
    for (int i = 0; i < 1000 && !std::filesystem::exists(open); ++i)
      std::this_thread::sleep_for(10ms);
    return std::filesystem::exists(open);
  }
  void on_restart(const swarm::error& cause) override {
    restarted_because = cause.message;
  }
  std::string why() const { return restarted_because; }

  int value;
  std::vector<int> log;
  std::string restarted_because;
};

/// Saves its total every `checkpoint_every` calls; a total of 13 refuses to be saved.
struct ledger : swarm::actor {
  int add(int k) { return total += k; }
  int get() const { return total; }
  void crash() { throw swarm::actor_failure("crash"); }
  std::vector<uint8_t> on_checkpoint() override {
    if (total == 13) throw std::runtime_error("unlucky total");
    return swarm::encode(total);
  }
  void on_restore(const std::vector<uint8_t>& state) override {
    std::string why;
    REQUIRE(swarm::decode(state.data(), state.size(), total, why));
  }
  int total = 0;
};

struct spawner : swarm::actor {
  spawner(int) {}
  int spawn_and_call(int k);
};

struct app_fixture {
  swarm::application app;
  swarm::actor_class<counter> counter_t = app.actor_type<counter>("counter");
  swarm::task_fn<int(int)> inc = app.function("inc", [](int x) { return x + 1; });
  swarm::actor_class<spawner> spawner_t = app.actor_type<spawner>("spawner");
  swarm::actor_class<ledger> ledger_t = app.actor_type<ledger>("ledger");
};

int spawner::spawn_and_call(int k) {
  auto& ctx = actor_context();
  auto counter_t = ctx.app().find_actor_type<counter>("counter").value();
  auto inc = ctx.app().find_function<int(int)>("inc").value();
  auto c = ctx.spawn(counter_t, k);
  auto r = ctx.submit(inc, c.call(&counter::add, 1));
  return r.get(5s).value();
}

swarm::runtime_config two_cpus() {
  swarm::runtime_config cfg;
  cfg.cpus = 2;
  return cfg;
}

template <class Pred> bool eventually(Pred p) {
  for (int i = 0; i < 500; ++i) {
    if (p()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

} // namespace

TEST_CASE("an actor keeps its state across calls") {
  app_fixture f;
  swarm::runtime rt{f.app, two_cpus()};
  auto c = rt.spawn(f.counter_t, 10);
  c.call(&counter::add, 5);
  CHECK(c.call(&counter::add, 1).get(5s).value() == 16);
  CHECK(c.call(&counter::get).get(5s).value() == 16);
}

TEST_CASE("calls from one caller to one actor run in the order made") {
  app_fixture f;
  swarm::runtime rt{f.app, two_cpus()};
  auto c = rt.spawn(f.counter_t);
  swarm::object_ref<std::vector<int>> last;
  for (int i = 0; i < 1000; ++i)
    last = c.call(&counter::log_append, i);
  auto log = last.get(10s).value();
  REQUIRE(log.size() == 1000);
  for (int i = 0; i < 1000; ++i)
    REQUIRE(log[static_cast<size_t>(i)] == i);
}

TEST_CASE("calls waiting for an actor run highest priority first, in the order made "
          "within a priority, after the call running") {
  app_fixture f;
  swarm::runtime rt{f.app, two_cpus()};
  auto c = rt.spawn(f.counter_t);
  auto dir = std::filesystem::temp_directory_path() /
             ("swarm_call_priority_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto started = (dir / "started").string(), open = (dir / "open").string();
  auto held = c.call(&counter::hold, started, open);
  REQUIRE(eventually([&] { return std::filesystem::exists(started); }));
  // All wait behind `hold`: three plain calls, then priority 2, then 5.
  for (int i = 1; i <= 3; ++i)
    c.call(&counter::log_append, i);
  c.priority(2).call(&counter::log_append, 50);
  c.priority(5).call(&counter::log_append, 100);
  auto after = c.call(&counter::log_append, 4);
  std::ofstream{open} << "open";
  CHECK(held.get(10s).value());
  CHECK(after.get(10s).value() == std::vector<int>{100, 50, 1, 2, 3, 4});
  // Plain calls keep their order afterwards.
  swarm::object_ref<std::vector<int>> last;
  for (int i = 5; i < 50; ++i)
    last = c.call(&counter::log_append, i);
  auto log = last.get(10s).value();
  REQUIRE(log.size() == 51);
  for (int i = 5; i < 50; ++i)
    CHECK(log[static_cast<size_t>(i + 1)] == i);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a call waiting for an argument future holds back the calls after it") {
  app_fixture f;
  swarm::runtime rt{f.app, two_cpus()};
  auto c = rt.spawn(f.counter_t);
  auto slow = rt.submit(f.inc, 41);
  c.call(&counter::log_append, slow);
  auto after = c.call(&counter::log_append, 7);
  CHECK(after.get(5s).value() == std::vector<int>{42, 7});
}

TEST_CASE("an exception in a method fails that call only") {
  app_fixture f;
  swarm::runtime rt{f.app, two_cpus()};
  auto c = rt.spawn(f.counter_t, 3);
  auto r = c.call(&counter::fail_call).get(5s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == swarm::errc::application_error);
  CHECK(r.err().message.find("just this call") != std::string::npos);
  CHECK(c.call(&counter::get).get(5s).value() == 3);
}

TEST_CASE("a crashed actor is restarted fresh and told why") {
  app_fixture f;
  swarm::runtime rt{f.app, two_cpus()};
  swarm::actor_options o;
  o.max_restarts = 2;
  auto c = rt.spawn(o, f.counter_t, 100);
  c.call(&counter::add, 5);
  auto crashed = c.call(&counter::crash, std::string{"disk on fire"}).get(5s);
  REQUIRE_FALSE(crashed);
  CHECK(crashed.err().code == swarm::errc::actor_died);
  CHECK(c.call(&counter::get).get(5s).value() == 100);
  CHECK(c.call(&counter::why).get(5s).value().find("disk on fire") != std::string::npos);
  CHECK_FALSE(c.dead());
}

TEST_CASE("a restarted actor resumes from the state it last checkpointed") {
  app_fixture f;
  swarm::runtime rt{f.app, two_cpus()};
  swarm::actor_options o;
  o.max_restarts = 2;
  o.checkpoint_every = 2;
  auto a = rt.spawn(o, f.ledger_t);
  a.call(&ledger::add, 5);
  a.call(&ledger::add, 7); // saved: 12
  a.call(&ledger::add, 2); // not saved
  CHECK_FALSE(a.call(&ledger::crash).get(5s));
  CHECK(a.call(&ledger::get).get(5s).value() == 12);
  // A hook that throws crashes the actor; the restart goes back to the last save.
  a.call(&ledger::add, 1); // 13: the save after this call throws
  CHECK(a.call(&ledger::get).get(5s).value() == 12);
  a.call(&ledger::add, 1);
  a.call(&ledger::add, 1); // 13 again: restarts used up
  auto r = a.call(&ledger::get).get(5s);
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("on_checkpoint: unlucky total") != std::string::npos);
}

TEST_CASE(
    "a named actor with durable checkpoints starts from its last state in a runtime "
    "started again on the same gcs_dir") {
  app_fixture f;
  auto tmpl = (std::filesystem::temp_directory_path() / "swarm-ckpt-XXXXXX").string();
  std::string dir = ::mkdtemp(tmpl.data());
  auto cfg = two_cpus();
  cfg.gcs_dir = dir;
  swarm::actor_options o;
  o.name = "books";
  o.checkpoint_every = 1;
  o.durable_checkpoints = true;
  {
    swarm::runtime rt{f.app, cfg};
    auto a = rt.spawn(o, f.ledger_t);
    a.call(&ledger::add, 5);
    CHECK(a.call(&ledger::add, 4).get(5s).value() == 9);
  }
  {
    swarm::runtime rt{f.app, cfg};
    auto a = rt.spawn(o, f.ledger_t);
    CHECK(a.call(&ledger::get).get(5s).value() == 9);
    // Without the option, the name starts afresh.
    swarm::actor_options plain = o;
    plain.name = "fresh";
    plain.durable_checkpoints = false;
    CHECK(rt.spawn(plain, f.ledger_t).call(&ledger::get).get(5s).value() == 0);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "an actor that used up max_restarts dies and later calls fail with actor_died") {
  app_fixture f;
  swarm::runtime rt{f.app, two_cpus()};
  swarm::actor_options o;
  o.max_restarts = 1;
  auto c = rt.spawn(o, f.counter_t);
  c.call(&counter::crash, std::string{"one"});
  c.call(&counter::crash, std::string{"two"});
  auto r = c.call(&counter::get).get(5s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == swarm::errc::actor_died);
  CHECK(r.err().message.find("restarts used up") != std::string::npos);
  CHECK(c.dead());
  auto later = c.call(&counter::get).get(5s);
  REQUIRE_FALSE(later);
  CHECK(later.err().code == swarm::errc::actor_died);
}

TEST_CASE("a killed actor fails later calls") {
  app_fixture f;
  swarm::runtime rt{f.app, two_cpus()};
  auto c = rt.spawn(f.counter_t);
  REQUIRE(c.call(&counter::get).get(5s));
  rt.kill(c);
  REQUIRE(eventually([&] { return c.dead(); }));
  auto r = c.call(&counter::get).get(5s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == swarm::errc::actor_died);
}

TEST_CASE("a named actor is found by name from anywhere and its name is unique") {
  app_fixture f;
  swarm::runtime rt{f.app, two_cpus()};
  swarm::actor_options o;
  o.name = "ps";
  auto c = rt.spawn(o, f.counter_t, 5);
  auto found = rt.find_actor(f.counter_t, "ps");
  REQUIRE(found);
  CHECK(found->call(&counter::add, 1).get(5s).value() == 6);
  auto taken = rt.spawn(o, f.counter_t, 1);
  CHECK(taken.dead());
  CHECK(taken.death_reason().find("'ps' is already taken") != std::string::npos);
  auto call = taken.call(&counter::add, 1).get(5s);
  REQUIRE_FALSE(call);
  CHECK(call.err().code == swarm::errc::actor_died);
  CHECK(call.err().message.find("could not be created") != std::string::npos);
  auto missing = rt.find_actor(f.counter_t, "nobody");
  REQUIRE_FALSE(missing);
  CHECK(missing.err().message.find("nobody") != std::string::npos);
  auto wrong_type = rt.find_actor(f.spawner_t, "ps");
  REQUIRE_FALSE(wrong_type);
  CHECK(wrong_type.err().code == swarm::errc::type_mismatch);
}

TEST_CASE("actors can create actors and submit tasks") {
  app_fixture f;
  swarm::runtime rt{f.app, two_cpus()};
  swarm::actor_options o;
  o.dedicated_thread = true;
  auto s = rt.spawn(o, f.spawner_t, 0);
  CHECK(s.call(&spawner::spawn_and_call, 40).get(10s).value() == 42);
}

TEST_CASE("an actor whose last handle goes is stopped and its on_stop runs") {
  swarm::application app;
  auto stopped = std::make_shared<std::atomic<bool>>(false);
  // on_stop reports through a registered task, the only way out of an actor it needs.
  app.function("note_stop", [stopped](int) { *stopped = true; });
  struct watched : swarm::actor {
    int ping() { return 1; }
    void on_stop() override {
      auto note = actor_context().app().find_function<void(int)>("note_stop").value();
      actor_context().submit(note, 0);
    }
  };
  auto t = app.actor_type<watched>("watched");
  swarm::runtime rt{app, two_cpus()};
  {
    auto a = rt.spawn(t);
    CHECK(a.call(&watched::ping).get(5s).value() == 1);
  }
  CHECK(eventually([&] { return stopped->load(); }));
}

TEST_CASE("an actor whose last handle goes still runs the calls made before") {
  swarm::application app;
  auto t = app.actor_type<counter>("counter");
  swarm::runtime rt{app, two_cpus()};
  std::vector<swarm::object_ref<int>> refs;
  {
    auto a = rt.spawn(t);
    for (int i = 0; i < 200; ++i)
      refs.push_back(a.call(&counter::add, 1));
  }
  CHECK(refs.back().get(10s).value() == 200);
}

TEST_CASE("calls still queued when the runtime stops all end before it is gone") {
  swarm::application app;
  struct slow : swarm::actor {
    int nap(int x) {
      std::this_thread::sleep_for(2ms);
      return x;
    }
  };
  auto t = app.actor_type<slow>("slow");
  std::vector<swarm::object_ref<int>> refs;
  {
    swarm::runtime rt{app, two_cpus()};
    auto a = rt.spawn(t);
    for (int i = 0; i < 200; ++i)
      refs.push_back(a.call(&slow::nap, i));
  }
  // Each call either ran or failed with actor_died; none is left pending.
  for (auto& r : refs) {
    REQUIRE(r.ready());
    auto v = r.get(1ms);
    if (!v) REQUIRE(v.err().code == swarm::errc::actor_died);
  }
}

TEST_CASE("the name of an actor that died for good can be taken again") {
  app_fixture f;
  swarm::runtime rt{f.app, two_cpus()};
  swarm::actor_options o;
  o.name = "singleton";
  auto first = rt.spawn(o, f.counter_t, 1);
  first.call(&counter::crash, std::string{"gone"});
  REQUIRE(eventually([&] { return first.dead(); }));
  CHECK_FALSE(rt.find_actor(f.counter_t, "singleton"));
  auto second = rt.spawn(o, f.counter_t, 2);
  CHECK(rt.find_actor(f.counter_t, "singleton")->call(&counter::get).get(5s).value() ==
        2);
}

TEST_CASE("an actor that cannot be placed comes back as a dead handle whose calls fail "
          "with the reason, not as an exception") {
  app_fixture f;
  swarm::runtime rt{f.app, two_cpus()};
  swarm::actor_options huge;
  huge.resources.set("CPU", 64);
  auto a = rt.spawn(huge, f.counter_t, 1);
  CHECK(a.valid());
  CHECK(a.dead());
  CHECK(a.death_reason().find("could not be created") != std::string::npos);
  CHECK(a.death_reason().find("CPU") != std::string::npos);
  auto r = a.call(&counter::add, 1).get(5s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == swarm::errc::actor_died);
}
