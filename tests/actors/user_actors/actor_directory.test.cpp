#include <doctest/doctest.h>

#include <caf/all.hpp>
#include <caf/test/dsl.hpp>

#include <memory>
#include <string>
#include <vector>

#include "actors/user_actors/actor_directory.hpp"

using namespace swarm::actors;
namespace wire_msg = swarm::wire_msg;
namespace detail = swarm::detail;

namespace {

// What the directory asked of its node, in order, outliving the actor system.
struct directory_parts {
  std::vector<std::string> events;
  hosted_table hosted;
};

// A record of an actor of type "counter" at `node` as `id`; `owned`: this node created
// it, with `restarts` restarts.
std::shared_ptr<remote_actor_record> record(const std::string& node, uint64_t id, bool owned,
                                            uint32_t restarts = 0) {
  detail::actor_spec spec;
  spec.type_name = "counter";
  spec.options.max_restarts = restarts;
  std::optional<wire_msg::actor_create> created;
  if (owned) created = wire_msg::actor_create{};
  return std::make_shared<remote_actor_record>(std::move(spec), node, id, std::move(created));
}

struct fixture : directory_parts, test_coordinator_fixture<> {
  actor_directory_actor d;
  std::vector<std::vector<uint8_t>> restarted_with;
  std::vector<wire_msg::actor_location> locations;

  fixture() {
    actor_directory_config dc;
    dc.node = "head";
    // As the node's restart does: it takes the state.
    dc.restart = [this](std::shared_ptr<remote_actor_record> r) {
      events.push_back("restart " + std::to_string(r->id()));
      if (r->owned()) restarted_with.push_back(r->recreate().checkpoint);
    };
    dc.then_lost = [this](const std::string& peer, const std::string&) {
      events.push_back("then_lost " + peer);
    };
    dc.kill = [this](detail::actor_record_ptr r) {
      events.push_back("kill " + r->spec().type_name);
    };
    dc.send = [this](const std::string& peer, wire_msg::message m) {
      if (auto* l = std::get_if<wire_msg::actor_location>(&m)) locations.push_back(*l);
      if (auto* t = std::get_if<wire_msg::actor_checkpoint_taken>(&m))
        events.push_back("taken " + peer + " " + std::to_string(t->seq) + " " +
                         (t->taken ? "yes" : "no"));
    };
    dc.vouched = [this](const std::string& peer, wire_msg::task_result m) {
      bool refused = std::holds_alternative<wire_msg::error_value>(m.outcome);
      events.push_back("answer " + peer + " " + std::to_string(m.actor_id) +
                       (refused ? " refused" : " counts") +
                       (m.state.empty() && m.state_seq == 0 ? "" : " with its state"));
    };
    dc.hosted = &hosted;
    d = spawn_actor_directory(sys, std::move(dc), false);
  }

  ~fixture() override {
    caf::anon_send_exit(d, caf::exit_reason::user_shutdown);
    sched.run();
  }

  template <class... Ts>
  void tell(Ts&&... xs) {
    caf::anon_send(d, std::forward<Ts>(xs)...);
    sched.run();
  }

  uint64_t kept() {
    uint64_t n = 0;
    self->send(d, count_atom::value);
    sched.run();
    self->receive([&](uint64_t x) { n = x; }, caf::after(std::chrono::seconds(0)) >> [] {});
    return n;
  }
};

} // namespace

TEST_CASE_FIXTURE(fixture, "an actor this node created restarts when its node is lost, before the rest fails over") {
  auto mine = record("w1", 1, true, 1);
  auto elsewhere = record("w2", 2, true, 1);
  tell(track_atom::value, mine);
  tell(track_atom::value, elsewhere);
  tell(lost_atom::value, std::string{"w1"}, std::string{"killed"});
  CHECK(events == std::vector<std::string>{"restart 1", "then_lost w1"});
  CHECK(mine->restarting());
  CHECK_FALSE(elsewhere->restarting());
}

