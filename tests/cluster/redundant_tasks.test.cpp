// Tasks run on several nodes at once (`task_options::redundancy`), across real node
// processes.

#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "tests/cluster/three_nodes.hpp"

using namespace std::chrono_literals;
using swarm::cluster_test::eventually;
using swarm::cluster_test::three_nodes;

namespace {

// The lines of the file `path`: the runs a counted task recorded.
int lines_of(const std::string& path) {
  std::ifstream in{path};
  int n = 0;
  for (std::string line; std::getline(in, line);)
    ++n;
  return n;
}

// On both workers (only they have a `slot`), `copies` at once.
swarm::task_options on_workers(uint32_t copies) {
  swarm::task_options o;
  o.resources.set("slot", 1);
  o.redundancy = copies;
  return o;
}

} // namespace

TEST_CASE("a task run on two nodes answers from the other when one is killed, and does "
          "not run again") {
  three_nodes c;
  auto nap = c.app.find_function<int(const std::string&, int)>("counted_nap").value();
  auto runs = c.dir + "/runs";
  auto r = c.rt->submit(on_workers(2), nap, runs, 1500);
  REQUIRE(eventually(10s, [&] { return lines_of(runs) == 2; }));
  c.w1->kill_now();
  auto got = r.get(20s);
  REQUIRE_MESSAGE(got, got.err().message);
  CHECK(*got == c.w2->pid());
  CHECK(lines_of(runs) == 2);
}

TEST_CASE("the copy of a task run on two nodes that has not started when the other "
          "answers is cancelled") {
  three_nodes c;
  auto nap = c.app.find_function<int(const std::string&, int)>("counted_nap").value();
  auto busy_runs = c.dir + "/busy";
  auto runs = c.dir + "/runs";
  // worker-1's one CPU is taken: its copy waits in the queue.
  auto busy = c.rt->submit(c.on("worker-1"), nap, busy_runs, 1500);
  REQUIRE(eventually(10s, [&] { return lines_of(busy_runs) == 1; }));
  auto r = c.rt->submit(on_workers(2), nap, runs, 10);
  auto got = r.get(20s);
  REQUIRE_MESSAGE(got, got.err().message);
  CHECK(*got == c.w2->pid());
  REQUIRE(busy.get(20s));
  // A task queued on worker-1 after the copy runs after it would have: the copy is gone.
  REQUIRE(c.rt->submit(c.on("worker-1"), nap, busy_runs, 0).get(20s));
  CHECK(lines_of(runs) == 1);
}
