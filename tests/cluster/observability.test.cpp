// What a 3-node cluster shows of itself: the node table, swarm list, timeline and logs,
// the head's dashboard in a browser, and task output forwarded to the driver.

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/cluster/http_get.hpp"
#include "tests/cluster/node_process.hpp"
#include "tests/cluster/test_app.hpp"
#include "tests/cluster/three_nodes.hpp"

using namespace std::chrono_literals;
using namespace swarm::cluster_test;

TEST_CASE("the node table shows the resources a node has available beside its total, and "
          "the tasks running there") {
  three_nodes c;
  auto busy = c.start_long_task(); // holds `slot` (and a CPU) on one worker for 3 s
  auto name = busy.victim == &c.w1 ? "worker-1" : "worker-2";
  double slot_free = 1;
  uint32_t running = 0;
  // Bounded: heartbeats every 100 ms carry it to the head.
  for (int i = 0; i < 40 && (slot_free > 0 || running == 0); ++i) {
    std::this_thread::sleep_for(50ms);
    auto s = swarm::cluster_status(c.cfg, 2s);
    if (!s) continue;
    for (auto& n : s->nodes)
      if (n.name == name) {
        CHECK(n.total.get("slot") == 1);
        slot_free = n.available.get("slot");
        running = n.running;
      }
  }
  CHECK(slot_free == 0);
  CHECK(running == 1);
  CHECK(busy.task.get(10s));
}

TEST_CASE("swarm list shows the tasks, actors and objects of every alive node") {
  three_nodes c;
  auto busy = c.start_long_task();
  std::string victim = busy.victim == &c.w1 ? "worker-1" : "worker-2";
  auto blob = c.rt->put(std::vector<uint8_t>(1 << 20, 7)); // past the inline threshold
  auto cls = c.app.find_actor_type<counter>("counter").value();
  swarm::actor_options named;
  named.name = "the-counter";
  named.node = "worker-2";
  auto a = c.rt->spawn(named, cls, 0);
  REQUIRE(a.call(&counter::add, 1).get(10s).value() == 1);

  auto find = [](const std::vector<swarm::listed>& rows, const std::string& node,
                 const std::string& id, const std::string& name) -> const swarm::listed* {
    for (auto& r : rows)
      if (r.node == node && (id.empty() || r.id == id) && r.name == name) return &r;
    return nullptr;
  };
  auto tasks = swarm::list_cluster(c.cfg, "tasks", "", 5s);
  REQUIRE_MESSAGE(tasks, tasks.err().message);
  auto* nap = find(*tasks, victim, busy.task.id().to_string(), "nap_pid");
  REQUIRE(nap != nullptr);
  CHECK(nap->state == "running");
  CHECK(nap->detail == "priority 0, attempt 1");

  auto actors = swarm::list_cluster(c.cfg, "actors", "", 5s).value();
  auto* counter_row = find(actors, "worker-2", "the-counter", "counter");
  std::string seen;
  for (auto& r : actors)
    seen += r.node + " [" + r.id + "] " + r.name + " " + r.state + "; ";
  REQUIRE_MESSAGE(counter_row != nullptr, seen);
  CHECK(counter_row->state == "alive");

  auto objects = swarm::list_cluster(c.cfg, "objects", "head", 5s).value();
  auto* blob_row = find(objects, "head", blob.id().to_string(), "");
  REQUIRE(blob_row != nullptr);
  CHECK(blob_row->detail == "1.00 MiB");
  for (auto& r : objects)
    CHECK(r.node == "head");

  auto [rc, out] = run_command(std::string{SWARM_CLI} + " list tasks --config " +
                               c.config + " --state running");
  CHECK(rc == 0);
  CHECK_MESSAGE(out.find(victim) != std::string::npos, out);
  CHECK(out.find("nap_pid") != std::string::npos);
  CHECK(out.find("1 of ") != std::string::npos);

  auto wrong = swarm::list_cluster(c.cfg, "things", "", 5s);
  REQUIRE_FALSE(wrong);
  CHECK(wrong.err().message == "cannot list 'things': lists are tasks, actors, objects, "
                               "timeline, logs, summary and failures");
  CHECK(busy.task.get(10s));
}

