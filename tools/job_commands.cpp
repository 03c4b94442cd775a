// `swarm job submit|status|logs|stop`: programs run on the head as jobs of the cluster,
// their output kept there.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>

#include "framework/swarm.hpp"
#include "tools/command.hpp"

namespace swarm::tools {

namespace {

using namespace std::chrono_literals;

constexpr auto ask_timeout = 10s;

std::string when(uint64_t ms) {
  if (ms == 0) return "-";
  auto t = static_cast<std::time_t>(ms / 1000);
  char out[32];
  std::strftime(out, sizeof out, "%H:%M:%S", std::localtime(&t));
  return out;
}

void print_rows(const std::vector<job_state>& jobs) {
  std::printf("%-6s %-10s %-8s %-6s %-9s %-9s %s\n", "job", "state", "pid", "exit",
              "started", "ended", "command");
  for (auto& j : jobs) {
    auto exit = j.state == "running" ? std::string{"-"} : std::to_string(j.exit_code);
    std::printf("%-6llu %-10s %-8u %-6s %-9s %-9s %s\n",
                static_cast<unsigned long long>(j.id), j.state.c_str(), j.pid,
                exit.c_str(), when(j.started_ms).c_str(), when(j.ended_ms).c_str(),
                j.command.c_str());
  }
}

// Prints the job's output from the start; with `follow`, until it ended. Its exit code
// (1 when it did not succeed), or 1 when the head could not be asked.
int print_output(const cluster_config& cfg, uint64_t id, bool follow) {
  uint64_t offset = 0;
  for (;;) {
    auto out = job_output_from(cfg, id, offset, ask_timeout);
    if (!out) {
      std::fprintf(stderr, "swarm job logs: %s\n", out.err().message.c_str());
      return 1;
    }
    std::fwrite(out->text.data(), 1, out->text.size(), stdout);
    std::fflush(stdout);
    offset = out->end;
    bool ended = out->job.state != "running";
    if (!follow || (ended && out->text.empty())) {
      if (!follow) return 0;
      return out->job.state == "succeeded" ? 0 : 1;
    }
    if (out->text.empty()) std::this_thread::sleep_for(200ms);
  }
}

} // namespace

int run_job(const job_options& opts) {
  auto cfg = load("job", opts.config);
  if (!cfg) return 1;
  // The token need not be in a file every node has.
  if (const char* token = std::getenv("SWARM_JOB_TOKEN"); token && *token)
    cfg->jobs.token = token;
  if (opts.action == "submit") {
    auto j = submit_job(*cfg, opts.argv, opts.cwd, ask_timeout);
    if (!j) {
      std::fprintf(stderr, "swarm job submit: %s\n", j.err().message.c_str());
      return 1;
    }
    std::printf("job %llu started on the head '%s' (pid %u): %s\n",
                static_cast<unsigned long long>(j->id), cfg->head().name.c_str(), j->pid,
                j->command.c_str());
    std::fflush(stdout);
    return opts.follow ? print_output(*cfg, j->id, true) : 0;
  }
  if (opts.action == "status") {
    auto jobs = list_jobs(*cfg, opts.id, ask_timeout);
    if (!jobs) {
      std::fprintf(stderr, "swarm job status: %s\n", jobs.err().message.c_str());
      return 1;
    }
    if (jobs->empty()) {
      std::printf("no job was submitted to the head '%s' since it started\n",
                  cfg->head().name.c_str());
      return 0;
    }
    print_rows(*jobs);
    return 0;
  }
  if (opts.action == "logs") return print_output(*cfg, opts.id, opts.follow);
  auto j = stop_job(*cfg, opts.id, ask_timeout);
  if (!j) {
    std::fprintf(stderr, "swarm job stop: %s\n", j.err().message.c_str());
    return 1;
  }
  std::printf("job %llu: %s\n", static_cast<unsigned long long>(j->id),
              j->state == "running" ? "asked to stop (SIGTERM, SIGKILL in 5 s)"
                                    : ("already " + j->state).c_str());
  return 0;
}

} // namespace swarm::tools
