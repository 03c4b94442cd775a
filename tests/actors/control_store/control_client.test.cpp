#include <doctest/doctest.h>

#include <caf/all.hpp>
#include <caf/test/dsl.hpp>

#include <string>
#include <vector>

#include "actors/control_store/control_client.hpp"

using namespace std::chrono_literals;
using namespace swarm::actors;
namespace wire_msg = swarm::wire_msg;

namespace {

// What the client sent and published, outliving the actor system.
struct client_parts {
  std::vector<std::pair<std::string, wire_msg::message>> sent;
  std::vector<wire_msg::job_info> rows;
  uint64_t now_ms = 1000;
};

// Steps the client on the test coordinator; replies land in the fixture's `self`.
struct fixture : client_parts, test_coordinator_fixture<> {
  control_client_actor c;

  fixture() {
    control_client_config cc;
    cc.node = "worker-1";
    cc.pid = 42;
    cc.request_timeout = 10s;
    cc.send = [this](const std::string& to, wire_msg::message m) {
      sent.emplace_back(to, std::move(m));
    };
    cc.publish = [this](wire_msg::job_info j) { rows.push_back(std::move(j)); };
    cc.wall_ms = [this] { return now_ms; };
    c = spawn_control_client(sys, std::move(cc), false);
  }

  ~fixture() override {
    caf::anon_send_exit(c, caf::exit_reason::user_shutdown);
    sched.run();
  }

  void ask(const std::string& node, wire_msg::message m) {
    self->send(c, request_atom::value, node, std::move(m));
    sched.run();
  }

  void answer(wire_msg::message m) {
    auto id = *request_id_of(m);
    caf::anon_send(c, answer_atom::value, id, std::move(m));
    sched.run();
  }

  // The reply waiting in `self`'s mailbox: an answer, or the error it got.
  std::variant<std::monostate, wire_msg::message, caf::error> reply() {
    std::variant<std::monostate, wire_msg::message, caf::error> out;
    self->receive([&](wire_msg::message& m) { out = std::move(m); },
                  [&](caf::error& e) { out = std::move(e); },
                  caf::after(std::chrono::seconds(0)) >> [] {});
    return out;
  }

  uint64_t sent_id(size_t i) { return *request_id_of(sent.at(i).second); }
};

wire_msg::actor_location found(uint64_t id, const std::string& node) {
  wire_msg::actor_location l;
  l.request_id = id;
  l.found = true;
  l.node = node;
  return l;
}

} // namespace

TEST_CASE_FIXTURE(fixture, "a request goes out with a fresh id and its answer comes back") {
  ask("head", wire_msg::actor_lookup{0, "ledger"});
  ask("head", wire_msg::actor_lookup{0, "counter"});
  REQUIRE(sent.size() == 2);
  CHECK(sent[0].first == "head");
  CHECK(sent_id(0) != sent_id(1));
  // Answers arrive out of order; each reaches its own request.
  answer(found(sent_id(1), "worker-2"));
  auto r = reply();
  REQUIRE(std::holds_alternative<wire_msg::message>(r));
  CHECK(std::get<wire_msg::actor_location>(std::get<wire_msg::message>(r)).node == "worker-2");
  answer(found(sent_id(0), "worker-3"));
  r = reply();
  REQUIRE(std::holds_alternative<wire_msg::message>(r));
  CHECK(std::get<wire_msg::actor_location>(std::get<wire_msg::message>(r)).node == "worker-3");
}

TEST_CASE_FIXTURE(fixture, "a request not answered in time fails, and its late answer is dropped") {
  ask("head", wire_msg::kv_request{});
  sched.advance_time(9s);
  sched.run();
  CHECK(std::holds_alternative<std::monostate>(reply()));
  sched.advance_time(1s);
  sched.run();
  auto r = reply();
  REQUIRE(std::holds_alternative<caf::error>(r));
  CHECK(std::get<caf::error>(r) == caf::sec::request_timeout);
  wire_msg::kv_reply late;
  late.request_id = sent_id(0);
  answer(late);
  CHECK(std::holds_alternative<std::monostate>(reply()));
}

TEST_CASE_FIXTURE(fixture, "requests to a node found dead fail at once, and those to "
                           "other nodes still wait for their answers") {
  ask("worker-2", wire_msg::actor_create{});
  ask("head", wire_msg::actor_lookup{0, "ledger"});
  caf::anon_send(c, lost_atom::value, std::string{"worker-2"});
  sched.run();
  auto r = reply();
  REQUIRE(std::holds_alternative<caf::error>(r));
  CHECK(std::get<caf::error>(r) == caf::sec::no_route_to_receiving_node);
  CHECK(std::holds_alternative<std::monostate>(reply()));
  answer(found(sent_id(1), "worker-1"));
  auto a = reply();
  REQUIRE(std::holds_alternative<wire_msg::message>(a));
  CHECK(std::get<wire_msg::actor_location>(std::get<wire_msg::message>(a)).node ==
        "worker-1");
}

TEST_CASE_FIXTURE(fixture, "an answer to no request is dropped") {
  answer(found(77, "worker-2"));
  CHECK(std::holds_alternative<std::monostate>(reply()));
  CHECK(sent.empty());
}

TEST_CASE_FIXTURE(fixture, "a message that cannot carry a request id is refused") {
  ask("head", wire_msg::heartbeat{});
  auto r = reply();
  REQUIRE(std::holds_alternative<caf::error>(r));
  CHECK(std::get<caf::error>(r) == caf::sec::unexpected_message);
  CHECK(sent.empty());
}

TEST_CASE_FIXTURE(fixture, "stopping the client answers every request in flight") {
  ask("head", wire_msg::actor_lookup{0, "ledger"});
  caf::anon_send_exit(c, caf::exit_reason::user_shutdown);
  sched.run();
  auto r = reply();
  REQUIRE(std::holds_alternative<caf::error>(r));
  CHECK(std::get<caf::error>(r) == caf::sec::request_receiver_down);
}

TEST_CASE_FIXTURE(fixture, "a job's row keeps its start time when it ends") {
  caf::anon_send(c, job_atom::value, uint64_t{7}, true);
  sched.run();
  now_ms = 5000;
  caf::anon_send(c, job_atom::value, uint64_t{7}, false);
  sched.run();
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].running);
  CHECK(rows[0].driver == "worker-1");
  CHECK(rows[0].pid == 42);
  CHECK(rows[1].started_ms == 1000);
  CHECK(rows[1].ended_ms == 5000);
  CHECK_FALSE(rows[1].running);
}