TEST_CASE(
    "swarm timeline writes the tasks, actor calls and pulls that ended on each node "
    "as a Chrome trace") {
  three_nodes c;
  auto add = c.app.find_function<int(int, int)>("add").value();
  std::set<std::string> ids;
  for (int i = 0; i < 20; ++i) {
    auto r = c.rt->submit(c.on("worker-1"), add, i, 1);
    REQUIRE(r.get(10s).value() == i + 1);
    ids.insert(r.id().to_string());
  }
  // Five calls to an actor on worker-2, one of them failing.
  auto counter_t = c.app.find_actor_type<counter>("counter").value();
  swarm::actor_options o;
  o.node = "worker-2";
  o.name = "traced";
  auto a = c.rt->spawn(o, counter_t, 0);
  std::set<std::string> calls;
  for (int i = 0; i < 4; ++i) {
    auto r = a.call(&counter::add, 1);
    REQUIRE(r.get(10s).value() == i + 1);
    calls.insert(r.id().to_string());
  }
  auto failing = a.call(&counter::fail, std::string{"on purpose"});
  CHECK_FALSE(failing.get(10s));
  // A large value put here is pulled by worker-2 to read it.
  auto read =
      c.app.find_function<std::vector<int64_t>(const std::vector<uint8_t>&)>("read_blob")
          .value();
  const int n = 3 << 20;
  auto big = c.rt->put(swarm::cluster_test::blob(n));
  REQUIRE(c.rt->submit(c.on("worker-2"), read, big).get(20s));

  auto trace = c.dir + "/trace.json";
  auto [rc, out] = run_command(std::string{SWARM_CLI} + " timeline --config " + c.config +
                               " --out " + trace);
  REQUIRE_MESSAGE(rc == 0, out);
  CHECK(out.find("5 actor call(s) and 1 pull(s)") != std::string::npos);
  CHECK(out.find("to " + trace) != std::string::npos);

  auto json = nlohmann::json::parse(std::ifstream{trace});
  std::map<std::string, int> pid;
  std::map<std::pair<int, int>, std::string> track;
  for (auto& e : json["traceEvents"]) {
    if (e["ph"] != "M") continue;
    if (e["name"] == "process_name") pid[e["args"]["name"]] = e["pid"];
    if (e["name"] == "thread_name") track[{e["pid"], e["tid"]}] = e["args"]["name"];
  }
  REQUIRE(pid.count("worker-1"));
  REQUIRE(pid.count("worker-2"));
  size_t seen = 0, calls_seen = 0, failed_calls = 0, pulls = 0;
  for (auto& e : json["traceEvents"]) {
    if (e["ph"] != "X") continue;
    CHECK(e["dur"].get<int64_t>() >= 0);
    CHECK(e["ts"].get<int64_t>() > 0);
    auto on = track[{e["pid"], e["tid"]}];
    if (e["cat"] == "task" && e["name"] == "add") {
      CHECK(e["pid"] == pid["worker-1"]);
      CHECK(on.rfind("worker ", 0) == 0);
      CHECK(e["args"]["state"] == "finished");
      CHECK(e["args"]["waited_us"].get<int64_t>() >= 0);
      seen += ids.count(e["args"]["result"].get<std::string>());
    } else if (e["cat"] == "actor call") {
      CHECK(e["pid"] == pid["worker-2"]);
      CHECK(on == "actor traced");
      if (e["args"]["result"] == failing.id().to_string()) {
        CHECK(e["name"] == "counter.fail");
        CHECK(e["args"]["state"] == "failed");
        ++failed_calls;
      } else {
        CHECK(e["name"] == "counter.add");
        calls_seen += calls.count(e["args"]["result"].get<std::string>());
      }
    } else if (e["cat"] == "transfer") {
      CHECK(e["pid"] == pid["worker-2"]);
      CHECK(on == "pulls from head");
      CHECK(e["args"]["object"] == big.id().to_string());
      CHECK(e["args"]["bytes"].get<int64_t>() >= n);
      CHECK(e["args"]["state"] == "finished");
      ++pulls;
    }
  }
  CHECK(seen == ids.size());
  CHECK(calls_seen == calls.size());
  CHECK(failed_calls == 1);
  CHECK(pulls == 1);
}

