// A job and a client: this program starts a one-node cluster with jobs on, submits
// itself to the head as a job (as `swarm job submit -- ./job_client --as-job` does), and
// the job connects back to the cluster as a client, runs tasks there and prints what
// they returned. The first run reads the job's output on the head and checks it.
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>

#include <unistd.h>

#include <swarm/swarm.hpp>

using namespace std::chrono_literals;

long square(long x) {
  return x * x;
}

std::string where(swarm::context& ctx) {
  return ctx.node_name();
}

// The job: a client of the cluster that started it (its address and secret are in the
// environment the head gave it).
int as_job(const swarm::application& app) {
  auto options = swarm::client_options_from_env();
  if (!options) {
    std::fprintf(stderr, "not started as a job: %s\n", options.err().to_string().c_str());
    return 2;
  }
  swarm::runtime rt{app, *options}; // no CPUs here: the tasks run on the cluster
  auto square_fn = app.find_function<long(long)>("square").value();
  auto where_fn = app.find_function<std::string()>("where").value();
  long sum = 0;
  for (long i = 1; i <= 10; ++i)
    sum += rt.submit(square_fn, i).get(10s).value();
  std::printf("sum of squares 1..10 = %ld, computed on node '%s'\n", sum,
              rt.submit(where_fn).get(10s).value().c_str());
  return 0;
}

// A token of its own for the jobs: the cluster's secret does not let anyone run one.
std::string random_token() {
  std::random_device seed;
  std::string out;
  for (int i = 0; i < 32; ++i)
    out += "0123456789abcdef"[seed() % 16];
  return out;
}

int main(int argc, char** argv) {
  swarm::application app; // the job registers the same functions, with the same names
  app.function("square", square);
  app.function("where", where);
  if (argc > 1 && std::string{argv[1]} == "--as-job") return as_job(app);

  swarm::local_cluster_config one;
  one.nodes = 1;
  one.cpus_per_node = 2;
  auto cfg = swarm::make_local_cluster(one).value();
  cfg.jobs.token = random_token();
  swarm::runtime head{app, cfg, "head"};

  char self[4096];
  auto n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return 1;
  auto job = swarm::submit_job(
                 cfg, {std::string(self, static_cast<size_t>(n)), "--as-job"}, "", 10s)
                 .value();
  std::printf("job %llu started on the head as process %u\n",
              static_cast<unsigned long long>(job.id), job.pid);
  // Bounded: the job is done in well under a second on any machine.
  for (int i = 0; i < 300 && job.state == "running"; ++i) {
    std::this_thread::sleep_for(100ms);
    job = swarm::list_jobs(cfg, job.id, 10s).value().at(0);
  }
  auto out = swarm::job_output_from(cfg, job.id, 0, 10s).value();
  std::printf("job %llu %s (exit code %d); it wrote:\n%s",
              static_cast<unsigned long long>(job.id), job.state.c_str(), job.exit_code,
              out.text.c_str());
  bool ok = job.state == "succeeded" &&
            out.text.find("sum of squares 1..10 = 385, computed on node 'head'") !=
                std::string::npos;
  return ok ? 0 : 1;
}
