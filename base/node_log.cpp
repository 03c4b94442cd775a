#include "base/node_log.hpp"

#include <spdlog/logger.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <array>
#include <cstdlib>

namespace swarm {

namespace {

constexpr std::array<const char*, 6> level_names{"trace", "debug", "info",
                                                 "warn",  "error", "off"};

// spdlog's levels have `critical` between `err` and `off`.
spdlog::level::level_enum to_spdlog(log_level level) {
  return level == log_level::off ? spdlog::level::off
                                 : static_cast<spdlog::level::level_enum>(level);
}

} // namespace

result<log_level> parse_log_level(const std::string& name) {
  for (size_t i = 0; i < level_names.size(); ++i)
    if (name == level_names[i]) return static_cast<log_level>(i);
  return error{errc::invalid_argument,
               "unknown log level '" + name +
                   "' (levels: trace, debug, info, warn, error, off)"};
}

const char* to_string(log_level level) {
  return level_names[static_cast<size_t>(level)];
}

node_log::node_log(const std::string& node, log_level level, log_sink sink)
    : level_(level), sink_(std::move(sink)) {
  result<log_level> from_env = level;
  if (auto* env = std::getenv("SWARM_LOG")) from_env = parse_log_level(env);
  if (from_env) level_ = *from_env;
  // Not registered with spdlog: each node owns its logger. stderr is unbuffered and
  // each line is one write, so the lines of nodes sharing a process stay whole.
  // The last lines are also kept for `swarm logs`.
  recent_ = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(kept_lines);
  std::vector<spdlog::sink_ptr> sinks{recent_};
  if (!sink_) sinks.push_back(std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger_ = std::make_shared<spdlog::logger>(node, sinks.begin(), sinks.end());
  logger_->set_pattern("%Y-%m-%d %H:%M:%S.%e [swarm" + (node.empty() ? "" : " " + node) +
                       "] %l: %v");
  logger_->set_level(to_spdlog(level_));
  if (!from_env) warn("SWARM_LOG is ignored: " + from_env.err().message);
}

node_log::node_log() : node_log("", log_level::info) {}

void node_log::write(log_level level, const std::string& line) const {
  if (!enabled(level) || level == log_level::off) return;
  if (sink_) sink_(level, line);
  logger_->log(to_spdlog(level), line);
}

std::vector<std::string> node_log::recent(size_t n) const {
  auto lines = recent_->last_formatted(n);
  for (auto& l : lines)
    while (!l.empty() && (l.back() == '\n' || l.back() == '\r'))
      l.pop_back();
  return lines;
}

} // namespace swarm