TEST_CASE_FIXTURE(fixture, "an actor whose restarts are used up dies with its node and says why") {
  auto r = record("w1", 1, true, 0);
  tell(track_atom::value, r);
  tell(lost_atom::value, std::string{"w1"}, std::string{"killed"});
  CHECK(r->dead());
  CHECK(r->death_reason().find("restarts used up (max_restarts = 0)") != std::string::npos);
  CHECK(events == std::vector<std::string>{"then_lost w1"});
}

TEST_CASE_FIXTURE(fixture, "an actor another node created dies with its node here, and is not restarted here") {
  auto r = record("w1", 1, false, 3);
  tell(track_atom::value, r);
  tell(lost_atom::value, std::string{"w1"}, std::string{"killed"});
  CHECK(r->dead());
  CHECK(r->death_reason().find("died with its node 'w1': killed") != std::string::npos);
}

TEST_CASE_FIXTURE(fixture, "a checkpoint reaches the record of the actor that saved it") {
  auto a = record("w1", 1, true, 1);
  auto b = record("w1", 2, true, 1);
  tell(track_atom::value, a);
  tell(track_atom::value, b);
  tell(checkpoint_atom::value, std::string{"w1"}, wire_msg::actor_checkpoint{2, {7, 7}});
  CHECK(b->checkpoint() == std::vector<uint8_t>{7, 7});
  CHECK(a->checkpoint().empty());
  // From another node under the same id: not this actor.
  tell(checkpoint_atom::value, std::string{"w2"}, wire_msg::actor_checkpoint{1, {9}});
  CHECK(a->checkpoint().empty());
}

TEST_CASE_FIXTURE(fixture, "a checkpoint older than the one kept is not kept, a replaced "
                           "instance's is refused, and each that asks is answered") {
  auto a = record("w1", 1, true, 1);
  tell(track_atom::value, a);
  tell(checkpoint_atom::value, std::string{"w1"},
       wire_msg::actor_checkpoint{1, {2}, 2, false});
  // Number 1, overtaken by number 2 (or sent again): taken, but 2 stays.
  tell(checkpoint_atom::value, std::string{"w1"},
       wire_msg::actor_checkpoint{1, {1}, 1, true});
  CHECK(a->checkpoint() == std::vector<uint8_t>{2});
  CHECK(events == std::vector<std::string>{"taken w1 1 yes"});
  // Lost with its node: its restart took the state, and the old instance's states are
  // refused.
  tell(lost_atom::value, std::string{"w1"}, std::string{"no heartbeat"});
  tell(checkpoint_atom::value, std::string{"w1"},
       wire_msg::actor_checkpoint{1, {3}, 3, true});
  CHECK(a->checkpoint() == std::vector<uint8_t>{2});
  CHECK(events.back() == "taken w1 3 no");
  // Restarted on w2: its new instance numbers its states from 1 again.
  a->relocate("w2", 4);
  tell(checkpoint_atom::value, std::string{"w2"},
       wire_msg::actor_checkpoint{4, {4}, 1, true});
  CHECK(a->checkpoint() == std::vector<uint8_t>{4});
  CHECK(events.back() == "taken w2 1 yes");
}

TEST_CASE_FIXTURE(fixture, "records go with their last handle") {
  auto kept_one = record("w1", 1, false);
  for (uint64_t i = 0; i < 200; ++i)
    tell(track_atom::value, record("w1", 100 + i, false));
  tell(track_atom::value, kept_one);
  CHECK(kept() == 1);
}

TEST_CASE_FIXTURE(fixture, "an actor hosted for other nodes is found by its id once hosting is answered") {
  auto a = record("here", 0, false);
  auto b = record("here", 0, false);
  self->send(d, host_atom::value, uint64_t{5}, detail::actor_record_ptr{a});
  self->send(d, host_atom::value, uint64_t{69}, detail::actor_record_ptr{b}); // same shard
  sched.run();
  bool answered = false;
  self->receive([&](bool ok) { answered = ok; }, caf::after(std::chrono::seconds(0)) >> [] {});
  CHECK(answered);
  CHECK(hosted.find(5) == a);
  CHECK(hosted.find(69) == b);
  CHECK_FALSE(hosted.find(6));
  CHECK(hosted.id_of(b.get()) == 69);
}

