#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/private_dir.hpp"
#include "base/result.hpp"
#include "framework/cluster_config.hpp"

namespace swarm::actors {

/// Where the nodes a provider starts find the cluster: the head's host:port, the secret,
/// and the program `"$SWARM_PROGRAM"` names (the head's own, by default).
struct provider_target {
  std::string head_address;
  std::string secret;
  wire_msg::tls_options tls; ///< given as `SWARM_TLS` and its peers (`tls_env`)
  std::string program;
};

/// Starts and stops the autoscaler's nodes by the commands of its config, each run by
/// /bin/sh with the node's SWARM_* variables (see `autoscaler_config`) and its output
/// kept in a private folder. The local provider's command is the node: it runs on as a
/// child of this process, stopped and reaped when the provider goes. The command
/// provider's commands ask for a node and return. Calls block (they wait for commands):
/// the autoscaler makes them off its own thread, one at a time.
class node_provider {
public:
  /// An error naming the folder when none could be made for the output.
  static result<node_provider> make(autoscaler_config cfg, provider_target target);

  node_provider(node_provider&&) noexcept = default;
  node_provider& operator=(node_provider&&) noexcept = default;
  /// Stops the local nodes still running (SIGTERM; SIGKILL 5 s later) and reaps them.
  ~node_provider();

  /// Starts node `name` of `type`; an error with the command's exit and last output when
  /// it failed (the command provider's exited other than 0, or not within the launch
  /// timeout; the local provider's could not start).
  result<void> launch(const node_type& type, const std::string& name);

  /// Gives back node `name`, asked to stop before: the command provider runs its stop
  /// command; the local provider ends the process if it still runs after `grace`.
  result<void> release(const std::string& name, std::chrono::milliseconds grace);

  /// Takes on node `name` of `type`, started for an earlier head (one that died while it
  /// ran): its release runs the stop command with its type. A local one is no child of
  /// this process: it stops itself when asked, and nothing more is done.
  void adopt(const node_type& type, const std::string& name);

  /// The local nodes whose process ended since asked last, each with how (its exit and
  /// last output).
  std::vector<std::pair<std::string, std::string>> ended();

private:
  node_provider(autoscaler_config cfg, provider_target target, private_dir dir)
      : cfg_(std::move(cfg)), target_(std::move(target)), dir_(std::move(dir)) {}

  // Runs `command` for node `name` of `type` (output to its file); its pid.
  result<pid_t> spawn(const std::string& command, const node_type& type,
                      const std::string& name);
  // Runs `command` (`what`, for errors) for node `name` of `type` and waits for it, up
  // to the launch timeout; an error saying how it ended unless it exited with 0.
  result<void> run_to_end(const char* what, const std::string& command,
                          const node_type& type, const std::string& name);
  // How a command for `name` ended (`status` from waitpid), with its last output.
  std::string how_it_ended(const std::string& name, int status) const;

  autoscaler_config cfg_;
  provider_target target_;
  private_dir dir_;
  std::map<std::string, pid_t> running_; // local nodes by name
  std::map<std::string, node_type> types_;
};

} // namespace swarm::actors
