#include <doctest/doctest.h>

// Before CAF's test DSL, whose `allow` macro would rewrite restart_window::allow.
#include "actors/ownership/owner.hpp"

#include <caf/all.hpp>
#include <caf/test/dsl.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "actors/user_actors/remote_actor_record.hpp"
#include "framework/detail/wire_convert.hpp"

using namespace std::chrono_literals;
using namespace swarm::actors;
namespace detail = swarm::detail;
namespace wire_msg = swarm::wire_msg;
using swarm::errc;

namespace {

using clock_type = std::chrono::steady_clock;

// What the owner asked of its node, outliving the actor system.
struct owner_parts {
  std::vector<std::pair<std::string, wire_msg::message>> sent;
  std::vector<std::vector<object_key>> released;
  std::vector<detail::task_ptr> resubmitted;
  std::vector<detail::task_ptr> rerouted;
  std::vector<std::shared_ptr<remote_actor_record>> restarted;
  std::vector<std::pair<detail::task_ptr, wire_msg::stored_at>> pulled;
  std::vector<std::string> logged;
  clock_type::time_point now{std::chrono::hours(1)};
  std::set<std::string> alive_nodes{"head", "w1", "w2", "w3"};
  // The life of each node the view shows (when its process started); 0: not known.
  std::map<std::string, uint64_t> incarnations;
};

// A task named `name` whose result is object (1, seq), returning a std::string.
detail::task_ptr task(const std::string& name, uint64_t seq, uint32_t max_retries = 0) {
  auto t = std::make_shared<detail::task_spec>();
  t->name = name;
  t->result_type = &detail::type_of<std::string>();
  t->options.max_retries = max_retries;
  t->result = std::make_shared<detail::object_slot>(swarm::object_id{1, seq});
  return t;
}

// A call of method "add" of an actor at `node` this node created, with `restarts` and
// `call_retries` (max_task_retries).
std::pair<detail::task_ptr, std::shared_ptr<remote_actor_record>>
actor_call(uint64_t seq, const std::string& node, uint32_t restarts = 0,
           uint32_t call_retries = 0) {
  detail::actor_spec spec;
  spec.type_name = "counter";
  spec.options.max_restarts = restarts;
  spec.options.max_task_retries = call_retries;
  auto rec = std::make_shared<remote_actor_record>(std::move(spec), node, 7,
                                                   wire_msg::actor_create{});
  auto t = task("counter", seq);
  t->method = "add";
  return {t, rec};
}

wire_msg::task_result answer(const detail::task_ptr& t, const std::string& s) {
  auto v = detail::boxed_value::make(s);
  return {detail::to_wire(t->result->id()),
          wire_msg::value{v.type->name, detail::encode(v)}};
}

wire_msg::task_result failure(const detail::task_ptr& t, errc code,
                              const std::string& why) {
  return {detail::to_wire(t->result->id()), detail::to_wire(swarm::error{code, why})};
}

std::string value_of(const detail::task_ptr& t) {
  auto v = t->result->read();
  REQUIRE(v);
  return *static_cast<const std::string*>(v->ptr.get());
}

swarm::error error_of(const detail::task_ptr& t) {
  REQUIRE(t->result->done());
  auto v = t->result->read();
  REQUIRE(!v);
  return v.err();
}

owner_config config(owner_parts& parts) {
  owner_config c;
  c.node = "head";
  c.intensity = {2, std::chrono::seconds(60)};
  c.send = [&parts](const std::string& to, wire_msg::message m) {
    parts.sent.emplace_back(to, std::move(m));
  };
  c.release = [&parts](std::vector<object_key> k) {
    parts.released.push_back(std::move(k));
  };
  c.resubmit = [&parts](detail::task_ptr t) {
    parts.resubmitted.push_back(std::move(t));
  };
  c.call = [&parts](std::shared_ptr<remote_actor_record>, detail::task_ptr t) {
    parts.rerouted.push_back(std::move(t));
  };
  c.restart = [&parts](std::shared_ptr<remote_actor_record> r) {
    parts.restarted.push_back(std::move(r));
  };
  c.pull = [&parts](detail::task_ptr t, wire_msg::stored_at where) {
    parts.pulled.emplace_back(std::move(t), std::move(where));
  };
  c.log = swarm::node_log{"test", swarm::log_level::info,
                          [&parts](swarm::log_level, const std::string& line) {
                            parts.logged.push_back(line);
                          }};
  c.now = [&parts] { return parts.now; };
  c.alive = [&parts](const std::string& n) { return parts.alive_nodes.count(n) > 0; };
  c.incarnation = [&parts](const std::string& n) {
    auto i = parts.incarnations.find(n);
    return i != parts.incarnations.end() ? i->second : uint64_t{0};
  };
  return c;
}

// Steps the owner on the test coordinator.
struct fixture : owner_parts, test_coordinator_fixture<> {
  owner_actor o;

