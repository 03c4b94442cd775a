#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#include "framework/swarm.hpp"

using namespace std::chrono_literals;

namespace {

swarm::runtime_config cpus(double n) {
  swarm::runtime_config cfg;
  cfg.cpus = n;
  return cfg;
}

} // namespace

TEST_CASE("a submitted task returns a future that yields its result") {
  swarm::application app;
  auto add = app.function("add", [](int a, int b) { return a + b; });
  swarm::runtime rt{app, cpus(2)};
  auto f = rt.submit(add, 2, 3);
  CHECK(f.get(5s).value() == 5);
}

TEST_CASE("futures passed as arguments are resolved before the task runs") {
  swarm::application app;
  auto add = app.function("add", [](int a, int b) { return a + b; });
  swarm::runtime rt{app, cpus(2)};
  auto f = rt.submit(add, 1, 1);
  for (int i = 0; i < 50; ++i)
    f = rt.submit(add, f, 1);
  CHECK(f.get(5s).value() == 52);
}

TEST_CASE("a large object passed by future reaches the task without a copy") {
  swarm::application app;
  auto where = app.function("where", [](const std::vector<char>& v) {
    return reinterpret_cast<uintptr_t>(v.data());
  });
  swarm::runtime rt{app, cpus(2)};
  auto big = rt.put(std::vector<char>(8 << 20, 'x'));
  auto stored = big.get_shared(5s).value();
  CHECK(rt.submit(where, big).get(5s).value() ==
        reinterpret_cast<uintptr_t>(stored->data()));
}

TEST_CASE("fan-out and fan-in over futures computes the right sum") {
  swarm::application app;
  auto square = app.function("square", [](int x) { return x * x; });
  auto sum = app.function("sum", [](int a, int b) { return a + b; });
  swarm::runtime rt{app, cpus(2)};
  std::vector<swarm::object_ref<int>> level;
  for (int i = 1; i <= 64; ++i)
    level.push_back(rt.submit(square, i));
  while (level.size() > 1) {
    std::vector<swarm::object_ref<int>> next;
    for (size_t i = 0; i + 1 < level.size(); i += 2)
      next.push_back(rt.submit(sum, level[i], level[i + 1]));
    level = next;
  }
  CHECK(level[0].get(10s).value() == 64 * 65 * 129 / 6);
}

TEST_CASE("a list of futures is the argument of a list parameter: a reduce in one task") {
  swarm::application app;
  auto square = app.function("square", [](long x) { return x * x; });
  auto total = app.function("total", [](const std::vector<long>& xs) {
    return std::accumulate(xs.begin(), xs.end(), 0L);
  });
  auto fail_on = app.function("fail_on", [](long x) {
    if (x == 3) throw std::runtime_error("three");
    return x;
  });
  swarm::runtime rt{app, cpus(2)};
  std::vector<swarm::object_ref<long>> squares;
  for (long i = 1; i <= 50; ++i)
    squares.push_back(rt.submit(square, i));
  CHECK(rt.submit(total, squares).get(10s).value() == 50 * 51 * 101 / 6);
  // Gathered without a task, in order; an empty list is an empty vector.
  auto all = rt.gather(squares).get(10s).value();
  REQUIRE(all.size() == 50);
  CHECK(all[9] == 100);
  CHECK(rt.submit(total, std::vector<swarm::object_ref<long>>{}).get(10s).value() == 0);
  // A failed input fails the reduce, naming it.
  std::vector<swarm::object_ref<long>> some;
  for (long i = 0; i < 5; ++i)
    some.push_back(rt.submit(fail_on, i));
  auto r = rt.submit(total, some).get(10s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == swarm::errc::dependency_failed);
  CHECK(r.err().message.find("input 3 (" + some[3].id().to_string() + ") failed") !=
        std::string::npos);
  CHECK(r.err().message.find("three") != std::string::npos);
}

