// A supervision tree with each OTP strategy: crashes one child under each supervisor,
// prints what the supervisors did, and exits 0 only when each restarted what it should.
//
//   root (one_for_one) ── w
//                      ├─ all (one_for_all)  ── a1 a2 a3
//                      └─ rest (rest_for_one) ── r1 r2 r3

#include "framework/detail/supervisor_actor.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <utility>

using namespace swarm;
using namespace swarm::detail;
using namespace std::chrono_literals;

namespace {

using crash_atom = caf::atom_constant<caf::atom("crash")>;
using strings = std::vector<std::string>;

/// Collects supervisor events from any thread; `take` waits (bounded) for one of them.
class journal {
public:
  void add(std::string event) {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      events_.push_back(std::move(event));
    }
    cv_.notify_all();
  }

  /// Waits at most 5 s until `last` was logged, then returns and forgets all events.
  strings take(const std::string& last) {
    std::unique_lock<std::mutex> guard{mtx_};
    cv_.wait_for(guard, 5s, [&] {
      return std::find(events_.begin(), events_.end(), last) != events_.end();
    });
    return std::exchange(events_, {});
  }

private:
  std::mutex mtx_;
  std::condition_variable cv_;
  strings events_;
};

caf::behavior worker_actor(caf::event_based_actor* self, std::string id) {
  return {[self, id](crash_atom) {
    self->quit(caf::make_error(caf::sec::runtime_error, id));
  }};
}

supervised_child worker(const std::string& id) {
  return {child_policy{id, restart_type::permanent, {}},
          [id](caf::local_actor& parent) { return parent.spawn(worker_actor, id); }};
}

supervised_child subtree(const std::string& id, strategy how, strings ids, journal& log) {
  supervisor_config cfg{
      how, {}, {}, [&log, id](const std::string& e) { log.add(id + ": " + e); }};
  for (const auto& x : ids)
    cfg.children.push_back(worker(x));
  shutdown_policy wait_forever{false, std::chrono::milliseconds::max()};
  return {child_policy{id, restart_type::permanent, wait_forever},
          [cfg](caf::local_actor& parent) {
            return spawn_supervisor(parent.home_system(), cfg);
          }};
}

/// Returns the events of `events` that start with `prefix`.
strings only(const strings& events, const std::string& prefix) {
  strings result;
  for (const auto& e : events)
    if (e.find(prefix) != std::string::npos) result.push_back(e);
  return result;
}

/// Crashes `path` (supervisor ids, then the child id) and checks the restarts that
/// follow.
bool crash(caf::actor_system& sys, journal& log, const caf::actor& root,
           const strings& path, const strings& expected) {
  auto target = root;
  for (const auto& id : path) {
    auto next = which_child(sys, target, id);
    if (!next) {
      std::cout << "cannot find " << id << ": " << sys.render(next.error()) << '\n';
      return false;
    }
    target = *next;
  }
  std::cout << "crashing " << path.back() << '\n';
  caf::anon_send(target, crash_atom::value);
  auto events = log.take(expected.back());
  for (const auto& e : events)
    std::cout << "  " << e << '\n';
  auto restarts = only(events, "restart ");
  if (restarts != expected) {
    std::cout << "  unexpected restarts\n";
    return false;
  }
  return true;
}

} // namespace

int main() {
  journal log; // outlives the actor system, whose supervisors log into it
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 2);
  caf::actor_system sys{cfg};
  supervisor_config root_cfg{
      strategy::one_for_one,
      {},
      {worker("w"), subtree("all", strategy::one_for_all, {"a1", "a2", "a3"}, log),
       subtree("rest", strategy::rest_for_one, {"r1", "r2", "r3"}, log)},
      [&log](const std::string& e) { log.add("root: " + e); }};
  auto root = spawn_supervisor(sys, root_cfg);
  log.take("rest: start r3"); // the whole tree runs

  bool ok =
      crash(sys, log, root, {"w"}, {"root: restart w"}) &&
      crash(sys, log, root, {"all", "a2"},
            {"all: restart a1", "all: restart a2", "all: restart a3"}) &&
      crash(sys, log, root, {"rest", "r2"}, {"rest: restart r2", "rest: restart r3"});

  caf::scoped_actor self{sys};
  self->monitor(root);
  caf::anon_send_exit(root, caf::exit_reason::user_shutdown);
  bool stopped = false;
  self->receive([&](caf::down_msg&) { stopped = true; }, caf::after(10s) >> [] {});
  std::cout << (stopped ? "tree stopped\n" : "tree did not stop in time\n");
  ok = ok && stopped;
  std::cout << (ok ? "supervision behaved as expected\n" : "supervision FAILED\n");
  return ok ? 0 : 1;
}