  fixture() { o = spawn_owner(sys, config(*this)); }

  ~fixture() override {
    caf::anon_send_exit(o, caf::exit_reason::user_shutdown);
    sched.run();
  }

  template <class... Ts> void tell(Ts&&... xs) {
    caf::anon_send(o, std::forward<Ts>(xs)...);
    sched.run();
  }

  void track(const detail::task_ptr& t, const std::string& node,
             std::shared_ptr<remote_actor_record> actor = nullptr) {
    wire_msg::task_submit m;
    m.function = t->name;
    m.result = detail::to_wire(t->result->id());
    tell(track_atom::value,
         pending_call{t, node, {{9, t->result->id().seq}}, std::move(actor)}, node,
         wire_msg::message{std::move(m)});
  }

  void result(const std::string& from, wire_msg::task_result r) {
    tell(result_atom::value, from, std::move(r));
  }

  uint64_t children() {
    uint64_t n = 0;
    self->send(o, count_atom::value);
    sched.run();
    self->receive([&](uint64_t x) { n = x; },
                  caf::after(std::chrono::seconds(0)) >> [] {});
    return n;
  }
};

} // namespace

TEST_CASE_FIXTURE(
    fixture, "the owner sends a task and the result from its node completes the future") {
  auto t = task("f", 1);
  track(t, "w1");
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].first == "w1");
  CHECK(std::holds_alternative<wire_msg::task_submit>(sent[0].second));
  CHECK(children() == 1);
  result("w1", answer(t, "done"));
  CHECK(value_of(t) == "done");
  CHECK(children() == 0);
  REQUIRE(released.size() == 1); // its exported argument goes with the result
  CHECK(released[0] == std::vector<object_key>{{9, 1}});
}

TEST_CASE_FIXTURE(fixture, "a task lost with its node runs again while its retries last, "
                           "then fails naming the node") {
  auto t = task("f", 1, 1);
  track(t, "w1");
  tell(lost_atom::value, std::string{"w1"}, std::string{"connection reset"});
  REQUIRE(resubmitted.size() == 1);
  CHECK(resubmitted[0] == t);
  CHECK(t->attempts == 1);
  // The head places the run again elsewhere when it can (`task_submit::avoid`).
  CHECK(t->lost_on == std::vector<std::string>{"w1"});
  CHECK(!t->result->done());
  CHECK(children() == 0); // the resubmitted run registers anew
  track(t, "w2");
  tell(lost_atom::value, std::string{"w2"}, std::string{"no heartbeat"});
  CHECK(resubmitted.size() == 1);
  auto e = error_of(t);
  CHECK(e.code == errc::worker_died);
  CHECK(e.message.find("node 'w2'") != std::string::npos);
  CHECK(e.message.find("no heartbeat") != std::string::npos);
  CHECK(e.message.find("after 2 attempt(s)") != std::string::npos);
}

