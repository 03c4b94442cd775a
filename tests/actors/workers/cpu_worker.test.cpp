#include <doctest/doctest.h>

#include <caf/all.hpp>
#include <caf/test/dsl.hpp>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "actors/workers/cpu_worker.hpp"
#include "actors/scheduling/protocol.hpp"
#include "framework/application.hpp"
#include "framework/detail/core.hpp"

using namespace swarm::actors;
namespace detail = swarm::detail;
using swarm::errc;

namespace {

// The node a worker publishes results through: values are admitted without a store.
class fake_core final : public detail::core {
public:
  const swarm::application& app() const override { return app_; }
  uint64_t new_owner_id() override { return ++owners_; }
  swarm::object_id new_object_id(uint64_t owner) override { return {owner, ++seq_}; }
  const swarm::resource_set& total_resources() const override { return total_; }
  void submit(detail::task_ptr) override {}
  bool cancel(detail::task_spec&) override { return false; }
  swarm::result<std::unique_ptr<detail::store_lease>>
  admit(const swarm::object_id&, const detail::boxed_value&) override {
    ++admitted;
    return std::unique_ptr<detail::store_lease>{};
  }
  swarm::result<detail::actor_record_ptr> spawn(detail::actor_spec) override {
    return swarm::error{errc::invalid_argument, "not in this test"};
  }
  void call(detail::actor_record&, detail::task_ptr) override {}
  void kill(detail::actor_record&, bool) override {}
  swarm::result<detail::actor_record_ptr> find_actor(const std::string&) override {
    return swarm::error{errc::unregistered, "not in this test"};
  }
  detail::actor_address address_of(const detail::actor_record_ptr&) override {
    return {};
  }
  swarm::result<detail::actor_record_ptr>
  actor_at(const detail::actor_address&) override {
    return swarm::error{errc::unregistered, "not in this test"};
  }
  swarm::result<detail::group_record_ptr> supervise(const detail::group_spec&) override {
    return swarm::error{errc::invalid_argument, "not in this test"};
  }
  swarm::node_stats stats() override { return {}; }
  swarm::result<std::optional<std::vector<uint8_t>>> kv(detail::kv_op, const std::string&,
                                                        std::vector<uint8_t>) override {
    return swarm::error{errc::invalid_argument, "not in this test"};
  }

  int admitted = 0;

private:
  swarm::application app_;
  swarm::resource_set total_;
  uint64_t owners_ = 0;
  uint64_t seq_ = 0;
};

// What the scheduler heard from the worker, in order: "done <task>", "submit <task>".
struct worker_parts {
  fake_core node;
  std::vector<std::string> heard;
  int runs = 0;
};

// A task named `name` whose body counts its runs and returns `name`, or throws.
detail::task_ptr task(worker_parts& parts, const std::string& name, bool throws = false) {
  auto t = std::make_shared<detail::task_spec>();
  t->name = name;
  t->own_fn = [&parts, name, throws](void*, swarm::context&, const void* const*) {
    ++parts.runs;
    if (throws) throw std::runtime_error{"flaky"};
    return detail::boxed_value::make(name);
  };
  t->fn = &t->own_fn;
  t->result = std::make_shared<detail::object_slot>(swarm::object_id{1, 1});
  return t;
}

struct fixture : worker_parts, test_coordinator_fixture<> {
  caf::actor scheduler;
  caf::actor worker;

  fixture() {
    // It takes an argument: CAF 0.17 binds a null tuple for a function actor spawned
    // with none (UBSan).
    auto recorder = [](caf::event_based_actor*, worker_parts* parts) -> caf::behavior {
      return {
          [parts](done_atom, size_t index, const detail::task_ptr& t) {
            parts->heard.push_back("done " + t->name + " on " + std::to_string(index));
          },
          [parts](submit_atom, const detail::task_ptr& t) {
            parts->heard.push_back("submit " + t->name);
          },
      };
    };
    scheduler = sys.spawn(recorder, static_cast<worker_parts*>(this));
    sched.run();
    worker = start(scheduler);
  }

