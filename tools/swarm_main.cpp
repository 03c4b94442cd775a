// The `swarm` tool: one CLI11 parser for every subcommand (`--help` on each,
// `--opt=value` or `--opt value`, `swarm --version`).

#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "framework/version.hpp"
#include "tools/command.hpp"

using namespace swarm::tools;

int main(int argc, char** argv) {
  CLI::App app{"Swarm: distributed tasks and actors for AI workloads", "swarm"};
  app.set_version_flag("--version",
                       std::string{"swarm "} + SWARM_VERSION + " (library " +
                           swarm::version() + "; built with " + SWARM_BUILD_ID + ")",
                       "the version and the build");
  app.require_subcommand(1);

  demo_options demo;
  auto* d = app.add_subcommand("demo", "run the demo workload on an embedded node, on a "
                                       "local cluster of --nodes processes, or as one "
                                       "node of a cluster (--config and --node)");
  d->add_option("--tasks", demo.tasks, "how many evaluations to run")
      ->capture_default_str();
  d->add_option("--cpus", demo.cpus, "CPUs of each node (default: the machine's)");
  d->add_option("--nodes", demo.nodes,
                "more than 1: a local cluster of that many processes");
  d->add_option("--config", demo.config, "a cluster file, to run as one of its nodes");
  d->add_option("--node", demo.node, "the node of --config to run as");

  bench_options bench;
  auto* b = app.add_subcommand("bench", "measure latency and throughput beside their "
                                        "floors, or compare two reports");
  auto measuring = [&](CLI::Option* o) {
    o->each([&](const std::string&) { bench.measuring_option = true; });
    return o;
  };
  measuring(b->add_option("--nodes", bench.nodes,
                          "1: single-node figures only; 2 (default): also across two "
                          "node processes; 3-16: also calls and tasks spread over N-1 "
                          "node processes"));
  measuring(b->add_option("--sim", bench.sim,
                          "only the control plane of N simulated nodes in this process "
                          "(2-4000): joins, heartbeats, node tables, placements"));
  b->add_flag("--quick", bench.quick, "fewer repetitions and shorter caps");
  measuring(b->add_option("--filter", bench.filter,
                          "only the workloads whose name contains this"));
  measuring(b->add_option("--json", bench.json_path,
                          "write every figure as a JSON object of key: number"));
  measuring(b->add_option("--plot", bench.plot_dir,
                          "write latency.svg and ratios.svg into this folder"));
  b->add_option("--compare", bench.compare,
                "print NEW/OLD for every key of two --json reports (OLD.json NEW.json)")
      ->expected(2);

  start_options start;
  auto* st = app.add_subcommand("start", "run a node of the cluster until stopped");
  st->add_option("--config", start.config,
                 "the cluster file (with --address: for its secret and node settings "
                 "only)");
  st->add_option("--node", start.node,
                 "the node of the file to run; with --address, the name to join under "
                 "(default node-HOST-PID)");
  auto* address = st->add_option("--address", start.address,
                                 "join the running cluster whose head is at HOST:PORT "
                                 "as a new node (its secret from --config, or "
                                 "SWARM_SECRET)");
  st->add_option("--port", start.port, "with --address: the port to listen on (default "
                                       "any free one)")
      ->needs(address);
  st->add_option("--advertise", start.advertise,
                 "with --address: the address other nodes reach this one at (default "
                 "this host's address on the route to the head)")
      ->needs(address);
  st->add_option("--cpus", start.cpus, "with --address: the CPUs to offer (default all)")
      ->needs(address)
      ->check(CLI::NonNegativeNumber);
  st->add_option("--gpus", start.gpus, "with --address: the GPUs to offer (default all)")
      ->needs(address);
  st->add_option("--resources", start.resources,
                 "with --address: custom resources to offer, NAME=AMOUNT,... (e.g. "
                 "TPU=2,ssd=1)")
      ->needs(address);
  st->add_option("--node-type", start.node_type,
                 "with --address: the autoscaler's node type this node was started as "
                 "(its provider's command passes \"$SWARM_NODE_TYPE\"), so a restarted "
                 "head's autoscaler knows it")
      ->needs(address);
  st->add_option("--load", start.libraries,
                 "a library of user code to load (SWARM_REGISTER); may repeat")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  st->add_option("--wait", start.wait,
                 "print a line 'ready' on stdout once this many nodes are alive, or stop "
                 "with exit code 1 after --wait-timeout");
  st->add_flag("--no-metrics", start.no_metrics,
               "do not serve Prometheus metrics (by default on the node's metrics_port, "
               "or its port + 1000)");
  st->add_flag("--no-dashboard", start.no_dashboard,
               "the head serves no dashboard (by default on its dashboard_port, or its "
               "port + 2000)");
  st->add_option("--wait-timeout", start.wait_timeout_s, "seconds --wait waits")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);

  status_options status;
  auto* s = app.add_subcommand("status", "show the nodes, their resources, load and "
                                         "store, and the nodes that never joined");
  s->add_option("--config", status.config, "the cluster file")->required();
  s->add_option("--wait", status.wait,
                "first wait (up to --wait-timeout) until this many nodes are alive");
  s->add_option("--wait-timeout", status.wait_timeout_s, "seconds --wait waits")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);

  list_options list;
  auto* ls = app.add_subcommand("list", "list the tasks, actors, objects or recent "
                                        "failures of the alive nodes");
  ls->add_option("what", list.what,
                 "tasks, actors, objects or failures (the last 100 tasks that failed on "
                 "each node, newest first, with their errors)")
      ->required()
      ->check(CLI::IsMember({"tasks", "actors", "objects", "failures"}));
  ls->add_option("--config", list.config, "the cluster file")->required();
  ls->add_option("--node", list.node, "only this node's");
  ls->add_option("--filter", list.filter, "only lines that contain this text");
  ls->add_option("--state", list.state,
                 "only in this state (queued, dispatched, running; alive, dead; "
                 "stored, spilled)");

  timeline_options timeline;
  auto* tl = app.add_subcommand("timeline", "write the tasks, actor calls and pulls "
                                            "that ended lately on every node as a "
                                            "Chrome / Perfetto trace");
  tl->add_option("--config", timeline.config, "the cluster file")->required();
  tl->add_option("--out", timeline.out, "the trace file to write (JSON)")->required();
  tl->add_option("--node", timeline.node, "only this node's events");

  logs_options logs;
  auto* lg = app.add_subcommand("logs", "print the last lines of a node's log");
  lg->add_option("--config", logs.config, "the cluster file")->required();
  lg->add_option("--node", logs.node, "the node")->required();
  lg->add_option("--lines", logs.lines, "how many of its last lines (it keeps 1000)")
      ->capture_default_str();

  stop_options stop;
  auto* sp = app.add_subcommand("stop", "stop one node, or all of them");
  sp->add_option("--config", stop.config, "the cluster file")->required();
  sp->add_option("--node", stop.node,
                 "the node to stop (default: every node); waited for, up to the "
                 "file's stop_timeout_ms, and what it did with its work is printed");

  job_options job;
  auto* jb = app.add_subcommand("job", "run a program on the head as a job of the "
                                       "cluster, and follow, list or stop it (with the "
                                       "file's [jobs] token, or SWARM_JOB_TOKEN)");
  jb->require_subcommand(1);
  auto* js =
      jb->add_subcommand("submit", "start PROGRAM ARGS... on the head; it connects "
                                   "as a client (SWARM_ADDRESS, SWARM_SECRET)");
  js->add_option("--config", job.config, "the cluster file")->required();
  js->add_option("--cwd", job.cwd, "the folder it runs in, on the head");
  js->add_flag("--follow", job.follow,
               "print its output until it ends, and exit as it did");
  js->add_option("command", job.argv, "the program and its arguments (after --)")
      ->required();
  auto* jst = jb->add_subcommand("status", "list the jobs, or one");
  jst->add_option("--config", job.config, "the cluster file")->required();
  jst->add_option("id", job.id, "the job");
  auto* jl = jb->add_subcommand("logs", "print a job's output");
  jl->add_option("--config", job.config, "the cluster file")->required();
  jl->add_option("id", job.id, "the job")->required();
  jl->add_flag("--follow", job.follow, "until it ends");
  auto* jp = jb->add_subcommand("stop", "stop a job: SIGTERM, then SIGKILL after 5 s");
  jp->add_option("--config", job.config, "the cluster file")->required();
  jp->add_option("id", job.id, "the job")->required();

  check_config_options check;
  auto* c = app.add_subcommand("check-config", "validate a cluster file");
  c->add_option("--config", check.config, "the cluster file")->required();
  c->add_option("--node", check.node, "a node the file must name");

  std::vector<std::string> peer_args;
  auto* fp = app.add_subcommand("floor-peer", "")->group(""); // internal: bench floors
  fp->add_option("args", peer_args)->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and the version exit 0; a wrong command line exits 2.
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (d->parsed()) return run_demo(demo);
  if (b->parsed()) return run_bench(bench);
  if (st->parsed()) return run_start(start);
  if (s->parsed()) return run_status(status);
  if (sp->parsed()) return run_stop(stop);
  if (ls->parsed()) return run_list(list);
  if (tl->parsed()) return run_timeline(timeline);
  if (lg->parsed()) return run_logs(logs);
  if (c->parsed()) return run_check_config(check);
  if (jb->parsed()) {
    for (auto* sub : {js, jst, jl, jp})
      if (sub->parsed()) job.action = sub->get_name();
    return run_job(job);
  }
  return run_floor_peer(peer_args);
}
