// `swarm demo`: evolution strategies on an embedded cluster. A parameter-server actor
// holds the parameters; each generation, hundreds of tasks evaluate perturbed copies,
// reading the parameters through a future passed as their argument; the driver folds the
// rewards into an update. Midway the parameter server is crashed on purpose: it restarts,
// and the driver restores it from the last parameters it put into the object store.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "framework/swarm.hpp"
#include "tools/bench_workloads.hpp"
#include "tools/command.hpp"

namespace swarm::tools {

namespace {

using params_t = std::vector<double>;

constexpr size_t dims = 64;

// The hidden optimum the search should approach.
params_t target() {
  params_t t(dims);
  for (size_t i = 0; i < dims; ++i)
    t[i] = std::sin(static_cast<double>(i)) * 3.0;
  return t;
}

double reward(const params_t& p, const params_t& goal) {
  double d = 0;
  for (size_t i = 0; i < dims; ++i)
    d += (p[i] - goal[i]) * (p[i] - goal[i]);
  return -d;
}

params_t noise(uint64_t seed) {
  std::mt19937_64 gen{seed};
  std::normal_distribution<double> n{0.0, 1.0};
  params_t e(dims);
  for (auto& x : e)
    x = n(gen);
  return e;
}

class parameter_server : public actor {
public:
  parameter_server() : params_(dims, 0.0) {}

  params_t params() const { return params_; }

  double apply(const params_t& step) {
    for (size_t i = 0; i < dims; ++i)
      params_[i] += step[i];
    ++version_;
    return reward(params_, target());
  }

  int restore(const params_t& p) {
    params_ = p;
    return version_;
  }

  void fail(const std::string& why) { throw actor_failure(why); }

