#include "framework/detail/supervisor_actor.hpp"

#include <doctest/doctest.h>

#include <caf/all.hpp>

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>

namespace doctest {
template <> struct StringMaker<std::vector<std::string>> {
  static String convert(const std::vector<std::string>& xs) {
    std::string result = "[";
    for (const auto& x : xs)
      result += (result.size() > 1 ? ", \"" : "\"") + x + '"';
    return (result + "]").c_str();
  }
};
} // namespace doctest

using namespace swarm;
using namespace swarm::detail;
using namespace std::chrono_literals;

namespace {

using crash_atom = caf::atom_constant<caf::atom("crash")>;
using throw_atom = caf::atom_constant<caf::atom("throw")>;
using finish_atom = caf::atom_constant<caf::atom("finish")>;
using strings = std::vector<std::string>;

constexpr auto patience = 5s;

/// A thread-safe record of supervisor events and child notes, in the order they happened.
class event_log {
public:
  void add(std::string x) {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      events_.push_back(std::move(x));
    }
    cv_.notify_all();
  }

  /// Waits (at most `patience`) until `x` was logged `times` times.
  bool wait_for(const std::string& x, size_t times = 1) {
    std::unique_lock<std::mutex> guard{mtx_};
    return cv_.wait_for(guard, patience, [&] {
      return static_cast<size_t>(std::count(events_.begin(), events_.end(), x)) >= times;
    });
  }

  strings events() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return events_;
  }

  /// Returns the events logged from index `first` on.
  strings since(size_t first) const {
    auto all = events();
    return first < all.size() ? strings(all.begin() + first, all.end()) : strings{};
  }

  size_t size() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return events_.size();
  }

private:
  mutable std::mutex mtx_;
  std::condition_variable cv_;
  strings events_;
};

using log_ptr = std::shared_ptr<event_log>;

enum class temper { cooperative, stubborn };

/// A child that logs when asked to stop, crashes on crash_atom or throw_atom and exits
/// normally on finish_atom. A stubborn one ignores requests to stop.
caf::behavior child_actor(caf::event_based_actor* self, log_ptr log, std::string id,
                          temper mood) {
  self->set_exit_handler([log, id, mood, self](caf::exit_msg& msg) {
    if (mood == temper::stubborn) {
      log->add("child " + id + " ignores shutdown");
      return;
    }
    log->add("child " + id + " stopping");
    self->quit(msg.reason);
  });
  return {
      [self](crash_atom) { self->quit(caf::sec::runtime_error); },
      [](throw_atom) { throw std::runtime_error("boom"); },
      [self](finish_atom) { self->quit(); },
  };
}

supervised_child worker(log_ptr log, std::string id,
                        restart_type restart = restart_type::permanent,
                        shutdown_policy shutdown = {},
                        temper mood = temper::cooperative) {
  auto start = [log, id, mood](caf::local_actor& parent) {
    return parent.spawn(child_actor, log, id, mood);
  };
  return supervised_child{child_policy{id, restart, shutdown}, start, {}};
}

std::function<void(const std::string&)> logger(log_ptr log, std::string prefix = "") {
  return [log, prefix](const std::string& event) { log->add(prefix + event); };
}

/// A supervisor as the child of another one.
supervised_child nested(supervisor_config cfg, std::string id) {
  shutdown_policy shutdown{false, std::chrono::milliseconds::max()};
  auto start = [cfg](caf::local_actor& parent) {
    return spawn_supervisor(parent.home_system(), cfg);
  };
  return supervised_child{child_policy{id, restart_type::permanent, shutdown}, start, {}};
}

struct fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys;
  caf::scoped_actor self;

  fixture() : sys(configure(cfg)), self(sys) {}

  static caf::actor_system_config& configure(caf::actor_system_config& x) {
    x.set("scheduler.max-threads", 2);
    return x;
  }

  caf::actor child(const caf::actor& sup, const std::string& id) {
    auto result = which_child(sys, sup, id);
    REQUIRE(result);
    return *result;
  }

  /// Waits (at most `patience`) for a down_msg from a monitored actor.
  std::optional<caf::error> wait_down() {
    std::optional<caf::error> reason;
    self->receive([&](caf::down_msg& msg) { reason = msg.reason; },
                  caf::after(patience) >> [] {});
    return reason;
  }

  /// Asks `sup` to shut down and waits until it did.
  std::optional<caf::error> stop(const caf::actor& sup) {
    self->monitor(sup);
    caf::anon_send_exit(sup, caf::exit_reason::user_shutdown);
    return wait_down();
  }
};

