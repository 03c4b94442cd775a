// The routing table of the wire messages a node receives.

#include <doctest/doctest.h>

#include <caf/all.hpp>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "actors/common/wire_routes.hpp"

using namespace swarm;
using namespace swarm::actors;

namespace {

using test_atom = caf::atom_constant<caf::atom("test")>;

struct fixture {
  std::vector<std::function<void()>> posted;
  wire_routes routes{[this](std::function<void()> f) { posted.push_back(std::move(f)); }};
};

template <class T> size_t index_of() {
  return wire_msg::message{T{}}.index();
}

} // namespace

TEST_CASE("a wire message goes by its route: into an actor's mailbox, in place, or to "
          "the node's agent") {
  fixture f;
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  caf::actor to = self;
  f.routes.mailbox<wire_msg::object_free>(
      to, [](const std::string& peer, wire_msg::object_free&& m) {
        return std::make_tuple(test_atom::value, peer, m.id.seq);
      });
  std::string in_place;
  f.routes.in_place<wire_msg::stop_request>(
      [&](const std::string& peer, wire_msg::stop_request&& m) {
        in_place = peer + ": " + m.reason;
      });
  std::string posted;
  f.routes.posted<wire_msg::task_output>(
      [&](const std::string& peer, wire_msg::task_output&& m) {
        posted = peer + ": " + m.text;
      });

  CHECK(f.routes.route_of(index_of<wire_msg::object_free>()) == delivery::mailbox);
  CHECK(f.routes.route_of(index_of<wire_msg::stop_request>()) == delivery::in_place);
  CHECK(f.routes.route_of(index_of<wire_msg::task_output>()) == delivery::posted);

  REQUIRE(f.routes.deliver("w1", wire_msg::object_free{{3, 7}}));
  bool received = false;
  self->receive(
      [&](test_atom, const std::string& peer, uint64_t seq) {
        received = true;
        CHECK(peer == "w1");
        CHECK(seq == 7);
      },
      caf::after(std::chrono::seconds(5)) >> [] {});
  CHECK(received);

  REQUIRE(f.routes.deliver("w2", wire_msg::stop_request{"", "asked"}));
  CHECK(in_place == "w2: asked");

  REQUIRE(f.routes.deliver("w3", wire_msg::task_output{"train", "w3", "epoch 1"}));
  CHECK(posted.empty()); // not on the reading thread: on the agent, once it runs
  REQUIRE(f.posted.size() == 1);
  f.posted[0]();
  CHECK(posted == "w3: epoch 1");
}

TEST_CASE("a kind routed twice is refused, naming it, one not routed is not delivered") {
  fixture f;
  f.routes.in_place<wire_msg::task_submit>(
      [](const std::string&, wire_msg::task_submit&&) {});
  CHECK_THROWS_WITH_AS(
      f.routes.posted<wire_msg::task_submit>(
          [](const std::string&, wire_msg::task_submit&&) {}),
      "wire message 'task_submit' is routed twice (in place, then posted)",
      std::logic_error);
  CHECK(f.routes.route_of(index_of<wire_msg::heartbeat>()) == delivery::none);
  CHECK_FALSE(f.routes.deliver("w1", wire_msg::heartbeat{}));
  CHECK(f.posted.empty());
}
