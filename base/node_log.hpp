#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/result.hpp"

namespace spdlog {
class logger;
namespace sinks {
template <typename Mutex> class ringbuffer_sink;
} // namespace sinks
} // namespace spdlog

namespace swarm {

/// How much a node writes to its log, from everything to nothing.
enum class log_level { trace, debug, info, warn, error, off };

/// The level named `name` ("trace", "debug", "info", "warn", "error", "off"); an
/// unknown name is an error listing the names.
result<log_level> parse_log_level(const std::string& name);

/// The name of `level`, e.g. "debug".
const char* to_string(log_level level);

/// Where a node's log lines go instead of stderr: each line, without timestamp or
/// prefix, with its level. Called from any of the node's threads.
using log_sink = std::function<void(log_level level, const std::string& line)>;

/// A node's log: lines on stderr (or a `log_sink`), each with a timestamp, one prefix
/// "[swarm NODE]" and its level, written when at least as severe as the log's level.
/// Copies write to the same log; any thread may write.
class node_log {
public:
  /// A log for node `node` at `level`. `SWARM_LOG` in the environment, when it names a
  /// level, overrides `level`: the operator's switch for one run.
  node_log(const std::string& node, log_level level, log_sink sink = {});

  /// The log of a process that is not a node yet ("[swarm]", at info).
  node_log();

  log_level level() const noexcept { return level_; }
  bool enabled(log_level level) const noexcept { return level >= level_; }

  void write(log_level level, const std::string& line) const;
  void trace(const std::string& line) const { write(log_level::trace, line); }
  void debug(const std::string& line) const { write(log_level::debug, line); }
  void info(const std::string& line) const { write(log_level::info, line); }
  void warn(const std::string& line) const { write(log_level::warn, line); }
  void error(const std::string& line) const { write(log_level::error, line); }

  /// The last `n` lines written (at most `kept_lines`), oldest first, as stderr shows
  /// them.
  std::vector<std::string> recent(size_t n = kept_lines) const;

  /// How many of the last lines a log keeps for `recent`.
  static constexpr size_t kept_lines = 1000;

private:
  log_level level_;
  std::shared_ptr<spdlog::logger> logger_; // its sinks: `recent_`, and stderr
  std::shared_ptr<spdlog::sinks::ringbuffer_sink<std::mutex>> recent_;
  log_sink sink_;
};

} // namespace swarm