  void on_restart(const error& cause) override {
    std::printf("  ! parameter server restarted (%s)\n", cause.message.c_str());
  }

private:
  params_t params_;
  int version_ = 0;
};

// Antithetic pair: evaluates params + sigma*e and params - sigma*e for one noise seed.
double evaluate(const params_t& p, uint64_t seed) {
  static const params_t goal = target();
  auto e = noise(seed);
  params_t plus = p, minus = p;
  for (size_t i = 0; i < dims; ++i) {
    plus[i] += 0.1 * e[i];
    minus[i] -= 0.1 * e[i];
  }
  return reward(plus, goal) - reward(minus, goal);
}

// Checks what parsing cannot: values in range, and options that go together.
bool check(const demo_options& out) {
  for (auto [flag, x] : {std::pair{"--tasks", static_cast<double>(out.tasks)},
                         std::pair{"--nodes", static_cast<double>(out.nodes)},
                         std::pair{"--cpus", out.cpus.value_or(1)}})
    if (!(x > 0)) {
      std::fprintf(stderr, "swarm demo: %s must be a positive number, got %g\n", flag, x);
      return false;
    }
  if (out.config.empty() != out.node.empty()) {
    std::fprintf(stderr, "swarm demo: --config and --node go together\n");
    return false;
  }
  if (out.nodes > 1 && !out.config.empty()) {
    std::fprintf(stderr,
                 "swarm demo: --nodes starts a local cluster; --config joins one: "
                 "give one of them\n");
    return false;
  }
  return true;
}

} // namespace

void register_demo(application& app) {
  app.function("demo.evaluate", evaluate);
  app.actor_type<parameter_server>("demo.parameter_server")
      .method("params", &parameter_server::params)
      .method("apply", &parameter_server::apply)
      .method("restore", &parameter_server::restore)
      .method("fail", &parameter_server::fail);
}

void register_builtins(application& app) {
  register_demo(app);
  register_bench(app);
}

int run_demo(const demo_options& opts) {
  if (!check(opts)) return 2;
  using clock = std::chrono::steady_clock;
  auto started = clock::now();

  application app;
  register_builtins(app);
  const params_t goal = target();
  auto evaluate_fn =
      app.find_function<double(const params_t&, uint64_t)>("demo.evaluate").value();
  auto ps_t = app.find_actor_type<parameter_server>("demo.parameter_server").value();

  std::unique_ptr<runtime> rt_owner;
  if (opts.nodes > 1) {
    local_cluster_config lc;
    lc.nodes = opts.nodes;
    lc.cpus_per_node = opts.cpus;
    rt_owner = std::make_unique<runtime>(app, lc);
    std::printf(
        "swarm demo: evolution strategies, %zu-dim, on a local cluster of %zu node "
        "processes\n",
        dims, opts.nodes);
  } else if (opts.config.empty()) {
    runtime_config cfg;
    cfg.cpus = opts.cpus;
    rt_owner = std::make_unique<runtime>(app, cfg);
    std::printf(
        "swarm demo: evolution strategies, %zu-dim, on an embedded node with %s\n", dims,
        rt_owner->total_resources().to_string().c_str());
  } else {
    auto cluster = load_cluster_config(opts.config);
    if (!cluster) {
      std::fprintf(stderr, "swarm demo: %s\n", cluster.err().message.c_str());
      return 1;
    }
    rt_owner = std::make_unique<runtime>(app, *cluster, opts.node);
    std::printf(
        "swarm demo: evolution strategies, %zu-dim, as node '%s' of cluster '%s'\n", dims,
        opts.node.c_str(), cluster->name.c_str());
  }
  auto& rt = *rt_owner;

  actor_options ps_opts;
  ps_opts.max_restarts = 3;
  ps_opts.name = "parameter_server";
  auto ps = rt.spawn(ps_opts, ps_t);

  const size_t population = std::max<size_t>(10, std::min<size_t>(200, opts.tasks / 10));
  const size_t generations = std::max<size_t>(4, opts.tasks / population);
  uint64_t seed = 1;
  size_t tasks_run = 0, restarts = 0;
  double first_reward = reward(params_t(dims, 0.0), goal), last_reward = first_reward;
  auto checkpoint = rt.put(params_t(dims, 0.0));
  double task_seconds = 0;

  for (size_t g = 0; g < generations; ++g) {
    if (g == generations / 2) {
      std::printf("  * injecting a crash into the parameter server\n");
      auto crashed = ps.call(&parameter_server::fail, std::string{"injected by the demo"})
                         .get(std::chrono::seconds(10));
      if (crashed || crashed.err().code != errc::actor_died) {
        std::fprintf(stderr, "swarm demo: the injected crash was not reported\n");
        return 1;
      }
      ++restarts;
      // The fresh instance starts from zero; the last checkpoint brings it back.
      auto v =
          ps.call(&parameter_server::restore, checkpoint).get(std::chrono::seconds(10));
      if (!v) {
        std::fprintf(stderr, "swarm demo: could not restore the parameter server: %s\n",
                     v.err().to_string().c_str());
        return 1;
      }
      std::printf("  * parameters restored from checkpoint %s\n",
                  checkpoint.id().to_string().c_str());
    }
    auto gen_start = clock::now();
    auto params = ps.call(&parameter_server::params); // a future, passed on unread
    std::vector<object_ref<double>> scores;
    std::vector<uint64_t> seeds;
    for (size_t k = 0; k < population; ++k) {
      seeds.push_back(seed);
      scores.push_back(rt.submit(evaluate_fn, params, seed++));
    }
    params_t step(dims, 0.0);
    for (size_t k = 0; k < population; ++k) {
      auto s = scores[k].get(std::chrono::seconds(30));
      if (!s) {
        std::fprintf(stderr, "swarm demo: evaluation failed: %s\n",
                     s.err().to_string().c_str());
        return 1;
      }
      auto e = noise(seeds[k]);
      for (size_t i = 0; i < dims; ++i)
        step[i] += 0.02 / (population * 0.1) * (*s) * e[i];
    }
    tasks_run += population;
    task_seconds += std::chrono::duration<double>(clock::now() - gen_start).count();
    auto r = ps.call(&parameter_server::apply, step).get(std::chrono::seconds(10));
    if (!r) {
      std::fprintf(stderr, "swarm demo: update failed: %s\n",
                   r.err().to_string().c_str());
      return 1;
    }
    last_reward = *r;
    checkpoint = rt.put(ps.call(&parameter_server::params).get().value());
    if (g % std::max<size_t>(1, generations / 20) == 0 || g + 1 == generations)
      std::printf(
          "  gen %3zu/%zu: reward %10.3f  (%zu tasks, %.1f ms)\n", g, generations,
          last_reward, population,
          std::chrono::duration<double, std::milli>(clock::now() - gen_start).count());
  }

  auto total = std::chrono::duration<double>(clock::now() - started).count();
  auto st = rt.stats();
  std::printf("\nresult: reward %.3f -> %.3f (%s)\n", first_reward, last_reward,
              last_reward > first_reward ? "improved" : "NOT improved");
  std::printf("timing: %zu tasks in %.3f s of generations (%.0f tasks/s), %.3f s total; "
              "%zu parameter-server restart(s); %zu workers\n",
              tasks_run, task_seconds, tasks_run / std::max(task_seconds, 1e-9), total,
              restarts, st.workers);
  return last_reward > first_reward && restarts == 1 ? 0 : 1;
}

} // namespace swarm::tools