bool is(const std::optional<caf::error>& x, caf::error expected) {
  return x && *x == expected;
}

} // namespace

TEST_CASE_FIXTURE(
    fixture,
    "a supervisor starts its children in order and stops them in reverse order") {
  auto log = std::make_shared<event_log>();
  auto sup =
      spawn_supervisor(sys, {strategy::one_for_one,
                             {},
                             {worker(log, "a"), worker(log, "b"), worker(log, "c")},
                             logger(log)});
  CHECK(is(stop(sup), caf::exit_reason::user_shutdown));
  CHECK(log->events() == strings{"start a", "start b", "start c", "shutdown",
                                 "child c stopping", "stop c", "child b stopping",
                                 "stop b", "child a stopping", "stop a"});
}

TEST_CASE_FIXTURE(fixture,
                  "one_for_one restarts only the crashed child, as a fresh actor") {
  auto log = std::make_shared<event_log>();
  auto sup =
      spawn_supervisor(sys, {strategy::one_for_one,
                             {},
                             {worker(log, "a"), worker(log, "b"), worker(log, "c")},
                             logger(log)});
  auto a = child(sup, "a").id();
  auto b = child(sup, "b").id();
  auto c = child(sup, "c").id();
  auto mark = log->size();
  caf::anon_send(child(sup, "b"), crash_atom::value);
  REQUIRE(log->wait_for("restart b"));
  CHECK(log->since(mark) == strings{"exit b failure", "restart b"});
  CHECK(child(sup, "a").id() == a);
  CHECK(child(sup, "b").id() != b);
  CHECK(child(sup, "c").id() == c);
  // An exception escaping a child is a crash too.
  caf::anon_send(child(sup, "a"), throw_atom::value);
  REQUIRE(log->wait_for("restart a"));
  CHECK(child(sup, "a").id() != a);
  CHECK(is(stop(sup), caf::exit_reason::user_shutdown));
}

TEST_CASE_FIXTURE(
    fixture, "one_for_all stops the others in reverse order and restarts all in order") {
  auto log = std::make_shared<event_log>();
  auto sup =
      spawn_supervisor(sys, {strategy::one_for_all,
                             {},
                             {worker(log, "a"), worker(log, "b"), worker(log, "c")},
                             logger(log)});
  auto a = child(sup, "a").id();
  auto b = child(sup, "b").id();
  auto c = child(sup, "c").id();
  auto mark = log->size();
  caf::anon_send(child(sup, "b"), crash_atom::value);
  REQUIRE(log->wait_for("restart c"));
  CHECK(log->since(mark) == strings{"exit b failure", "child c stopping", "stop c",
                                    "child a stopping", "stop a", "restart a",
                                    "restart b", "restart c"});
  CHECK(child(sup, "a").id() != a);
  CHECK(child(sup, "b").id() != b);
  CHECK(child(sup, "c").id() != c);
  CHECK(is(stop(sup), caf::exit_reason::user_shutdown));
}

TEST_CASE_FIXTURE(
    fixture, "rest_for_one restarts the failed child and everything started after it") {
  auto log = std::make_shared<event_log>();
  auto sup = spawn_supervisor(
      sys, {strategy::rest_for_one,
            {},
            {worker(log, "a"), worker(log, "b"), worker(log, "c"), worker(log, "d")},
            logger(log)});
  auto a = child(sup, "a").id();
  auto b = child(sup, "b").id();
  auto c = child(sup, "c").id();
  auto mark = log->size();
  caf::anon_send(child(sup, "b"), crash_atom::value);
  REQUIRE(log->wait_for("restart d"));
  CHECK(log->since(mark) == strings{"exit b failure", "child d stopping", "stop d",
                                    "child c stopping", "stop c", "restart b",
                                    "restart c", "restart d"});
  CHECK(child(sup, "a").id() == a);
  CHECK(child(sup, "b").id() != b);
  CHECK(child(sup, "c").id() != c);
  CHECK(is(stop(sup), caf::exit_reason::user_shutdown));
}