TEST_CASE_FIXTURE(fixture, "an owner's kill stops the hosted actor and forgets it") {
  auto a = record("here", 0, false);
  tell(host_atom::value, uint64_t{5}, detail::actor_record_ptr{a});
  tell(unhost_atom::value, uint64_t{5});
  CHECK(events == std::vector<std::string>{"kill counter"});
  CHECK_FALSE(hosted.find(5));
  tell(unhost_atom::value, uint64_t{5}); // twice: nothing more
  CHECK(events.size() == 1);
}

TEST_CASE_FIXTURE(fixture, "an actor killed here is no longer hosted") {
  auto a = record("here", 0, false);
  tell(host_atom::value, uint64_t{8}, detail::actor_record_ptr{a});
  tell(unhost_atom::value, detail::actor_record_ptr{a});
  CHECK_FALSE(hosted.find(8));
  CHECK(events.empty()); // the caller stops it itself
}

TEST_CASE_FIXTURE(fixture,
                  "a state that arrives after a call began its actor's restart, "
                  "before the restart took the state, is the one it restarts from") {
  auto a = record("w1", 1, true, 1);
  tell(track_atom::value, a);
  tell(checkpoint_atom::value, std::string{"w1"},
       wire_msg::actor_checkpoint{1, {2}, 2, true});
  // A call found w1 unreachable: the owner began the restart and asks for it here, behind
  // the last state w1 sent before its connection broke.
  REQUIRE(a->recover("w1", 1) == remote_actor_record::recovery::restarting);
  caf::anon_send(d, checkpoint_atom::value, std::string{"w1"},
                 wire_msg::actor_checkpoint{1, {3}, 3, true});
  caf::anon_send(d, restart_atom::value, a);
  sched.run();
  CHECK(restarted_with == std::vector<std::vector<uint8_t>>{{3}});
  CHECK(events ==
        std::vector<std::string>{"taken w1 2 yes", "taken w1 3 yes", "restart 1"});
  // Taken: what the old instance sends later is refused.
  tell(checkpoint_atom::value, std::string{"w1"},
       wire_msg::actor_checkpoint{1, {4}, 4, true});
  CHECK(a->checkpoint() == std::vector<uint8_t>{3});
  CHECK(events.back() == "taken w1 4 no");
}

// The answer to a call from instance `id`, carrying the state numbered `seq`.
wire_msg::task_result answer_with_state(uint64_t id, uint64_t seq, uint8_t state) {
  wire_msg::task_result r;
  r.actor_id = id;
  r.state_seq = seq;
  r.state = {state};
  return r;
}

TEST_CASE_FIXTURE(fixture, "an answer carrying its actor's state counts once the "
                           "creator's record keeps the state, or the restart took it, "
                           "and is refused when the restart resumed without it") {
  auto a = record("w1", 1, true, 1);
  tell(track_atom::value, a);
  tell(checkpoint_atom::value, std::string{"w1"}, answer_with_state(1, 1, 5));
  CHECK(a->checkpoint() == std::vector<uint8_t>{5});
  CHECK(events.back() == "answer w1 1 counts");
  // Lost with its node: the restart took state 1. The old instance's answers with
  // state 1 (or older) count, as the restarted actor has their effect; a later one's
  // does not, and its call runs again where the actor is.
  tell(lost_atom::value, std::string{"w1"}, std::string{"no heartbeat"});
  REQUIRE(restarted_with == std::vector<std::vector<uint8_t>>{{5}});
  tell(checkpoint_atom::value, std::string{"w1"}, answer_with_state(1, 2, 6));
  CHECK(events.back() == "answer w1 1 refused");
  tell(checkpoint_atom::value, std::string{"w1"}, answer_with_state(1, 1, 5));
  CHECK(events.back() == "answer w1 1 counts");
  a->relocate("w2", 4);
  tell(checkpoint_atom::value, std::string{"w1"}, answer_with_state(1, 2, 6));
  CHECK(events.back() == "answer w1 1 refused");
  CHECK(a->checkpoint() == std::vector<uint8_t>{5});
  // The new instance numbers its states from 1 again.
  tell(checkpoint_atom::value, std::string{"w2"}, answer_with_state(4, 1, 7));
  CHECK(events.back() == "answer w2 4 counts");
  CHECK(a->checkpoint() == std::vector<uint8_t>{7});
  // An actor no record here restarts: the answer counts as it is.
  tell(checkpoint_atom::value, std::string{"w3"}, answer_with_state(9, 1, 8));
  CHECK(events.back() == "answer w3 9 counts");
}