TEST_CASE_FIXTURE(fixture, "a task the head placed on a worker follows it there: the "
                           "worker's loss runs it again, even one seen before the news") {
  auto t = task("f", 1, 2);
  track(t, "head");
  auto placed = [&](const detail::task_ptr& x, const std::string& node) {
    tell(placed_atom::value, std::string{"head"},
         wire_msg::task_placed{detail::to_wire(x->result->id()), node});
  };
  placed(t, "w1");
  tell(lost_atom::value, std::string{"head"}, std::string{"unrelated"}); // not there now
  CHECK(resubmitted.empty());
  tell(lost_atom::value, std::string{"w1"}, std::string{"killed"});
  REQUIRE(resubmitted.size() == 1);
  CHECK(resubmitted[0] == t);
  // Its second run: w2's loss came before the head said it placed it there, and this
  // node's view does not show it yet (the head judges).
  tell(lost_atom::value, std::string{"w2"}, std::string{"killed"});
  track(t, "head");
  placed(t, "w2");
  REQUIRE(resubmitted.size() == 2);
  CHECK(t->attempts == 2);
  // A third, placed where the view shows the node dead: no retry is left, so it fails
  // naming the node.
  alive_nodes.erase("w3");
  track(t, "head");
  placed(t, "w3");
  auto e = error_of(t);
  CHECK(e.code == errc::worker_died);
  CHECK(e.message.find("node 'w3', where the head placed it, was lost") !=
        std::string::npos);
}

TEST_CASE_FIXTURE(fixture,
                  "a task the head placed on a later life of a node this one saw "
                  "lost runs there, and one placed on the lost life runs again") {
  auto placed = [&](const detail::task_ptr& x, const std::string& node, uint64_t life) {
    tell(placed_atom::value, std::string{"head"},
         wire_msg::task_placed{detail::to_wire(x->result->id()), node, life});
  };
  incarnations["w1"] = 100;
  tell(lost_atom::value, std::string{"w1"}, std::string{"killed"});
  // w1 started again (life 200), and this view shows it: the head's placement there
  // stands, within the 30 s a loss of unknown life would rerun for.
  incarnations["w1"] = 200;
  auto later = task("f", 1, 2);
  track(later, "head");
  placed(later, "w1", 200);
  CHECK(resubmitted.empty());
  CHECK(children() == 1);
  // The head's news of a placement on the life that died runs it again at once.
  auto stale = task("g", 2, 2);
  track(stale, "head");
  placed(stale, "w1", 100);
  REQUIRE(resubmitted.size() == 1);
  CHECK(resubmitted[0] == stale);
  // A later life this view does not show alive yet: judged as before, by the time since
  // the loss.
  incarnations["w2"] = 100;
  tell(lost_atom::value, std::string{"w2"}, std::string{"killed"});
  alive_nodes.erase("w2");
  auto unseen = task("h", 3, 2);
  track(unseen, "head");
  placed(unseen, "w2", 300);
  CHECK(resubmitted.size() == 2);
  // The later life's own loss runs what was placed on it again.
  tell(lost_atom::value, std::string{"w1"}, std::string{"killed again"});
  REQUIRE(resubmitted.size() == 3);
  CHECK(resubmitted[2] == later);
}

TEST_CASE_FIXTURE(fixture,
                  "a task pinned to a lost node and an actor call on it fail at once") {
  auto pinned = task("f", 1, 3);
  pinned->options.node = "w1";
  track(pinned, "w1");
  auto [call, rec] = actor_call(2, "w1");
  track(call, "w1", rec);
  auto other = task("g", 3, 3);
  track(other, "w2");
  tell(lost_atom::value, std::string{"w1"}, std::string{"killed"});
  CHECK(resubmitted.empty());
  CHECK(error_of(pinned).code == errc::worker_died);
  CHECK(error_of(call).code == errc::actor_died);
  CHECK(!other->result->done());
  CHECK(children() == 1);
}

TEST_CASE_FIXTURE(
    fixture, "a late result from a thawed node completes a task but not an actor call") {
  auto t = task("f", 1, 2);
  track(t, "w1");
  tell(lost_atom::value, std::string{"w1"}, std::string{"no heartbeat"});
  track(t, "w2"); // the retry
  result("w1",
         answer(t, "from the thawed node")); // a task's answer is good from anywhere
  CHECK(value_of(t) == "from the thawed node");
  result("w2", answer(t, "from the retry")); // nobody waits for it any more
  CHECK(value_of(t) == "from the thawed node");

  // The actor was restarted on w2; its old instance on w1 answers late.
  auto [call, rec] = actor_call(2, "w2");
  track(call, "w2", rec);
  result("w1", answer(call, "stale state"));
  CHECK(!call->result->done());
  result("w2", answer(call, "restarted state"));
  CHECK(value_of(call) == "restarted state");
}

