#include <cstdio>
#include <string>
#include <vector>

#include "framework/version.hpp"
#include "tools/command.hpp"

namespace {

void usage(std::FILE* out) {
  std::fprintf(
      out,
      "usage: swarm <command> [options]\n"
      "\n"
      "commands:\n"
      "  demo   [--tasks N] [--cpus N] [--nodes N]  run the demo workload on an "
      "embedded cluster\n"
      "                                           (N > 1: of N local node processes)\n"
      "  demo   --config FILE --node NAME          the same, as one node of a cluster\n"
      "  bench  [--nodes 1|2] [--quick] [--filter S] [--json FILE] [--plot DIR]\n"
      "                                           measure latency and throughput beside "
      "their floors\n"
      "  bench  --compare OLD.json NEW.json       per-key ratios of two bench reports\n"
      "  start  --config FILE --node NAME [--load LIB]...\n"
      "                                           run that node of the cluster until "
      "stopped,\n"
      "                                           with the user code in LIB "
      "(SWARM_REGISTER)\n"
      "  status --config FILE [--wait N]           show nodes, resources and load (once "
      "N\n"
      "                                           nodes are alive, up to 30 s)\n"
      "  stop   --config FILE [--node NAME]        stop one node, or all of them\n"
      "  check-config --config FILE [--node NAME]  validate a cluster file\n"
      "  help                                      show this text\n"
      "  --version                                 the version and the build\n");
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (cmd == "demo") return swarm::tools::run_demo(args);
  if (cmd == "bench") return swarm::tools::run_bench(args);
  if (cmd == "check-config") return swarm::tools::run_check_config(args);
  if (cmd == "start") return swarm::tools::run_start(args);
  if (cmd == "status") return swarm::tools::run_status(args);
  if (cmd == "stop") return swarm::tools::run_stop(args);
  if (cmd == "floor-peer") return swarm::tools::run_floor_peer(args);
  if (cmd == "--version" || cmd == "version") {
    std::printf("swarm %s (library %s; built with %s)\n", SWARM_VERSION, swarm::version(),
                SWARM_BUILD_ID);
    return 0;
  }
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    usage(stdout);
    return 0;
  }
  std::fprintf(stderr, "swarm: unknown command '%s'\n\n", cmd.c_str());
  usage(stderr);
  return 2;
}
