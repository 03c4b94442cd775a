// A supervision tree over actors of this node, as its handles see it: the root is asked
// to stop when the last handle goes, unless the node stopped or let go of it first.

#include <doctest/doctest.h>

#include <caf/all.hpp>
#include <caf/test/dsl.hpp>

#include <memory>
#include <string>
#include <vector>

#include "actors/user_actors/local_group.hpp"

using namespace swarm;
using namespace swarm::actors;

namespace {

// The exit reasons the root was sent; outlives the actor system.
struct received {
  std::vector<caf::error> exits;
};

struct fixture : received, test_coordinator_fixture<> {
  std::shared_ptr<node_liveness> node = std::make_shared<node_liveness>();

  // A root supervisor that records the exit it is sent, then ends (as a supervisor does).
  // What it records into is a spawn argument: CAF 0.17 dereferences a null argument
  // tuple for argument-less spawns (harmless, but UBSan reports it).
  caf::actor root() {
    auto record = [](caf::event_based_actor* root_self, received* into) -> caf::behavior {
      root_self->set_exit_handler([into, root_self](const caf::exit_msg& m) {
        into->exits.push_back(m.reason);
        root_self->quit(m.reason);
      });
      return {[](int) {}};
    };
    return sys.spawn(record, static_cast<received*>(this));
  }
};

} // namespace

TEST_CASE_FIXTURE(
    fixture, "a supervision tree's root is asked to stop when its last handle goes") {
  auto r = root();
  auto group = std::make_shared<local_group>(node);
  group->set_root(r);
  auto other_handle = group;
  group.reset();
  sched.run();
  CHECK(exits.empty()); // a handle is left
  CHECK(other_handle->root() == r);
  other_handle.reset();
  sched.run();
  REQUIRE(exits.size() == 1);
  CHECK(exits.front() == caf::exit_reason::user_shutdown);
}

TEST_CASE_FIXTURE(fixture,
                  "a supervision tree outliving its node leaves the stopped node alone") {
  auto r = root();
  auto group = std::make_shared<local_group>(node);
  group->set_root(r);
  node->alive = false; // the node stopped; its actors are gone with it
  group.reset();
  sched.run();
  CHECK(exits.empty());
}

TEST_CASE_FIXTURE(fixture,
                  "a supervision tree the node let go of does not stop its root") {
  auto r = root();
  auto group = std::make_shared<local_group>(node);
  group->set_root(r);
  group->detach();
  CHECK(!group->root());
  group.reset();
  sched.run();
  CHECK(exits.empty());
}

TEST_CASE_FIXTURE(fixture,
                  "a supervision tree names its children and ends with its root") {
  auto group = std::make_shared<local_group>(node);
  group->add_child("a", nullptr);
  CHECK(group->has_child("a"));
  CHECK(!group->has_child("b"));
  CHECK(group->child("b") == nullptr);
  group->record_event("start a", false);
  CHECK(group->alive());
  group->record_event("escalate", true);
  CHECK(!group->alive());
  CHECK(group->events() == std::vector<std::string>{"start a", "escalate"});
}