TEST_CASE_FIXTURE(fixture, "an actor call's answer counts only from the instance it was "
                           "sent to, though an earlier one lived on the same node") {
  // The actor was restarted on w1 itself (its new life) as instance 8; instance 7, of
  // the life the head found dead, answers late.
  auto [call, rec] = actor_call(1, "w1");
  pending_call to_8{call, "w1", {}, rec};
  to_8.actor_id = 8;
  wire_msg::actor_call m;
  m.actor_id = 8;
  tell(track_atom::value, std::move(to_8), std::string{"w1"}, wire_msg::message{m});
  auto stale = answer(call, "stale state");
  stale.actor_id = 7;
  result("w1", stale);
  CHECK(!call->result->done());
  auto fresh = answer(call, "restarted state");
  fresh.actor_id = 8;
  result("w1", fresh);
  CHECK(value_of(call) == "restarted state");
}

TEST_CASE_FIXTURE(fixture, "a result stored on its node is pulled, and one lost there "
                           "makes its task run again") {
  auto t = task("f", 1, 1);
  track(t, "w1");
  result("w1", {detail::to_wire(t->result->id()), wire_msg::stored_at{"w1", 1 << 20}});
  REQUIRE(pulled.size() == 1);
  CHECK(pulled[0].first == t);
  CHECK(pulled[0].second.node == "w1");
  CHECK(children() == 0);
  swarm::error lost{errc::object_lost, "node 'w1' died holding it"};
  tell(retry_atom::value, t, std::string{"reconstructing its result"}, lost);
  REQUIRE(resubmitted.size() == 1); // lineage: the task that made it runs again
  tell(retry_atom::value, t, std::string{"reconstructing its result"}, lost);
  CHECK(error_of(t).code == errc::object_lost); // retries used up: the pull's error
}

TEST_CASE_FIXTURE(fixture, "an error from the node is the future's error unless it says "
                           "the input or node was lost") {
  auto bad = task("f", 1, 3);
  track(bad, "w1");
  result("w1", failure(bad, errc::application_error, "boom"));
  CHECK(error_of(bad).message == "boom");
  auto unlucky = task("g", 2, 3);
  track(unlucky, "w1");
  result("w1", failure(unlucky, errc::object_lost, "its input died with w2"));
  CHECK(resubmitted.size() == 1);
  CHECK(!unlucky->result->done());
}

TEST_CASE_FIXTURE(
    fixture, "a call that cannot reach its actor's node waits for the actor's restart") {
  auto [call, rec] = actor_call(1, "w1", 1);
  track(call, "w1", rec);
  result("", failure(call, errc::node_unreachable, "cannot reach node 'w1'"));
  REQUIRE(restarted.size() == 1);
  CHECK(restarted[0] == rec);
  CHECK(rec->restarting());
  CHECK(!call->result->done()); // held for the restarted actor
  // A second call finds the restart under way and is held as well.
  auto [second, unused] = actor_call(2, "w1");
  track(second, "w1", rec);
  result("", failure(second, errc::node_unreachable, "cannot reach node 'w1'"));
  CHECK(restarted.size() == 1);
  CHECK(!second->result->done());
}

TEST_CASE_FIXTURE(fixture, "a call through a handle found by name, lost with its node "
                           "before the handle's directory saw the loss, waits while the "
                           "handle follows its actor") {
  // The directory follows a handle's actor when the node's loss reaches it, and may
  // follow it back to where it was (the head had not found the node dead yet) before
  // the loss reaches the owner: the record shows the instance the call went to.
  detail::actor_spec spec;
  spec.type_name = "counter";
  spec.options.name = "bank";
  spec.options.max_task_retries = 1;
  auto rec = std::make_shared<remote_actor_record>(std::move(spec), "w1", 7);
  auto call = task("counter", 1);
  call->method = "add";
  pending_call to_7{call, "w1", {}, rec};
  to_7.actor_id = 7;
  tell(track_atom::value, std::move(to_7), std::string{"w1"},
       wire_msg::message{wire_msg::actor_call{}});
  tell(lost_atom::value, std::string{"w1"}, std::string{"connection reset"});
  CHECK(!call->result->done());
  CHECK(rec->restarting());
  REQUIRE(restarted.size() == 1);
  CHECK(restarted[0] == rec);
  // Where the lookup finds it, the held call goes.
  auto held = rec->relocate("w2", 3);
  REQUIRE(held.size() == 1);
  CHECK(held[0] == call);
  CHECK(call->attempts == 1);
}