TEST_CASE_FIXTURE(fixture,
                  "transient and temporary children that are not restarted are removed") {
  auto log = std::make_shared<event_log>();
  auto sup = spawn_supervisor(
      sys, {strategy::one_for_all,
            {},
            {worker(log, "t", restart_type::transient),
             worker(log, "m", restart_type::temporary), worker(log, "p")},
            logger(log)});
  auto t = child(sup, "t"); // also waits until all children started
  auto mark = log->size();
  caf::anon_send(t, finish_atom::value);
  REQUIRE(log->wait_for("remove t"));
  caf::anon_send(child(sup, "m"), crash_atom::value);
  REQUIRE(log->wait_for("remove m"));
  caf::anon_send(child(sup, "p"), crash_atom::value);
  REQUIRE(log->wait_for("restart p"));
  CHECK(log->since(mark) == strings{"exit t normal", "remove t", "exit m failure",
                                    "remove m", "exit p failure", "restart p"});
  auto gone = which_child(sys, sup, "t");
  REQUIRE_FALSE(gone);
  CHECK(gone.error() == make_error(supervisor_error::child_not_running));
  auto unknown = which_child(sys, sup, "nobody");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error() == make_error(supervisor_error::unknown_child));
  CHECK(is(stop(sup), caf::exit_reason::user_shutdown));
}

TEST_CASE_FIXTURE(
    fixture,
    "a nested supervisor that exceeds its intensity exits and its parent restarts it") {
  auto log = std::make_shared<event_log>();
  supervisor_config sub_cfg{strategy::one_for_one,
                            {1, 5000ms},
                            {worker(log, "x"), worker(log, "y")},
                            logger(log, "sub: ")};
  auto root = spawn_supervisor(sys, {strategy::one_for_one,
                                     {},
                                     {worker(log, "peer"), nested(sub_cfg, "sub")},
                                     logger(log, "root: ")});
  auto peer = child(root, "peer").id();
  auto sub = child(root, "sub");
  caf::anon_send(child(sub, "x"), crash_atom::value);
  REQUIRE(log->wait_for("sub: restart x"));
  auto mark = log->size();
  caf::anon_send(child(sub, "x"), crash_atom::value);
  REQUIRE(log->wait_for("root: restart sub"));
  REQUIRE(log->wait_for("sub: start y", 2));
  auto events = log->since(mark);
  REQUIRE(events.size() == 8);
  CHECK(strings(events.begin(), events.begin() + 5) ==
        strings{"sub: exit x failure", "sub: escalate", "child y stopping", "sub: stop y",
                "root: exit sub failure"});
  // The fresh sub runs concurrently with root, so only its own order is fixed.
  auto rest = strings(events.begin() + 5, events.end());
  auto restart = std::find(rest.begin(), rest.end(), "root: restart sub");
  REQUIRE(restart != rest.end());
  rest.erase(restart);
  CHECK(rest == strings{"sub: start x", "sub: start y"});
  auto fresh = child(root, "sub");
  CHECK(fresh.id() != sub.id());
  CHECK(child(root, "peer").id() == peer);
  CHECK(child(fresh, "x"));
  CHECK(is(stop(root), caf::exit_reason::user_shutdown));
}

TEST_CASE_FIXTURE(fixture, "a parent whose own intensity is exceeded escalates in turn") {
  auto log = std::make_shared<event_log>();
  supervisor_config sub_cfg{
      strategy::one_for_one, {0, 5000ms}, {worker(log, "x")}, logger(log, "sub: ")};
  auto root = spawn_supervisor(sys, {strategy::one_for_one,
                                     {0, 5000ms},
                                     {worker(log, "peer"), nested(sub_cfg, "sub")},
                                     logger(log, "root: ")});
  auto x = child(child(root, "sub"), "x");
  auto mark = log->size();
  self->monitor(root);
  caf::anon_send(x, crash_atom::value);
  CHECK(is(wait_down(), make_error(supervisor_error::intensity_exceeded)));
  CHECK(log->since(mark) == strings{"sub: exit x failure", "sub: escalate",
                                    "root: exit sub failure", "root: escalate",
                                    "child peer stopping", "root: stop peer"});
}

