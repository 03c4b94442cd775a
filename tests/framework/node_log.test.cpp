#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "base/node_log.hpp"

using swarm::log_level;
using swarm::node_log;

namespace {

using lines = std::vector<std::pair<log_level, std::string>>;

node_log capturing(log_level level, lines& out) {
  return node_log{"n", level, [&out](log_level l, const std::string& line) {
                    out.emplace_back(l, line);
                  }};
}

} // namespace

TEST_CASE("a log level is parsed from its name, and an unknown name lists the levels") {
  CHECK(swarm::parse_log_level("debug").value() == log_level::debug);
  CHECK(swarm::parse_log_level("off").value() == log_level::off);
  for (auto l : {log_level::trace, log_level::debug, log_level::info, log_level::warn,
                 log_level::error, log_level::off})
    CHECK(swarm::parse_log_level(swarm::to_string(l)).value() == l);
  auto bad = swarm::parse_log_level("loud");
  REQUIRE_FALSE(bad);
  CHECK(bad.err().message ==
        "unknown log level 'loud' (levels: trace, debug, info, warn, error, off)");
}

TEST_CASE("a node's log writes the lines at its level and above, and copies share it") {
  ::unsetenv("SWARM_LOG");
  lines got;
  auto log = capturing(log_level::info, got);
  auto copy = log;
  log.debug("churn");
  log.info("serving");
  copy.warn("a restart");
  log.error("a failure");
  CHECK(got == lines{{log_level::info, "serving"},
                     {log_level::warn, "a restart"},
                     {log_level::error, "a failure"}});
  CHECK_FALSE(log.enabled(log_level::debug));
  got.clear();
  auto quiet = capturing(log_level::off, got);
  quiet.error("nothing");
  CHECK(got.empty());
}

TEST_CASE("SWARM_LOG overrides a node's configured level, and a wrong one is reported") {
  lines got;
  ::setenv("SWARM_LOG", "debug", 1);
  auto log = capturing(log_level::warn, got);
  CHECK(log.level() == log_level::debug);
  log.debug("churn");
  CHECK(got == lines{{log_level::debug, "churn"}});
  got.clear();
  ::setenv("SWARM_LOG", "chatty", 1);
  auto kept = capturing(log_level::warn, got);
  CHECK(kept.level() == log_level::warn);
  REQUIRE(got.size() == 1);
  CHECK(got[0].second == "SWARM_LOG is ignored: unknown log level 'chatty' (levels: "
                         "trace, debug, info, warn, error, off)");
  ::unsetenv("SWARM_LOG");
}

TEST_CASE("a node's log keeps its last lines, formatted as stderr shows them") {
  ::unsetenv("SWARM_LOG");
  lines got;
  auto log = capturing(log_level::info, got);
  log.debug("not kept: below the level");
  for (int i = 0; i < 3; ++i)
    log.info("line " + std::to_string(i));
  auto last = log.recent(2);
  REQUIRE(last.size() == 2);
  CHECK(last[0].find("[swarm n] info: line 1") != std::string::npos);
  CHECK(last[1].find("[swarm n] info: line 2") != std::string::npos);
  CHECK(last[1].back() == '2'); // a line, without its line break
  CHECK(log.recent().size() == 3);
  for (int i = 0; i < 1100; ++i)
    log.info("more");
  CHECK(log.recent().size() == node_log::kept_lines);
}