TEST_CASE_FIXTURE(fixture, "a call lost with an instance its actor was restarted from, "
                           "on the same node, goes to the new instance") {
  auto [call, rec] = actor_call(1, "w1", 1, 1);
  pending_call to_7{call, "w1", {}, rec};
  to_7.actor_id = 7;
  tell(track_atom::value, std::move(to_7), std::string{"w1"},
       wire_msg::message{wire_msg::actor_call{}});
  // The actor was restarted on w1's new life as instance 8 before the loss of the
  // old life's connection reached the owner.
  REQUIRE(rec->recover("w1", 0) == remote_actor_record::recovery::restarting);
  rec->relocate("w1", 8);
  tell(lost_atom::value, std::string{"w1"}, std::string{"an earlier life"});
  CHECK(!call->result->done());
  REQUIRE(rerouted.size() == 1);
  CHECK(rerouted[0] == call);
  CHECK(restarted.empty());
}

TEST_CASE_FIXTURE(fixture, "past its restart intensity the owner gives up and the "
                           "children of the next loss fail") {
  // Intensity: 2 node losses within 60 s.
  std::vector<detail::task_ptr> ts;
  for (uint64_t i = 1; i <= 4; ++i) {
    ts.push_back(task("f", i, 5));
    track(ts.back(), "w" + std::to_string(i));
  }
  tell(lost_atom::value, std::string{"w1"}, std::string{"gone"});
  now += 10s;
  tell(lost_atom::value, std::string{"w2"}, std::string{"gone"});
  CHECK(resubmitted.size() == 2);
  now += 10s;
  tell(lost_atom::value, std::string{"w3"}, std::string{"gone"});
  CHECK(resubmitted.size() == 2);
  auto e = error_of(ts[2]);
  CHECK(e.code == errc::worker_died);
  CHECK(e.message.find("gave up restarting") != std::string::npos);
  CHECK(e.message.find("more than 2 node losses within 60000 ms") != std::string::npos);
  REQUIRE(!logged.empty());
  // Once the first losses are older than the period, the owner restarts again.
  now += 50s;
  tell(lost_atom::value, std::string{"w4"}, std::string{"gone"});
  CHECK(resubmitted.size() == 3);
  CHECK(!ts[3]->result->done());
}

TEST_CASE_FIXTURE(fixture,
                  "stopping the owner fails every child still out with runtime_stopped") {
  auto a = task("f", 1);
  auto b = task("g", 2);
  track(a, "w1");
  track(b, "w2");
  caf::anon_send_exit(o, caf::exit_reason::user_shutdown);
  sched.run();
  for (auto& t : {a, b}) {
    auto e = error_of(t);
    CHECK(e.code == errc::runtime_stopped);
    CHECK(e.message.find("node 'head' stopped before") != std::string::npos);
  }
  // A result that arrives after the stop is dropped; nothing runs any more.
  caf::anon_send(o, result_atom::value, std::string{"w1"}, answer(a, "late"));
  sched.run();
  CHECK(error_of(a).code == errc::runtime_stopped);
}

