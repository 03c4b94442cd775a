// The record of a user actor hosted on this node: where its calls go, and what happens
// to them while its supervisor restarts it or gives up on it.

#include <doctest/doctest.h>

#include <caf/all.hpp>
#include <caf/test/dsl.hpp>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "actors/user_actors/actor_host.hpp"
#include "actors/user_actors/protocol.hpp"

using namespace swarm;
using namespace swarm::actors;

namespace {

// A call named `name` whose result is object (1, seq).
detail::task_ptr call(const std::string& name, uint64_t seq) {
  auto t = std::make_shared<detail::task_spec>();
  t->name = name;
  t->result_type = &detail::type_of<std::string>();
  t->result = std::make_shared<detail::object_slot>(swarm::object_id{1, seq});
  return t;
}

// What the hosts were sent, "host: call", in order; outlives the actor system.
struct received {
  std::vector<std::string> calls;
};

struct fixture : received, test_coordinator_fixture<> {
  std::shared_ptr<node_liveness> node = std::make_shared<node_liveness>();

  // A host that records the calls it gets under `name` (an argument: CAF 0.17 binds a
  // null tuple for a function actor spawned with none, which UBSan reports).
  caf::actor host(const std::string& name) {
    return sys.spawn(
        [this](caf::event_based_actor*, const std::string& as) -> caf::behavior {
          return {[this, as](call_atom, detail::task_ptr& t) {
            calls.push_back(as + ": " + t->name);
          }};
        },
        name);
  }

  std::shared_ptr<host_record> record(bool supervised = true) {
    detail::actor_spec spec;
    spec.type_name = "counter";
    return std::make_shared<host_record>(std::move(spec), node, supervised);
  }

  bool deliver(host_record& r, detail::task_ptr t) {
    bool ok = r.deliver(t);
    sched.run();
    return ok;
  }
};

} // namespace

TEST_CASE_FIXTURE(fixture,
                  "calls held while a supervised actor restarts go to its "
                  "successor in order, the calls its old host did not run first") {
  auto r = record();
  auto first = host("first");
  r->set_host(first);
  CHECK(deliver(*r, call("a", 1)));
  r->begin_restart(first.address(), "add threw: boom");
  CHECK(r->host() == nullptr);
  CHECK(deliver(*r, call("c", 3)));
  CHECK(deliver(*r, call("d", 4)));
  r->hold_unrun(std::deque<detail::task_ptr>{call("b", 2)});
  CHECK(calls == std::vector<std::string>{"first: a"});
  CHECK(r->take_restart_cause() == "add threw: boom");
  CHECK(r->take_restart_cause().empty()); // cleared once taken

  r->set_host(host("second"));
  sched.run();
  CHECK(calls ==
        std::vector<std::string>{"first: a", "second: b", "second: c", "second: d"});
  CHECK(deliver(*r, call("e", 5)));
  CHECK(calls.back() == "second: e");
}

TEST_CASE_FIXTURE(fixture, "an actor its supervisor gives up on fails the calls it held "
                           "with actor_died and takes no more") {
  auto r = record();
  auto only = host("only");
  r->set_host(only);
  r->begin_restart(only.address(), "crashed");
  auto held = call("a", 1);
  CHECK(deliver(*r, held));
  r->give_up("its supervisor reached its restart limit");
  CHECK(r->dead());
  REQUIRE(held->result->done());
  auto v = held->result->read();
  REQUIRE_FALSE(v);
  CHECK(v.err().code == errc::actor_died);
  CHECK(v.err().message == "its supervisor reached its restart limit");
  CHECK_FALSE(deliver(*r, call("b", 2)));
  CHECK(calls.empty());
}

TEST_CASE_FIXTURE(fixture,
                  "a restart begun for a host that is no longer the actor's "
                  "changes nothing, and calls held without a restart are dropped") {
  auto r = record();
  auto old_host = host("old");
  auto current = host("current");
  r->set_host(old_host);
  r->set_host(current);
  r->begin_restart(old_host.address(), "late news of the old host");
  CHECK(r->host() == current);
  CHECK(deliver(*r, call("a", 1)));
  CHECK(calls == std::vector<std::string>{"current: a"});
  // Not restarting: what the ending host did not run is not kept.
  r->hold_unrun(std::deque<detail::task_ptr>{call("b", 2)});
  r->detach();
  CHECK_FALSE(deliver(*r, call("c", 3)));
  CHECK(calls == std::vector<std::string>{"current: a"});
}
