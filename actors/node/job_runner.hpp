#pragma once

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/fwd.hpp>

#include <chrono>
#include <functional>
#include <string>

#include "actors/node/protocol.hpp"
#include "transport/tls_options.hpp"
#include "transport/wire_message.hpp"

namespace swarm::actors {

/// What the head's job runner needs.
struct job_runner_config {
  /// What a job finds in `SWARM_ADDRESS` and `SWARM_SECRET` to connect as a client
  /// (`client_options_from_env`): the head's host:port and the cluster's secret.
  std::string address;
  std::string secret;
  /// And in `SWARM_TLS` and its peers (`tls_from_env`): how it connects.
  wire_msg::tls_options tls;
  /// Who may submit, read and stop jobs: a request must carry it. Empty: jobs are off,
  /// and every request is refused saying so.
  std::string token;
  /// The user jobs run as (through setpriv, which needs the node to be root); empty: the
  /// node's.
  std::string run_as;
  /// Named in refusals.
  std::string cluster;
  /// Where each job's output is kept, as `<id>.log` (new files only, never through a
  /// symlink): a private folder the runner makes under `output_parent` and removes when
  /// it goes, or, when `output_dir` is set, that folder (made private if missing; kept).
  std::string output_parent;
  std::string output_dir;
  /// How long a stopped job has between SIGTERM and SIGKILL.
  std::chrono::milliseconds stop_grace{5000};
  /// Answers the one who asked; never blocks.
  std::function<void(const std::string& peer, wire_msg::message)> send;
};

/// Spawns the head's job runner: it answers only requests carrying its token, starts
/// each submitted program in a process group of
/// its own, its output (stdout and stderr) in a file only the node's user may read,
/// `SWARM_JOB_ID` in its environment beside the address and secret; notes how each ends
/// (exit code, or signal); answers questions about the jobs; stops one with SIGTERM, then
/// SIGKILL after the grace. Jobs still running when the runner goes are sent SIGTERM.
///   (job_atom, peer, job_submit)   answered with a job_answer holding its row
///   (job_atom, peer, job_ask)      status, output or stop, answered with a job_answer
caf::actor spawn_job_runner(caf::actor_system& sys, job_runner_config cfg);

} // namespace swarm::actors

// Only sent within a node.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::job_submit)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::wire_msg::job_ask)