  caf::actor start(const caf::actor& to) {
    worker_config wc;
    wc.index = 3;
    wc.scheduler = caf::actor_cast<caf::actor_addr>(to);
    wc.node = &node;
    auto w = spawn_cpu_worker(sys, wc, false);
    sched.run();
    return w;
  }

  ~fixture() override {
    caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
    if (scheduler) caf::anon_send_exit(scheduler, caf::exit_reason::user_shutdown);
    sched.run();
  }

  void run(const caf::actor& w, const detail::task_ptr& t, uint64_t epoch) {
    caf::anon_send(w, run_atom::value, dispatch{t, epoch});
    sched.run();
  }
};

} // namespace

TEST_CASE_FIXTURE(
    fixture, "a worker runs a dispatched task, publishes its value and reports it done") {
  auto t = task(*this, "square");
  run(worker, t, 0);
  CHECK(runs == 1);
  REQUIRE(t->result->done());
  CHECK(*static_cast<const std::string*>(t->result->read()->ptr.get()) == "square");
  CHECK(node.admitted == 1);
  CHECK(t->phase() == detail::task_phase::finished);
  CHECK(heard == std::vector<std::string>{"done square on 3"});
}

TEST_CASE_FIXTURE(fixture,
                  "a task cancelled while queued is reported done without running") {
  auto t = task(*this, "late");
  REQUIRE(t->cancel_queued());
  run(worker, t, 0);
  CHECK(runs == 0);
  CHECK(heard == std::vector<std::string>{"done late on 3"});
}

TEST_CASE_FIXTURE(
    fixture,
    "a task the scheduler took back for a newer dispatch is neither run nor reported") {
  auto t = task(*this, "stolen");
  REQUIRE(t->requeue()); // now epoch 1: the dispatch of epoch 0 is stale
  run(worker, t, 0);
  CHECK(runs == 0);
  CHECK(heard.empty());
  CHECK(!t->result->done());
  run(worker, t, 1);
  CHECK(runs == 1);
  CHECK(heard == std::vector<std::string>{"done stolen on 3"});
}

TEST_CASE_FIXTURE(fixture, "a task that throws with retry_exceptions goes back to the "
                           "scheduler until its retries are used") {
  auto t = task(*this, "flaky", true);
  t->options.retry_exceptions = true;
  t->options.max_retries = 1;
  run(worker, t, 0);
  CHECK(runs == 1);
  CHECK(t->attempts == 1);
  CHECK(!t->result->done());
  CHECK(t->epoch() == 1);
  CHECK(t->phase() == detail::task_phase::queued);
  CHECK(heard == std::vector<std::string>{"done flaky on 3", "submit flaky"});
  run(worker, t, 1);
  CHECK(runs == 2);
  auto r = t->result->read();
  REQUIRE(!r);
  CHECK(r.err().code == errc::application_error);
  CHECK(r.err().message.find("flaky") != std::string::npos);
  CHECK(heard.size() == 3);
}

TEST_CASE_FIXTURE(fixture, "a task that throws without retry_exceptions fails at once") {
  auto t = task(*this, "brittle", true);
  t->options.max_retries = 3;
  run(worker, t, 0);
  CHECK(runs == 1);
  auto r = t->result->read();
  REQUIRE(!r);
  CHECK(r.err().code == errc::application_error);
  CHECK(heard == std::vector<std::string>{"done brittle on 3"});
}

TEST_CASE_FIXTURE(
    fixture,
    "a worker whose scheduler is gone fails a task it would retry, naming the node") {
  caf::anon_send_exit(scheduler, caf::exit_reason::user_shutdown);
  sched.run();
  scheduler = nullptr; // the worker holds it weakly: now it is gone
  auto t = task(*this, "orphan", true);
  t->options.retry_exceptions = true;
  t->options.max_retries = 2;
  run(worker, t, 0);
  auto r = t->result->read();
  REQUIRE(!r);
  INFO(r.err().message);
  CHECK(r.err().code == errc::runtime_stopped);
  CHECK(r.err().message.find("stopped before task 'orphan'") != std::string::npos);
}
