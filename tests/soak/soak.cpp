// The soak check: a head (this process) and one worker node process on 127.0.0.1 run a
// mixed workload for a while (puts and frees, tasks, actor calls, 200 KiB results that
// the head pulls, actors spawned on the worker and dropped), and both processes' RSS is
// sampled. It fails when either grew by more than the allowed amount between the first
// sample after warm-up and the last.
//
//   swarm_soak run [--seconds N] [--sample-seconds S] [--max-growth-mib M]
//   swarm_soak node --config F --node N    the worker node (started by `run`)

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "framework/local_cluster.hpp"
#include "framework/swarm.hpp"
#include "tests/cluster/child_node.hpp"
#include "tests/cluster/node_process.hpp"
#include "tests/cluster/test_app.hpp"

using namespace std::chrono_literals;
using namespace swarm::cluster_test;
using clock_type = std::chrono::steady_clock;

namespace {

size_t rss_kib(int pid) {
  std::ifstream statm{"/proc/" + std::to_string(pid) + "/statm"};
  size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<size_t>(::sysconf(_SC_PAGESIZE)) / 1024;
}

std::string cluster_file(const std::vector<uint16_t>& ports) {
  return "[cluster]\nname = \"soak\"\nsecret = \"the-soak-check-secret\"\ngcs_shards = 2\n"
         "[[node]]\nname = \"head\"\naddress = \"127.0.0.1\"\nport = " +
         std::to_string(ports[0]) +
         "\nrole = \"head\"\ncpus = 2\n"
         "[[node]]\nname = \"worker-1\"\naddress = \"127.0.0.1\"\nport = " +
         std::to_string(ports[1]) + "\ncpus = 2\n";
}

struct options {
  int seconds = 600;
  int sample_seconds = 10;
  size_t max_growth_mib = 16;
};

// One round of the workload; returns whether every value was right.
bool one_round(swarm::runtime& rt, swarm::actor_handle<counter>& ctr, int i) {
  auto add = rt.app().find_function<int(int, int)>("add").value();
  auto blob_fn = rt.app().find_function<std::vector<uint8_t>(int)>("blob").value();
  auto ballast_t = rt.app().find_actor_type<ballast>("ballast").value();
  swarm::task_options on_worker;
  on_worker.node = "worker-1";
  auto put = rt.put(std::vector<uint8_t>(256, static_cast<uint8_t>(i)));
  bool ok = put.get(5s).value()[0] == static_cast<uint8_t>(i);
  rt.free(put);
  ok = ok && rt.submit(on_worker, add, i, 1).get(10s).value() == i + 1;
  ok = ok && ctr.call(&counter::add, 1).get(10s).has_value();
  auto big = rt.submit(on_worker, blob_fn, 200 << 10).get(10s);
  ok = ok && big && big->size() == (200u << 10) && (*big)[7] == 7;
  if (i % 10 == 0) {
    swarm::actor_options ao;
    ao.node = "worker-1";
    auto a = rt.spawn(ao, ballast_t, 64);
    ok = ok && a.call(&ballast::kib).get(10s).value() == 64;
  }
  return ok;
}

int run(const options& o) {
  char tmpl[] = "/tmp/swarm-soak-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  auto ports = swarm::free_local_ports(2);
  if (!ports) {
    std::fprintf(stderr, "soak: %s\n", ports.err().message.c_str());
    return 2;
  }
  std::string config = dir + "/cluster.toml";
  std::ofstream{config} << cluster_file(*ports);
  auto cfg = swarm::load_cluster_config(config).value();
  swarm::application app;
  register_all(app);
  swarm::runtime rt{app, cfg, "head"};
  char exe[4096] = {};
  auto len = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  node_process worker{std::string{exe, len > 0 ? static_cast<size_t>(len) : 0},
                      {"node", "--config", config, "--node", "worker-1"},
                      dir + "/worker-1.log"};
  for (int i = 0; i < 300; ++i) {
    auto s = swarm::cluster_status(cfg, 2s);
    if (s && s->alive() == 2) break;
    std::this_thread::sleep_for(50ms);
  }
  auto counter_t = app.find_actor_type<counter>("counter").value();
  swarm::actor_options on_worker;
  on_worker.node = "worker-1";
  auto ctr = rt.spawn(on_worker, counter_t, 0);
  auto start = clock_type::now();
  auto end = start + std::chrono::seconds(o.seconds);
  auto next_sample = start;
  // The first sample after a fifth of the run (warm-up) is what growth is measured from.
  auto warm_until = start + std::chrono::seconds(o.seconds) / 5;
  size_t head_base = 0, worker_base = 0, head_now = 0, worker_now = 0;
  long rounds = 0, wrong = 0;
  while (clock_type::now() < end) {
    if (!one_round(rt, ctr, static_cast<int>(rounds % 1000))) ++wrong;
    ++rounds;
    if (clock_type::now() < next_sample) continue;
    head_now = rss_kib(::getpid());
    worker_now = rss_kib(worker.pid());
    if (head_base == 0 && clock_type::now() >= warm_until) {
      head_base = head_now;
      worker_base = worker_now;
    }
    auto t = std::chrono::duration_cast<std::chrono::seconds>(clock_type::now() - start);
    std::printf("soak: t=%lds rounds=%ld head_rss_kib=%zu worker_rss_kib=%zu\n",
                static_cast<long>(t.count()), rounds, head_now, worker_now);
    std::fflush(stdout);
    next_sample += std::chrono::seconds(o.sample_seconds);
  }
  if (head_base == 0) {
    head_base = head_now;
    worker_base = worker_now;
  }
  auto grown = [](size_t from, size_t to) { return to > from ? to - from : 0; };
  auto head_growth = grown(head_base, head_now), worker_growth = grown(worker_base, worker_now);
  std::printf("soak: seconds=%d rounds=%ld wrong=%ld head_growth_kib=%zu "
              "worker_growth_kib=%zu (allowed %zu MiB)\n",
              o.seconds, rounds, wrong, head_growth, worker_growth, o.max_growth_mib);
  bool flat = std::max(head_growth, worker_growth) <= o.max_growth_mib * 1024;
  return wrong == 0 && rounds > 0 && flat ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "node")
    return serve_child_node({args.begin() + 1, args.end()}, "swarm_soak", register_all);
  options o;
  bool usage = args.empty() || args[0] != "run";
  for (size_t i = 1; !usage && i < args.size(); i += 2) {
    if (i + 1 >= args.size()) {
      usage = true;
    } else if (args[i] == "--seconds") {
      o.seconds = std::stoi(args[i + 1]);
    } else if (args[i] == "--sample-seconds") {
      o.sample_seconds = std::stoi(args[i + 1]);
    } else if (args[i] == "--max-growth-mib") {
      o.max_growth_mib = std::stoul(args[i + 1]);
    } else {
      usage = true;
    }
  }
  if (usage || o.seconds < 1 || o.sample_seconds < 1) {
    std::fprintf(stderr, "usage: swarm_soak run [--seconds N] [--sample-seconds S] "
                         "[--max-growth-mib M]\n"
                         "       swarm_soak node --config FILE --node NAME\n");
    return 2;
  }
  return run(o);
}