TEST_CASE("tasks can submit tasks and wait for them even on a single CPU") {
  swarm::application app;
  auto leaf = app.function("leaf", [](int x) { return x + 1; });
  auto parent = app.function("parent", [leaf](swarm::context& ctx, int depth) {
    std::vector<swarm::object_ref<int>> kids;
    for (int i = 0; i < 4; ++i)
      kids.push_back(ctx.submit(leaf, depth * 10 + i));
    int total = 0;
    for (auto& k : kids)
      total += k.get(10s).value();
    return total;
  });
  swarm::runtime rt{app, cpus(1)};
  std::vector<swarm::object_ref<int>> parents;
  for (int i = 0; i < 4; ++i)
    parents.push_back(rt.submit(parent, i));
  int total = 0;
  for (auto& p : parents)
    total += p.get(20s).value();
  // sum over i of (40 i + 0+1+2+3 + 4)
  CHECK(total == 40 * 6 + 4 * 10);
}

TEST_CASE("a task holds its resource demand while it runs") {
  swarm::application app;
  auto running = std::make_shared<std::atomic<int>>(0);
  auto peak = std::make_shared<std::atomic<int>>(0);
  auto work = app.function("work", [running, peak](int) {
    int now = ++*running;
    int seen = peak->load();
    while (now > seen && !peak->compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(5ms);
    --*running;
    return 0;
  });
  swarm::runtime rt{app, cpus(2)};
  swarm::task_options two;
  two.resources = swarm::resource_set::cpus(2);
  std::vector<swarm::object_ref<int>> refs;
  for (int i = 0; i < 8; ++i)
    refs.push_back(rt.submit(two, work, i));
  for (auto& r : refs)
    REQUIRE(r.get(10s));
  CHECK(peak->load() == 1);
}

TEST_CASE("a task demanding GPUs reads the devices it was given from its context") {
  swarm::application app;
  auto devices = app.function("devices", [](swarm::context& ctx, int) {
    return std::vector<int>(ctx.gpu_ids().begin(), ctx.gpu_ids().end());
  });
  auto cfg = cpus(4);
  cfg.gpu_backend = "host"; // two devices, wherever the test runs
  cfg.extra_resources.set("GPU", 2);
  swarm::runtime rt{app, cfg};
  auto with = [](double g) {
    swarm::task_options o;
    o.resources.set("GPU", g);
    return o;
  };
  CHECK(rt.submit(with(2), devices, 0).get(10s).value() == std::vector<int>{0, 1});
  auto half = rt.submit(with(0.5), devices, 1).get(10s).value();
  REQUIRE(half.size() == 1);
  CHECK(half[0] < 2);
  CHECK(rt.submit(devices, 2).get(10s).value().empty());
  // Outside a task there is none.
  CHECK(rt.gpu_ids().empty());
}

TEST_CASE("queued tasks with higher priority run first") {
  swarm::application app;
  auto gate = std::make_shared<std::promise<void>>();
  auto opened = gate->get_future().share();
  auto running = std::make_shared<std::promise<void>>();
  auto order = std::make_shared<std::vector<int>>();
  auto mtx = std::make_shared<std::mutex>();
  auto block = app.function("block", [opened, running](int) {
    running->set_value();
    opened.wait_for(10s);
    return 0;
  });
  auto record = app.function("record", [order, mtx](int x) {
    std::lock_guard<std::mutex> guard{*mtx};
    order->push_back(x);
    return x;
  });
  swarm::runtime_config cfg = cpus(1);
  cfg.worker_pipeline_depth = 0;
  cfg.priority_reserve = 0; // each waits for the CPU, not beside the blocker
  swarm::runtime rt{app, cfg};
  auto blocker = rt.submit(block, 0);
  REQUIRE(running->get_future().wait_for(10s) == std::future_status::ready);
  std::vector<swarm::object_ref<int>> refs;
  for (int p : {1, 5, 3}) {
    swarm::task_options o;
    o.priority = p;
    refs.push_back(rt.submit(o, record, p));
  }
  // Give the scheduler the three tasks before the worker frees up.
  auto w = rt.wait(refs, 3, 50ms);
  CHECK(w.ready.empty());
  gate->set_value();
  for (auto& r : refs)
    REQUIRE(r.get(10s));
  REQUIRE(blocker.get(10s));
  CHECK(*order == std::vector<int>{5, 3, 1});
}

TEST_CASE("a task of a higher priority starts while the node's only CPU runs a lower "
          "one that does not end") {
  swarm::application app;
  auto gate = std::make_shared<std::promise<void>>();
  auto opened = gate->get_future().share();
  auto running = std::make_shared<std::promise<void>>();
  auto block = app.function("block", [opened, running](int) {
    running->set_value();
    opened.wait_for(10s);
    return 0;
  });
  auto twice = app.function("twice", [](int x) { return 2 * x; });
  swarm::runtime rt{app, cpus(1)};
  auto blocker = rt.submit(block, 0);
  REQUIRE(running->get_future().wait_for(10s) == std::future_status::ready);
  swarm::task_options high;
  high.priority = 5;
  auto got = rt.submit(high, twice, 21).get(5s);
  CHECK(got.value() == 42);
  // A task of the blocker's priority waits for the CPU.
  auto same = rt.submit(twice, 1);
  CHECK(rt.wait(std::vector<swarm::object_ref<int>>{same}, 1, 100ms).ready.empty());
  gate->set_value();
  CHECK(same.get(10s).value() == 2);
  REQUIRE(blocker.get(10s));
}

TEST_CASE("wait returns once k of n are ready and honours its timeout") {
  swarm::application app;
  auto gate = std::make_shared<std::promise<void>>();
  auto opened = gate->get_future().share();
  auto fast = app.function("fast", [](int x) { return x; });
  auto slow = app.function("slow", [opened](int x) {
    opened.wait_for(10s);
    return x;
  });
  swarm::runtime rt{app, cpus(2)};
  std::vector<swarm::object_ref<int>> refs{rt.submit(fast, 1), rt.submit(slow, 2),
                                           rt.submit(fast, 3)};
  auto two = rt.wait(refs, 2, 5s);
  CHECK(two.ready.size() >= 2);
  auto all = rt.wait(refs, 3, 30ms);
  CHECK(all.pending.size() == 1);
  CHECK(all.ready.size() == 2);
  gate->set_value();
  auto done = rt.wait(refs, 3, 5s);
  CHECK(done.ready.size() == 3);
}

TEST_CASE("cancel stops a queued task and its future holds a cancelled error") {
  swarm::application app;
  auto gate = std::make_shared<std::promise<void>>();
  auto opened = gate->get_future().share();
  auto block = app.function("block", [opened](int x) {
    opened.wait_for(10s);
    return x;
  });
  swarm::runtime rt{app, cpus(1)};
  auto running = rt.submit(block, 1);
  auto queued = rt.submit(block, 2);
  CHECK(rt.cancel(queued));
  auto r = queued.get(1s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == swarm::errc::cancelled);
  gate->set_value();
  CHECK(running.get(10s).value() == 1);
  CHECK_FALSE(rt.cancel(running));
}

TEST_CASE("a task returning void gives a future that completes") {
  swarm::application app;
  auto hits = std::make_shared<std::atomic<int>>(0);
  auto touch = app.function("touch", [hits](int n) { *hits += n; });
  swarm::runtime rt{app, cpus(2)};
  auto f = rt.submit(touch, 3);
  CHECK(f.get(5s).has_value());
  CHECK(hits->load() == 3);
}

TEST_CASE("a task that throws is retried when the caller asked for it") {
  swarm::application app;
  auto attempts = std::make_shared<std::atomic<int>>(0);
  auto flaky = app.function("flaky", [attempts](int x) {
    if (++*attempts < 3) throw std::runtime_error("transient");
    return x;
  });
  swarm::runtime rt{app, cpus(1)};
  swarm::task_options o;
  o.retry_exceptions = true;
  o.max_retries = 3;
  CHECK(rt.submit(o, flaky, 7).get(5s).value() == 7);
  CHECK(attempts->load() == 3);

  attempts->store(-10);
  o.max_retries = 2;
  auto r = rt.submit(o, flaky, 7).get(5s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == swarm::errc::application_error);
  CHECK(r.err().message.find("transient") != std::string::npos);
}

TEST_CASE("many tasks in flight all complete with their own results") {
  swarm::application app;
  auto twice = app.function("twice", [](int x) { return 2 * x; });
  swarm::runtime rt{app, cpus(2)};
  std::vector<swarm::object_ref<int>> refs;
  for (int i = 0; i < 20000; ++i)
    refs.push_back(rt.submit(twice, i));
  long long total = 0;
  for (auto& r : refs)
    total += r.get(30s).value();
  CHECK(total == 2LL * 19999 * 20000 / 2);
}

TEST_CASE("many tasks waiting on one future all run once it completes") {
  swarm::application app;
  auto inc = app.function("inc", [](int x) { return x + 1; });
  swarm::runtime rt{app, cpus(2)};
  // Repeated so the future often completes while its dependents are being submitted.
  for (int round = 0; round < 20; ++round) {
    auto root = rt.submit(inc, round);
    std::vector<swarm::object_ref<int>> refs;
    for (int i = 0; i < 200; ++i)
      refs.push_back(rt.submit(inc, root));
    for (auto& r : refs)
      REQUIRE(r.get(10s).value() == round + 2);
  }
}

TEST_CASE("getting a list of futures returns their values in order or the first error") {
  swarm::application app;
  auto twice = app.function("twice", [](int x) { return 2 * x; });
  auto bad = app.function("bad", [](int) -> int { throw std::runtime_error("nope"); });
  swarm::runtime rt{app, cpus(2)};
  std::vector<swarm::object_ref<int>> refs;
  for (int i = 0; i < 10; ++i)
    refs.push_back(rt.submit(twice, i));
  auto all = rt.get(refs, 5s).value();
  CHECK(all == std::vector<int>{0, 2, 4, 6, 8, 10, 12, 14, 16, 18});
  refs.push_back(rt.submit(bad, 0));
  auto failed = rt.get(refs, 5s);
  REQUIRE_FALSE(failed);
  CHECK(failed.err().message.find("nope") != std::string::npos);
}

namespace {

class summer_actor : public swarm::actor {
public:
  long total(const std::vector<long>& xs) {
    return std::accumulate(xs.begin(), xs.end(), 0L);
  }
};

} // namespace

TEST_CASE("an actor method's list parameter takes a list of futures") {
  swarm::application app;
  auto square = app.function("square", [](long x) { return x * x; });
  auto summer_t = app.actor_type<summer_actor>("summer");
  swarm::runtime rt{app, cpus(2)};
  std::vector<swarm::object_ref<long>> squares;
  for (long i = 1; i <= 10; ++i)
    squares.push_back(rt.submit(square, i));
  auto a = rt.spawn(summer_t);
  CHECK(a.call(&summer_actor::total, squares).get(10s).value() == 385);
}

TEST_CASE("a job that comes second gets its share of a busy node's CPU, not what the "
          "first leaves over") {
  swarm::application app;
  std::mutex mtx;
  std::vector<std::string> finished;
  auto work = app.function("work", [&](std::string job) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::lock_guard<std::mutex> guard{mtx};
    finished.push_back(job);
    return 0;
  });
  swarm::runtime rt{app, cpus(1)};
  swarm::task_options batch;
  batch.job = "batch";
  swarm::task_options interactive;
  interactive.job = "interactive";
  std::vector<swarm::object_ref<int>> all;
  for (int i = 0; i < 300; ++i)
    all.push_back(rt.submit(batch, work, std::string{"batch"}));
  for (int i = 0; i < 10; ++i)
    all.push_back(rt.submit(interactive, work, std::string{"interactive"}));
  for (auto& r : all)
    REQUIRE(r.get(30s));
  // Without shares the interactive job would wait for the 300 batch tasks queued first.
  std::lock_guard<std::mutex> guard{mtx};
  REQUIRE(finished.size() == 310);
  size_t last_interactive = 0;
  for (size_t i = 0; i < finished.size(); ++i)
    if (finished[i] == "interactive") last_interactive = i;
  CHECK(last_interactive < 120);
  swarm::task_options none;
  none.job_share = 0;
  auto refused = rt.submit(none, work, std::string{"x"}).get(10s);
  REQUIRE_FALSE(refused);
  CHECK(refused.err().message.find("job_share must be above zero") != std::string::npos);
}