TEST_CASE("a message to an idle owner runs on the sending thread, and threads racing "
          "lose none") {
  // Declared before the system, which they outlive.
  owner_parts parts;
  std::atomic<int> inline_runs{0};
  auto me = std::this_thread::get_id();
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto c = config(parts);
  // Sends run wherever the owner runs; count those on this thread.
  c.send = [&](const std::string&, wire_msg::message) {
    if (std::this_thread::get_id() == me) ++inline_runs;
  };
  owner_ref owner{spawn_owner(sys, std::move(c))};
  // Right after spawning, and while a scheduler thread still finishes its last message,
  // the owner is not idle and a message is queued for that thread; the first message
  // after it went idle runs here.
  std::vector<detail::task_ptr> first;
  for (uint64_t i = 1; i <= 2000 && inline_runs.load() == 0; ++i) {
    first.push_back(task("f", i));
    owner.track({first.back(), "w1", {}, nullptr}, "w1", wire_msg::task_submit{});
    owner.result("w1", answer(first.back(), "x"));
    CHECK(first.back()->result->wait_until(clock_type::now() + 10s));
    std::this_thread::yield();
  }
  CHECK(inline_runs.load() > 0);

  // Four threads track and answer 500 tasks each at once.
  std::vector<std::vector<detail::task_ptr>> per_thread(4);
  std::vector<std::thread> threads;
  for (uint64_t n = 0; n < 4; ++n)
    threads.emplace_back([&, n] {
      for (uint64_t i = 0; i < 500; ++i) {
        auto t = task("g", 1000 + n * 1000 + i);
        per_thread[n].push_back(t);
        owner.track({t, "w2", {}, nullptr}, "w2", wire_msg::task_submit{});
        owner.result("w2", answer(t, std::to_string(i)));
      }
    });
  for (auto& th : threads)
    th.join();
  for (auto& ts : per_thread)
    for (size_t i = 0; i < ts.size(); ++i) {
      REQUIRE(ts[i]->result->wait_until(clock_type::now() + 10s));
      CHECK(value_of(ts[i]) == std::to_string(i));
    }
  caf::anon_send_exit(owner.handle(), caf::exit_reason::user_shutdown);
}

TEST_CASE("a latency-critical child goes ahead of the children waiting for the owner") {
  owner_parts parts;
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto c = config(parts);
  std::mutex mtx;
  std::vector<std::string> order; // the children's functions, as sent
  owner_ref* owner_of_test = nullptr;
  std::vector<detail::task_ptr> tasks;
  auto submit = [&](const std::string& fn, uint64_t seq, bool urgent) {
    auto t = task(fn, seq);
    tasks.push_back(t);
    wire_msg::task_submit m;
    m.function = fn;
    m.latency_critical = urgent;
    owner_of_test->track({t, "w1", {}, nullptr}, "w1", std::move(m));
  };
  c.send = [&](const std::string&, wire_msg::message m) {
    std::lock_guard<std::mutex> guard{mtx};
    order.push_back(std::get<wire_msg::task_submit>(m).function);
    if (order.size() > 1) return;
    // While the owner sends the first: three ordinary children wait for it, then a
    // latency-critical one.
    for (uint64_t i = 0; i < 3; ++i)
      submit("flood", 10 + i, false);
    submit("ping", 20, true);
  };
  owner_ref owner{spawn_owner(sys, std::move(c))};
  owner_of_test = &owner;
  submit("first", 1, false);
  auto until = clock_type::now() + 10s;
  while (clock_type::now() < until) {
    {
      std::lock_guard<std::mutex> guard{mtx};
      if (order.size() == 5) break;
    }
    std::this_thread::yield();
  }
  std::lock_guard<std::mutex> guard{mtx};
  CHECK(order == std::vector<std::string>{"first", "ping", "flood", "flood", "flood"});
  caf::anon_send_exit(owner.handle(), caf::exit_reason::user_shutdown);
}

namespace {

// What was sent to `node` of kind `T`.
template <class T> size_t sent_to(const owner_parts& p, const std::string& node) {
  size_t n = 0;
  for (auto& [to, m] : p.sent)
    n += to == node && std::holds_alternative<T>(m);
  return n;
}

} // namespace

TEST_CASE_FIXTURE(fixture, "a task run on two nodes takes the first result, cancels the "
                           "other copy, and frees what that copy stored anyway") {
  auto t = task("f", 1, 3);
  wire_msg::task_submit m;
  m.result = detail::to_wire(t->result->id());
  tell(track_atom::value, pending_call{t, "w1", {}, nullptr, {"w2"}}, std::string{"w1"},
       wire_msg::message{m});
  CHECK(sent_to<wire_msg::task_submit>(*this, "w1") == 1);
  CHECK(sent_to<wire_msg::task_submit>(*this, "w2") == 1);
  result("w2", answer(t, "from w2"));
  CHECK(value_of(t) == "from w2");
  CHECK(sent_to<wire_msg::task_cancel>(*this, "w1") == 1);
  CHECK(children() == 0);
  // The copy on w1 had already run: its stored result is freed there.
  result("w1", {m.result, wire_msg::stored_at{"w1", 1 << 20}});
  CHECK(sent_to<wire_msg::object_free>(*this, "w1") == 1);
  CHECK(pulled.empty());
  // Answers once: a second late answer frees nothing more.
  result("w1", {m.result, wire_msg::stored_at{"w1", 1 << 20}});
  CHECK(sent_to<wire_msg::object_free>(*this, "w1") == 1);
}