TEST_CASE_FIXTURE(fixture,
                  "the owner tells a handle that lost its connection to an actor "
                  "where the actor is, the same place included, and nothing while "
                  "it restarts") {
  auto a = record("w2", 7, true, 1);
  tell(track_atom::value, a);
  auto ask = [&](const std::string& node, uint64_t id) {
    locations.clear();
    tell(lookup_atom::value, std::string{"w1"}, uint64_t{5}, node, id);
    REQUIRE(locations.size() == 1);
    CHECK(locations[0].request_id == 5);
    return locations[0];
  };
  // Still where the handle lost it (only a connection closed, say): it is there. Before,
  // the owner answered nothing found, and the handle waited for a restart that never
  // came, then failed with actor_died.
  auto here = ask("w2", 7);
  CHECK(here.found);
  CHECK(here.node == "w2");
  CHECK(here.actor_id == 7);
  // Restarting: not found yet, and no error (the handle looks again).
  tell(lost_atom::value, std::string{"w2"}, std::string{"killed"});
  REQUIRE(a->restarting());
  auto waiting = ask("w2", 7);
  CHECK_FALSE(waiting.found);
  CHECK(waiting.error.empty());
  // Restarted elsewhere: where it is now, asked by where it was.
  (void)a->relocate("w3", 9);
  auto moved = ask("w2", 7);
  CHECK(moved.found);
  CHECK(moved.node == "w3");
  CHECK(moved.actor_id == 9);
  // An id it never had: an error that says so.
  auto never = ask("w2", 8);
  CHECK_FALSE(never.found);
  CHECK(never.error.find("created no actor that was 8 on node 'w2'") !=
        std::string::npos);
}

TEST_CASE("bringing back a lost actor tells a restart or follow under way, and an actor "
          "living elsewhere since, from one that nothing can bring back") {
  using recovery = remote_actor_record::recovery;
  detail::actor_spec spec;
  spec.type_name = "account";
  spec.options.name = "alice";
  auto found = std::make_shared<remote_actor_record>(spec, "w1", 1);
  // Found by name: it follows, once; the directory, hearing of the same loss on its own
  // thread, is told the follow is under way (not "none": that would mark it dead).
  CHECK(found->recover("w1", 1) == recovery::following);
  CHECK(found->recover("w1", 0) == recovery::under_way);
  found->relocate("w2", 4);
  CHECK(found->recover("w1", 1) == recovery::elsewhere);
  // Lost on the same node as a later instance than the one a call was sent to.
  CHECK(found->recover("w2", 3) == recovery::elsewhere);

  auto mine = record("w1", 1, true, 1);
  uint32_t used = 9;
  CHECK(mine->recover("w1", 1, &used) == recovery::restarting);
  CHECK(used == 0);
  mine->relocate("w2", 2);
  CHECK(mine->recover("w2", 2) == recovery::none); // its one restart is used
  CHECK_FALSE(mine->restarting());
  // Marked moving off a node that stops: a move, which uses no restart.
  REQUIRE(mine->mark_moving("w2", 2));
  CHECK(mine->recover("w2", 2) == recovery::moving);

  CHECK(record("w1", 1, false)->recover("w1", 1) == recovery::none); // no name, no owner
}
