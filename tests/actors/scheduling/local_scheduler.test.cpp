#include <doctest/doctest.h>

#include <caf/all.hpp>
#include <caf/test/dsl.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/workers/cpu_worker.hpp"
#include "actors/scheduling/local_scheduler.hpp"
#include "actors/scheduling/protocol.hpp"
#include "actors/scheduling/task_inbox.hpp"

using namespace swarm::actors;
namespace detail = swarm::detail;
using swarm::resource_set;

namespace {

// What the fake workers were handed, in order: "worker index: task name".
struct scheduler_parts {
  std::vector<std::string> runs;
  std::map<std::string, std::vector<uint32_t>> gpus; // by task name, as dispatched
  std::vector<caf::actor> workers;
  task_inbox inbox;
  size_t trims = 0;
};

resource_set cpus(double n) {
  resource_set r;
  r.set("CPU", n);
  return r;
}

detail::task_ptr task(const std::string& name, double cpu = 1, int32_t priority = 0) {
  auto t = std::make_shared<detail::task_spec>();
  t->name = name;
  t->options.resources = cpus(cpu);
  t->options.priority = priority;
  t->result = std::make_shared<detail::object_slot>(swarm::object_id{1, 1});
  return t;
}

// Steps the local scheduler on the test coordinator with workers that only record what
// they are handed; the test says when each is done, blocked or dead.
struct fixture : scheduler_parts, test_coordinator_fixture<> {
  caf::actor sched_actor;
  size_t reserve = 0; // priority_reserve: none unless a test sets it

  void start(double cpu, size_t initial_workers, size_t max_workers, size_t depth = 16,
             double gpu = 0) {
    scheduler_config sc;
    sc.total = cpus(cpu);
    if (gpu > 0) sc.total.set("GPU", gpu);
    sc.initial_workers = initial_workers;
    sc.max_workers = max_workers;
    sc.pipeline_depth = depth;
    sc.priority_reserve = reserve;
    sc.steal_after = std::chrono::microseconds{0}; // a task waiting at all is taken
    sc.inbox = &inbox;
    sc.trim_after = std::chrono::milliseconds(1000);
    sc.trim = [this] { ++trims; };
    sc.spawn_worker = [this](caf::actor_system& s, const worker_config& wc) {
      auto index = wc.index;
      // It takes its index as an argument: CAF 0.17 binds a null tuple for a function
      // actor spawned with none (UBSan).
      auto fake = [this](caf::event_based_actor*, size_t i) -> caf::behavior {
        return {[this, i](run_atom, dispatch& d) {
          runs.push_back(std::to_string(i) + ": " + d.task->name);
          gpus[d.task->name] = d.gpus;
        }};
      };
      auto w = s.spawn(fake, index);
      if (workers.size() <= index) workers.resize(index + 1);
      workers[index] = w;
      return w;
    };
    sched_actor = spawn_local_scheduler(sys, sc);
    sched.run();
  }

  ~fixture() override {
    for (auto& w : workers)
      caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
    if (sched_actor) caf::anon_send_exit(sched_actor, caf::exit_reason::user_shutdown);
    sched.run();
  }

  void submit(const detail::task_ptr& t) {
    caf::anon_send(sched_actor, submit_atom::value, t);
    sched.run();
  }

  void done(size_t worker, const detail::task_ptr& t) {
    t->claim.store(detail::make_claim(t->epoch(), detail::task_phase::finished));
    caf::anon_send(sched_actor, done_atom::value, worker, t);
    sched.run();
  }

  // As a worker that ran `t` for `us` microseconds reports it.
  void ran(size_t worker, const detail::task_ptr& t, int64_t us) {
    REQUIRE(t->try_claim(t->epoch(), detail::task_phase::running));
    t->started_us = 1000;
    t->ended_us = 1000 + us;
    done(worker, t);
  }

  // The scheduler learns that the tasks (one function, in these tests) run short, as it
  // does from the first that end: from then on they are pipelined to busy workers.
  void known_short() {
    auto first = task("first run");
    submit(first);
    ran(0, first, 10);
    runs.clear();
  }
};

} // namespace

TEST_CASE_FIXTURE(
    fixture,
    "the local scheduler runs what fits and holds the rest until resources return") {
  start(2, 1, 4);
  auto a = task("a", 2), b = task("b", 1);
  submit(a);
  submit(b);
  CHECK(runs == std::vector<std::string>{"0: a"});
  done(0, a);
  CHECK(runs == std::vector<std::string>{"0: a", "0: b"});
}