TEST_CASE("swarm logs prints the last lines of a node's log") {
  three_nodes c;
  auto [rc, out] = run_command(std::string{SWARM_CLI} + " logs --config " + c.config +
                               " --node worker-1 --lines 50");
  CHECK(rc == 0);
  CHECK_MESSAGE(
      out.find("[swarm worker-1] info: serving on 127.0.0.1:") != std::string::npos, out);
  auto missing = swarm::list_cluster(c.cfg, "logs", "nobody", 5s);
  REQUIRE_FALSE(missing);
  CHECK(missing.err().message.find("nobody") != std::string::npos);
}

namespace {

// The page at `url` as headless Chromium renders it after its scripts ran (`dom`), and
// a screenshot of it in `png`; the exit code and what Chromium printed.
std::pair<int, std::string> browse(const std::string& url, const std::string& dir,
                                   const std::string& dom, const std::string& png) {
  auto browser = run_command("command -v chromium || command -v chromium-browser");
  if (browser.first != 0)
    return {-1, "no chromium on PATH: scripts/test.sh installs it (Debian's chromium)"};
  auto exe = browser.second.substr(0, browser.second.find('\n'));
  // Virtual time: the page's fetches and timers run to completion, then it is dumped.
  auto flags = " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage "
               "--no-first-run --hide-scrollbars --virtual-time-budget=6000 "
               "--user-data-dir=" +
               dir + "/chromium ";
  auto shown = run_command("(" + exe + flags + "--dump-dom " + url + " > " + dom +
                           " 2> " + dir + "/chromium.log)");
  if (shown.first != 0) return shown;
  return run_command("(" + exe + flags + "--window-size=1400,1000 --screenshot=" + png +
                     " " + url + " > /dev/null 2>> " + dir + "/chromium.log)");
}

} // namespace