TEST_CASE_FIXTURE(fixture,
                  "a copy of a task run on two nodes that is lost with its node, "
                  "or fails, leaves the other running and nothing runs again") {
  auto t = task("f", 2, 3);
  wire_msg::task_submit m;
  m.result = detail::to_wire(t->result->id());
  tell(track_atom::value, pending_call{t, "w1", {}, nullptr, {"w2", "w3"}},
       std::string{"w1"}, wire_msg::message{m});
  tell(lost_atom::value, std::string{"w1"}, std::string{"killed"});
  CHECK_FALSE(t->result->done());
  CHECK(resubmitted.empty());
  result("w2", failure(t, errc::application_error, "boom"));
  CHECK_FALSE(t->result->done());
  result("w3", answer(t, "from w3"));
  CHECK(value_of(t) == "from w3");
  CHECK(resubmitted.empty());
  CHECK(sent_to<wire_msg::task_cancel>(*this, "w1") == 0);

  // The last copy's failure is the task's.
  auto u = task("g", 3, 0);
  m.result = detail::to_wire(u->result->id());
  tell(track_atom::value, pending_call{u, "w1", {}, nullptr, {"w2"}}, std::string{"w1"},
       wire_msg::message{m});
  result("w1", failure(u, errc::application_error, "first"));
  CHECK_FALSE(u->result->done());
  result("w2", failure(u, errc::application_error, "second"));
  CHECK(error_of(u).message.find("second") != std::string::npos);
}

TEST_CASE_FIXTURE(fixture, "a task's answer from a life of its node the head found dead "
                           "does not count: the run again answers") {
  auto t = task("f", 1, 1);
  incarnations["w1"] = 7;
  track(t, "w1");
  tell(lost_atom::value, std::string{"w1"}, std::string{"no heartbeat"});
  REQUIRE(resubmitted.size() == 1);
  incarnations["w1"] = 9; // back as a new life, and the run again placed there
  track(t, "w1");
  // The first run, finished on the old life, fails: its error does not end the task.
  auto stale = failure(t, errc::object_lost, "an input went with the old life");
  stale.life = 7;
  result("w1", stale);
  CHECK_FALSE(t->result->done());
  auto fresh = answer(t, "done");
  fresh.life = 9;
  result("w1", fresh);
  CHECK(value_of(t) == "done");
}

TEST_CASE_FIXTURE(fixture,
                  "an actor call lost with its node goes to the restarted actor, "
                  "whether the restart is under way or already done") {
  auto [waits, rec] = actor_call(1, "w1", 1, 1);
  track(waits, "w1", rec);
  auto [sent_on, rec2] = actor_call(2, "w1", 1, 1);
  track(sent_on, "w1", rec2);
  // The first actor's restart is under way: its call waits for it. The second was
  // restarted on w2 before the loss reached the owner: its call goes there now.
  REQUIRE(rec->recover("w1", 0) == remote_actor_record::recovery::restarting);
  REQUIRE(rec2->recover("w1", 0) == remote_actor_record::recovery::restarting);
  rec2->relocate("w2", 8);
  tell(lost_atom::value, std::string{"w1"},
       std::string{"the peer closed the connection"});
  CHECK(!waits->result->done());
  CHECK(rec->relocate("w2", 9).size() == 1);
  REQUIRE(rerouted.size() == 1);
  CHECK(rerouted[0] == sent_on);
  CHECK(!sent_on->result->done());
  // Out of retries, a call lost again fails.
  track(sent_on, "w2", rec2);
  tell(lost_atom::value, std::string{"w2"}, std::string{"no heartbeat"});
  CHECK(error_of(sent_on).code == errc::actor_died);
}