TEST_CASE_FIXTURE(
    fixture, "the local scheduler starts higher priorities first and keeps their order") {
  start(1, 1, 1, 0); // no pipelining: each task waits for the CPU
  auto first = task("first");
  submit(first);
  REQUIRE(first->try_claim(0, detail::task_phase::running)); // the worker started it
  auto low = task("low", 1, 0), high1 = task("high1", 1, 5), high2 = task("high2", 1, 5);
  submit(low);
  submit(high1);
  submit(high2);
  CHECK(runs == std::vector<std::string>{"0: first"});
  done(0, first);
  done(0, high1);
  done(0, high2);
  CHECK(runs == std::vector<std::string>{"0: first", "0: high1", "0: high2", "0: low"});
}

TEST_CASE_FIXTURE(fixture, "a task of a higher priority than a running one starts at "
                           "once on a reserve worker while the reserve lasts, and one of "
                           "the running one's priority waits for the CPU") {
  reserve = 1;
  start(1, 1, 1, 0); // one CPU, no pipelining
  auto first = task("first"), same = task("same");
  auto high1 = task("high1", 1, 5), high2 = task("high2", 1, 5);
  submit(first);
  REQUIRE(first->try_claim(0, detail::task_phase::running));
  submit(same);
  submit(high1);
  submit(high2);
  // high1 beside the running task, its CPU lent; high2 waits for the reserve.
  CHECK(runs == std::vector<std::string>{"0: first", "1: high1"});
  REQUIRE(high1->try_claim(0, detail::task_phase::running));
  done(1, high1);
  CHECK(runs == std::vector<std::string>{"0: first", "1: high1", "1: high2"});
  REQUIRE(high2->try_claim(0, detail::task_phase::running));
  done(1, high2);
  CHECK(runs.size() == 3); // `same` waits for the CPU, which `first` still holds
  done(0, first);
  CHECK(runs.back() == "0: same");
}

TEST_CASE_FIXTURE(fixture, "a task of a higher priority waits for a running lower one "
                           "when the rest of its demand is not free, reserve or not") {
  reserve = 1;
  SUBCASE("a GPU the lower one holds") {
    start(1, 1, 2, 0, 1); // one CPU, one GPU
    auto gpu_task = [](const std::string& name, int32_t priority) {
      auto t = task(name, 1, priority);
      t->options.resources.set("GPU", 1);
      return t;
    };
    auto low = gpu_task("low", 0), high = gpu_task("high", 5);
    submit(low);
    REQUIRE(low->try_claim(0, detail::task_phase::running));
    submit(high);
    CHECK(runs == std::vector<std::string>{"0: low"});
    done(0, low);
    CHECK(runs.back() == "0: high");
  }
  SUBCASE("a second CPU: one is lent, not two") {
    start(2, 2, 2, 0); // two CPUs
    auto low1 = task("low1"), low2 = task("low2"), high = task("high", 2, 5);
    submit(low1);
    submit(low2);
    REQUIRE(low1->try_claim(0, detail::task_phase::running));
    REQUIRE(low2->try_claim(0, detail::task_phase::running));
    submit(high);
    CHECK(runs == std::vector<std::string>{"0: low1", "1: low2"});
    done(0, low1); // one CPU free, one lent
    CHECK(runs.back() == "0: high");
  }
}

TEST_CASE_FIXTURE(fixture,
                  "a higher-priority task takes back the lower ones pipelined to "
                  "a busy worker that have not started, and runs before them") {
  start(1, 1, 1); // one CPU, pipelining 16 deep
  known_short();
  auto first = task("first"), low1 = task("low1"), low2 = task("low2");
  submit(first);
  submit(low1);
  submit(low2);
  CHECK(runs == std::vector<std::string>{"0: first", "0: low1", "0: low2"});
  REQUIRE(first->try_claim(0, detail::task_phase::running)); // the worker started it
  auto high = task("high", 1, 5);
  submit(high);
  // The lows' first dispatches are stale (the worker skips them); they come again after
  // the high one, in their order.
  CHECK(runs == std::vector<std::string>{"0: first", "0: low1", "0: low2", "0: high",
                                         "0: low1", "0: low2"});
  CHECK(low1->epoch() == 1);
  CHECK(low2->epoch() == 1);
  CHECK(high->epoch() == 0);
}