TEST_CASE(
    "the head's dashboard shows the workload's nodes, tasks, actors and failures in "
    "a browser given the [http] token") {
  auto port = free_port();
  // Behind a token, which the page's address carries after '#'.
  std::string token = "dashboard-5e0c9a17b3f2";
  three_nodes c{"[http]\ntoken = \"" + token + "\"\n",
                "dashboard_port = " + std::to_string(port) + "\n"};
  auto add = c.app.find_function<int(int, int)>("add").value();
  auto fail_with = c.app.find_function<int(std::string)>("fail_with").value();
  auto nap = c.app.find_function<int(const std::string&, int)>("nap_pid").value();
  std::vector<swarm::object_ref<int>> sums;
  for (int i = 0; i < 30; ++i)
    sums.push_back(c.rt->submit(c.on(i % 2 ? "worker-1" : "worker-2"), add, i, 1));
  for (int i = 0; i < 30; ++i)
    REQUIRE(sums[static_cast<size_t>(i)].get(20s).value() == i + 1);
  for (int i = 0; i < 2; ++i)
    CHECK_FALSE(
        c.rt->submit(c.on("worker-1"), fail_with, std::string{"bad input #7"}).get(20s));
  auto counter_t = c.app.find_actor_type<counter>("counter").value();
  swarm::actor_options o;
  o.node = "worker-2";
  o.name = "tally";
  auto tally = c.rt->spawn(o, counter_t, 1);
  REQUIRE(tally.call(&counter::add, 1).get(10s).value() == 2);
  // One task still running while the page is read; bounded: it writes a mark as it
  // starts.
  auto mark = c.dir + "/napping";
  auto napping = c.rt->submit(c.on("worker-1"), nap, mark, 20000);
  for (int i = 0; i < 400 && !std::ifstream{mark}; ++i)
    std::this_thread::sleep_for(25ms);
  REQUIRE(std::ifstream{mark});

  auto refused = http_get(port, "/api/status");
  CHECK_MESSAGE(refused.find("HTTP/1.1 401 Unauthorized") != std::string::npos, refused);
  CHECK(refused.find("worker-1") == std::string::npos);
  auto dom_file = c.dir + "/dashboard.html";
  auto png = std::string{SWARM_BUILD_DIR} + "/dashboard.png";
  auto [rc, out] = browse("http://127.0.0.1:" + std::to_string(port) + "/#token=" + token,
                          c.dir, dom_file, png);
  REQUIRE_MESSAGE(rc == 0, out);
  std::stringstream dom;
  dom << std::ifstream{dom_file}.rdbuf();
  auto page = dom.str();
  INFO(page);
  CHECK(page.find("data-loaded=\"true\"") != std::string::npos);
  CHECK(page.find("cluster 'test', head 'head'") != std::string::npos);
  for (auto node : {"head", "worker-1", "worker-2"})
    CHECK(page.find("data-node=\"" + std::string{node} + "\" data-state=\"up\"") !=
          std::string::npos);
  CHECK(page.find("data-node=\"worker-1\" data-state=\"up\" data-running=\"1\" "
                  "data-queued=\"0\" data-cpu-used=\"1\"") != std::string::npos);
  CHECK(page.find("data-function=\"add\" data-submitted=\"30\" data-running=\"0\" "
                  "data-finished=\"30\" data-failed=\"0\"") != std::string::npos);
  CHECK(page.find("data-function=\"fail_with\" data-submitted=\"2\" data-running=\"0\" "
                  "data-finished=\"0\" data-failed=\"2\"") != std::string::npos);
  CHECK(page.find("data-function=\"nap_pid\" data-submitted=\"1\" data-running=\"1\"") !=
        std::string::npos);
  CHECK(page.find("data-actor=\"tally\" data-state=\"alive\"") != std::string::npos);
  CHECK(page.find("data-failed-function=\"fail_with\"") != std::string::npos);
  CHECK(page.find("bad input #7") != std::string::npos);
  auto [listed_rc, failures] =
      run_command(std::string{SWARM_CLI} + " list failures --config " + c.config +
                  " --node worker-1");
  CHECK(listed_rc == 0);
  CHECK_MESSAGE(failures.find("'fail_with' threw: bad input #7") != std::string::npos,
                failures);
  CHECK(failures.find("2 of 2 failures") != std::string::npos);
  // The screenshot is kept under the build folder.
  std::ifstream shot{png, std::ios::binary | std::ios::ate};
  CHECK(shot.tellg() > 10'000);
}

TEST_CASE(
    "what a task or actor call prints on a worker reaches the driver's stdout, each "
    "line labelled with the function and the node") {
  three_nodes c;
  auto out_file = c.dir + "/driver-stdout.txt";
  std::fflush(stdout);
  int saved = ::dup(STDOUT_FILENO);
  int captured = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(captured >= 0);
  ::dup2(captured, STDOUT_FILENO);
  auto shout = c.app.find_function<std::string(std::string)>("shout").value();
  auto there = c.rt->submit(c.on("worker-1"), shout, std::string{"hello\nfrom a task"});
  auto here = c.rt->submit(c.on("head"), shout, std::string{"printed at home"});
  auto counter_t = c.app.find_actor_type<counter>("counter").value();
  swarm::actor_options o;
  o.node = "worker-2";
  auto a = c.rt->spawn(o, counter_t, 7);
  auto said = a.call(&counter::say, std::string{"an actor speaks"}).get(10s);
  auto where = there.get(10s);
  auto home = here.get(10s);
  // Bounded: output travels apart from results.
  auto printed = [&] {
    std::stringstream s;
    s << std::ifstream{out_file}.rdbuf();
    return s.str();
  };
  for (int i = 0; i < 200 && printed().find("an actor speaks") == std::string::npos; ++i)
    std::this_thread::sleep_for(25ms);
  std::fflush(stdout);
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  ::close(captured);
  REQUIRE(where.value() == "worker-1");
  CHECK(home.value() == "head");
  CHECK(said.value() == 7);
  auto text = printed();
  INFO(text);
  CHECK(text.find("(shout on worker-1) hello\n(shout on worker-1) from a task\n") !=
        std::string::npos);
  CHECK(text.find("(shout on head) printed at home\n") != std::string::npos);
  CHECK(text.find("(counter.say on worker-2) an actor speaks\n") != std::string::npos);
  // The workers printed none of it themselves.
  CHECK(c.w1->log().find("hello") == std::string::npos);
}
