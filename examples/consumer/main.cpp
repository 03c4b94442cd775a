// Built against an installed Swarm. With no argument it runs an embedded node; with
// `--config FILE` it joins that cluster as its head, waits for the workers (started
// with `swarm start --load libconsumer_code.so`) and runs its work on them. Exits
// non-zero when a result is wrong.

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "code.hpp"
#include <swarm/swarm.hpp>

using namespace std::chrono_literals;

namespace {

int fail(const std::string& why) {
  std::fprintf(stderr, "consumer: %s\n", why.c_str());
  return 1;
}

} // namespace

int main(int argc, char** argv) {
  swarm::application app;
  consumer::register_code(app);
  auto square = app.find_function<long(long)>("consumer.square").value();
  if (argc == 1) {
    swarm::runtime rt{app};
    auto got = rt.submit(square, 7L).get(10s);
    if (!got || *got != 49) return fail("7 squared on an embedded node is not 49");
    std::printf("consumer: swarm %s, 7 squared is %ld\n", swarm::version(), *got);
    return 0;
  }
  if (argc != 3 || std::string{argv[1]} != "--config")
    return fail("usage: consumer [--config FILE]");
  auto cfg = swarm::load_cluster_config(argv[2]);
  if (!cfg) return fail(cfg.err().message);
  swarm::runtime rt{app, *cfg, "head"};
  if (rt.wait_for_nodes(cfg->nodes.size(), 30s) < cfg->nodes.size())
    return fail("the workers did not join within 30 s");
  // Only the workers offer `worker`: the work goes to them.
  swarm::task_options on_workers;
  on_workers.resources.set("worker", 1);
  auto placed_on = app.find_function<std::string()>("consumer.placed_on").value();
  std::vector<swarm::object_ref<std::string>> where;
  std::vector<swarm::object_ref<long>> squares;
  for (long i = 0; i < 100; ++i) {
    where.push_back(rt.submit(on_workers, placed_on));
    squares.push_back(rt.submit(on_workers, square, i));
  }
  for (long i = 0; i < 100; ++i) {
    auto node = where[static_cast<size_t>(i)].get(30s);
    if (!node) return fail(node.err().message);
    if (*node == "head") return fail("a task ran on the head");
    auto sq = squares[static_cast<size_t>(i)].get(30s);
    if (!sq || *sq != i * i) return fail("a square is wrong");
  }
  auto summer_t = app.find_actor_type<consumer::summer>("consumer.summer").value();
  swarm::actor_options on_a_worker;
  on_a_worker.resources.set("worker", 1);
  for (long i = 0; i < 10; ++i) {
    auto a = rt.spawn(on_a_worker, summer_t, i);
    auto home = a.call(&consumer::summer::home).get(30s);
    if (!home) return fail(home.err().message);
    if (*home == "head") return fail("an actor lives on the head");
    auto sum = a.call(&consumer::summer::add, 5L).get(30s);
    if (!sum || *sum != i + 5) return fail("an actor's sum is wrong");
  }
  std::printf("consumer: 100 tasks and 10 actors ran on the workers\n");
  return 0;
}