TEST_CASE_FIXTURE(
    fixture,
    "brutal_kill kills at once and a shutdown timeout kills a child that will not stop") {
  auto log = std::make_shared<event_log>();
  auto sup = spawn_supervisor(
      sys, {strategy::one_for_one,
            {},
            {worker(log, "s1", restart_type::permanent, {true, 5000ms}, temper::stubborn),
             worker(log, "s2", restart_type::permanent, {false, 200ms}, temper::stubborn),
             worker(log, "c", restart_type::permanent, {false, 5000ms})},
            logger(log)});
  child(sup, "c"); // all children started
  auto mark = log->size();
  auto began = std::chrono::steady_clock::now();
  CHECK(is(stop(sup), caf::exit_reason::user_shutdown));
  auto took = std::chrono::steady_clock::now() - began;
  CHECK(log->since(mark) == strings{"shutdown", "child c stopping", "stop c",
                                    "child s2 ignores shutdown", "kill s2", "stop s2",
                                    "kill s1", "stop s1"});
  CHECK(took >= 200ms);
  CHECK(took < 4s);
}

TEST_CASE_FIXTURE(
    fixture, "a supervisor whose child fails to start stops the started ones and exits") {
  auto log = std::make_shared<event_log>();
  supervised_child broken{child_policy{"b", restart_type::permanent, {}},
                          [](caf::local_actor&) { return caf::actor{}; }, {}};
  auto sup = spawn_supervisor(sys, {strategy::one_for_one,
                                    {},
                                    {worker(log, "a"), broken, worker(log, "c")},
                                    logger(log)});
  self->monitor(sup);
  CHECK(is(wait_down(), make_error(supervisor_error::start_failed)));
  CHECK(log->events() ==
        strings{"start a", "start_failed b", "child a stopping", "stop a"});

  supervised_child throwing{
      child_policy{"t", restart_type::permanent, {}},
      [](caf::local_actor&) -> caf::actor { throw std::runtime_error("no"); }, {}};
  auto lone = spawn_supervisor(sys, {strategy::one_for_one, {}, {throwing}, {}});
  self->monitor(lone);
  CHECK(is(wait_down(), make_error(supervisor_error::start_failed)));
}

TEST_CASE_FIXTURE(fixture, "killing a supervisor kills its children") {
  auto log = std::make_shared<event_log>();
  auto sup = spawn_supervisor(
      sys, {strategy::one_for_one,
            {},
            {worker(log, "a", restart_type::permanent, {}, temper::stubborn)},
            logger(log)});
  self->monitor(child(sup, "a"));
  caf::anon_send_exit(sup, caf::exit_reason::kill);
  CHECK(is(wait_down(), caf::exit_reason::kill));
}

TEST_CASE_FIXTURE(fixture, "duplicate child ids are refused before anything starts") {
  auto log = std::make_shared<event_log>();
  CHECK_THROWS_AS(
      spawn_supervisor(
          sys, {strategy::one_for_one, {}, {worker(log, "a"), worker(log, "a")}, {}}),
      std::invalid_argument);
  CHECK(log->size() == 0);
}

TEST_CASE("exit reasons map to how a child ended") {
  CHECK(classify(caf::error{}) == exit_kind::normal);
  CHECK(classify(caf::exit_reason::normal) == exit_kind::normal);
  CHECK(classify(caf::exit_reason::user_shutdown) == exit_kind::shutdown);
  CHECK(classify(caf::exit_reason::kill) == exit_kind::failure);
  CHECK(classify(caf::sec::runtime_error) == exit_kind::failure);
  CHECK(classify(make_error(supervisor_error::intensity_exceeded)) == exit_kind::failure);
}