TEST_CASE_FIXTURE(fixture, "tasks not known to run short wait for a free worker, not "
                           "behind a running one, and start in the order they came") {
  start(2, 2, 2); // two CPUs, pipelining 16 deep for short tasks
  auto a = task("a"), b = task("b"), c = task("c"), d = task("d");
  for (auto& t : {a, b, c, d})
    submit(t);
  CHECK(runs == std::vector<std::string>{"0: a", "1: b"}); // c and d wait here
  REQUIRE(a->try_claim(0, detail::task_phase::running));   // a long task
  ran(1, b, 10'000);                                       // 10 ms: not short
  CHECK(runs == std::vector<std::string>{"0: a", "1: b", "1: c"});
  ran(1, c, 20'000);
  CHECK(runs == std::vector<std::string>{"0: a", "1: b", "1: c", "1: d"});
}

TEST_CASE_FIXTURE(fixture, "jobs take turns at a worker in proportion to their shares, "
                           "a job that comes later from the turn it came at") {
  start(1, 1, 1); // one CPU; the tasks' length is not known, so none is pipelined
  std::vector<detail::task_ptr> all;
  auto add = [&](const std::string& name, const std::string& job, double share) {
    auto t = task(name);
    t->options.job = job;
    t->options.job_share = share;
    all.push_back(t);
    submit(t);
  };
  for (int i = 0; i < 6; ++i)
    add("b" + std::to_string(i), "batch", 1);
  for (int i = 0; i < 2; ++i)
    add("i" + std::to_string(i), "interactive", 1);
  for (int i = 0; i < 2; ++i)
    add("u" + std::to_string(i), "urgent", 2); // twice the share
  // Each task ends in turn, as a worker reports it.
  for (size_t k = 0; k < all.size(); ++k) {
    REQUIRE(k < runs.size());
    auto name = runs[k].substr(3);
    auto t =
        *std::find_if(all.begin(), all.end(), [&](auto& x) { return x->name == name; });
    ran(0, t, 5000);
  }
  // b0 started before any other job came; then batch, interactive and urgent each have
  // a turn, urgent's worth half of the others' (two tasks for one), until interactive
  // and urgent ran out.
  CHECK(runs == std::vector<std::string>{"0: b0", "0: b1", "0: i0", "0: u0", "0: u1",
                                         "0: b2", "0: i1", "0: b3", "0: b4", "0: b5"});
}

TEST_CASE_FIXTURE(fixture, "continuations, each with an invoker of its own, are counted "
                           "under one name, not one each") {
  start(1, 1, 1);
  for (uint64_t i = 0; i < 3; ++i) {
    auto t = task("then obj-" + std::to_string(i));
    t->fn = &t->own_fn; // as `then` makes them
    submit(t);
    ran(0, t, 10);
  }
  self->send(sched_actor, stats_atom::value, by_function_atom::value);
  sched.run();
  counts_by_function counts;
  self->receive([&](counts_by_function& c) { counts = std::move(c); },
                caf::after(std::chrono::seconds(0)) >> [] {});
  REQUIRE(counts.size() == 1);
  CHECK(counts.begin()->first == "(continuations)");
  CHECK(counts.begin()->second.finished == 3);
}

TEST_CASE_FIXTURE(fixture, "a worker that falls idle takes the oldest task waiting, not "
                           "started, behind a running one on the busiest other worker") {
  start(2, 2, 2); // two CPUs, pipelining 16 deep
  known_short();
  auto a = task("a"), b = task("b"), c = task("c"), d = task("d"), e = task("e");
  for (auto& t : {a, b, c, d, e})
    submit(t);
  // An idle worker each for a and b; c, d and e pipelined behind them.
  CHECK(runs == std::vector<std::string>{"0: a", "1: b", "0: c", "1: d", "0: e"});
  REQUIRE(a->try_claim(0, detail::task_phase::running)); // a long task
  REQUIRE(b->try_claim(0, detail::task_phase::running));
  done(1, b);
  REQUIRE(d->try_claim(0, detail::task_phase::running));
  CHECK(runs.size() == 5); // worker 1 goes on with d: nothing to take
  done(1, d);
  // Worker 1 is idle while c and e wait behind a: it takes c, the older; its dispatch to
  // worker 0 is stale from now on (worker 0 skips it).
  CHECK(runs.back() == "1: c");
  CHECK(c->epoch() == 1);
  CHECK(e->epoch() == 0);
  REQUIRE(c->try_claim(1, detail::task_phase::running));
  done(1, c);
  CHECK(runs.back() == "1: e");
  // Nothing waits any more: an idle worker takes nothing.
  REQUIRE(e->try_claim(1, detail::task_phase::running));
  done(1, e);
  CHECK(runs.size() == 7);
}

TEST_CASE_FIXTURE(fixture, "a higher-priority task of another resource shape takes back "
                           "the lower ones that have not started and runs on the first "
                           "lease that ends") {
  start(1, 1, 1); // one CPU, one worker, pipelining 16 deep
  known_short();
  auto first = task("first"), low1 = task("low1"), low2 = task("low2");
  submit(first);
  submit(low1);
  submit(low2);
  REQUIRE(first->try_claim(0, detail::task_phase::running));
  auto high = task("high", 0.5, 5); // half a CPU: not the lows' lease
  submit(high);
  CHECK(runs == std::vector<std::string>{"0: first", "0: low1", "0: low2"});
  CHECK(low1->epoch() == 1); // taken back: the worker skips their dispatches
  CHECK(low2->epoch() == 1);
  done(0, first);
  // The lease ended: the high one runs, then the lows under the lease it took.
  CHECK(runs == std::vector<std::string>{"0: first", "0: low1", "0: low2", "0: high"});
  done(0, high);
  CHECK(runs == std::vector<std::string>{"0: first", "0: low1", "0: low2", "0: high",
                                         "0: low1", "0: low2"});
}

TEST_CASE_FIXTURE(fixture, "the local scheduler hands each GPU task its devices: halves "
                           "share one, a whole one waits for a device free as a whole") {
  start(4, 1, 4, 0, 2); // no pipelining: each task a worker of its own
  auto gpu_task = [](const std::string& name, double g) {
    auto t = task(name);
    t->options.resources.set("GPU", g);
    return t;
  };
  auto a = gpu_task("a", 0.5), b = gpu_task("b", 0.5), c = gpu_task("c", 1),
       d = gpu_task("d", 1), plain = task("plain");
  for (auto& t : {a, b, c, plain, d})
    submit(t);
  CHECK(runs == std::vector<std::string>{"0: a", "1: b", "2: c", "3: plain"});
  CHECK(gpus["a"] == std::vector<uint32_t>{0});
  CHECK(gpus["b"] == std::vector<uint32_t>{0}); // beside a, at once
  CHECK(gpus["c"] == std::vector<uint32_t>{1});
  CHECK(gpus.count("d") == 0); // a CPU is free, but no device as a whole
  CHECK(gpus["plain"].empty());
  REQUIRE(c->try_claim(0, detail::task_phase::running));
  done(2, c);
  CHECK(runs.back() == "2: d");
  CHECK(gpus["d"] == std::vector<uint32_t>{1});
}

TEST_CASE_FIXTURE(fixture,
                  "the local scheduler pipelines no deeper than its depth, then waits") {
  start(1, 1, 1, 1);
  known_short();
  auto a = task("a"), b = task("b"), c = task("c");
  submit(a);
  submit(b);
  submit(c);
  CHECK(runs == std::vector<std::string>{"0: a", "0: b"});
  done(0, a);
  CHECK(runs.back() == "0: c");
}

TEST_CASE_FIXTURE(fixture, "a blocked worker lends its resources to a new worker and "
                           "gets back what waited behind it") {
  start(1, 1, 2);
  known_short();
  auto a = task("a"), b = task("b");
  submit(a);
  submit(b); // pipelined behind a on worker 0
  REQUIRE(runs == std::vector<std::string>{"0: a", "0: b"});
  caf::anon_send(sched_actor, blocked_atom::value, size_t{0});
  sched.run();
  // b may be what a waits for: it moves to a new worker, which a's CPU now pays for.
  CHECK(runs.back() == "1: b");
  CHECK(b->epoch() == 1);
}

TEST_CASE_FIXTURE(fixture, "a task whose worker died runs again while it has retries") {
  start(1, 1, 1);
  auto a = task("a");
  a->options.max_retries = 1;
  submit(a);
  REQUIRE(a->try_claim(a->epoch(), detail::task_phase::running)); // the worker took it
  caf::anon_send_exit(workers[0], caf::exit_reason::kill);
  sched.run();
  CHECK(runs == std::vector<std::string>{"0: a", "0: a"}); // a new worker 0
  CHECK(a->attempts == 1);
  REQUIRE(a->try_claim(a->epoch(), detail::task_phase::running));
  caf::anon_send_exit(workers[0], caf::exit_reason::kill);
  sched.run();
  auto r = a->result->read();
  REQUIRE_FALSE(r);
  CHECK(r.err().code == swarm::errc::worker_died);
  CHECK(r.err().message.find("retries are used up") != std::string::npos);
}

TEST_CASE_FIXTURE(
    fixture, "the local scheduler takes over the tasks waiting in the node's inbox") {
  bool accepted = false;
  inbox.push(task("left over"), accepted);
  REQUIRE(accepted);
  start(1, 1, 1);
  CHECK(runs == std::vector<std::string>{"0: left over"});
}

TEST_CASE_FIXTURE(fixture, "the local scheduler keeps the last failed tasks with their "
                           "errors, newest last, and counts them by function") {
  start(1, 1, 1);
  const size_t n = 2 * failures_kept + 10; // every odd one fails: 5 more than are kept
  // Functions are counted by their invoker.
  detail::invoker odd_fn, even_fn;
  for (size_t i = 0; i < n; ++i) {
    auto t = task(i % 2 ? "odd" : "even");
    t->fn = i % 2 ? &odd_fn : &even_fn;
    submit(t);
    if (i % 2)
      t->result->set_error({swarm::errc::application_error, "bad #" + std::to_string(i)});
    else
      t->result->set_value(swarm::detail::boxed_value{});
    done(0, t);
  }
  std::vector<task_event> failed;
  auto asked =
      self->request(sched_actor, caf::infinite, stats_atom::value, failures_atom::value);
  sched.run();
  asked.receive([&](std::vector<task_event>& v) { failed = std::move(v); },
                [](caf::error& e) { FAIL(caf::to_string(e)); });
  REQUIRE(failed.size() == failures_kept);
  CHECK(failed.front().error.find("bad #11") != std::string::npos);
  CHECK(failed.back().function == "odd");
  CHECK(failed.back().failed);
  CHECK(failed.back().error.find("bad #" + std::to_string(n - 1)) != std::string::npos);
  counts_by_function counts;
  auto counted = self->request(sched_actor, caf::infinite, stats_atom::value,
                               by_function_atom::value);
  sched.run();
  counted.receive([&](counts_by_function& c) { counts = std::move(c); },
                  [](caf::error& e) { FAIL(caf::to_string(e)); });
  CHECK(counts["odd"].failed == n / 2);
  CHECK(counts["even"].finished == n / 2);
  CHECK(counts["even"].failed == 0);
}

TEST_CASE_FIXTURE(fixture, "a node idle for a while after work gives the memory it freed "
                           "back, once, and not while work runs") {
  start(1, 1, 1);
  auto a = task("a"), b = task("b");
  submit(a);
  submit(b);
  done(0, a);
  advance_time(std::chrono::seconds(2));
  sched.run();
  CHECK(trims == 0); // b is still at its worker
  done(0, b);
  advance_time(std::chrono::milliseconds(999));
  sched.run();
  CHECK(trims == 0);
  advance_time(std::chrono::milliseconds(1));
  sched.run();
  CHECK(trims == 1);
  advance_time(std::chrono::seconds(5));
  sched.run();
  CHECK(trims == 1); // nothing ran since
}

TEST_CASE_FIXTURE(fixture,
                  "the local scheduler cancels the tasks of owners outside a range, "
                  "queued or running, and keeps the others") {
  start(1, 1, 1, 0); // no pipelining: each task waits for the CPU
  auto owned_by = [](const std::string& name, uint64_t owner) {
    auto t = task(name);
    t->result = std::make_shared<detail::object_slot>(swarm::object_id{owner, 1});
    return t;
  };
  // Owners 100-199 are this node's; 7 and 300 are other nodes'.
  auto theirs_running = owned_by("theirs running", 7);
  auto theirs_queued = owned_by("theirs queued", 300);
  auto mine_queued = owned_by("mine queued", 150);
  submit(theirs_running);
  REQUIRE(
      theirs_running->try_claim(theirs_running->epoch(), detail::task_phase::running));
  submit(theirs_queued);
  submit(mine_queued);
  uint64_t cancelled = 0;
  auto asked = self->request(sched_actor, caf::infinite, cancel_atom::value,
                             others_atom::value, uint64_t{100}, uint64_t{199});
  sched.run();
  asked.receive([&](uint64_t n) { cancelled = n; },
                [](caf::error& e) { FAIL(caf::to_string(e)); });
  CHECK(cancelled == 2);
  CHECK(theirs_running->cancel_requested);
  CHECK_FALSE(mine_queued->cancel_requested);
  auto failed = theirs_queued->result->read();
  REQUIRE_FALSE(failed);
  CHECK(failed.err().code == swarm::errc::cancelled);
  // The CPU the running one frees goes to this node's own task.
  done(0, theirs_running);
  CHECK(runs.back() == "0: mine queued");
}
