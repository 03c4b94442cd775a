// A supervision tree over actors with each OTP strategy: crashes one child under each
// supervisor, prints what the supervisors did, and exits 0 only when each restarted what
// it should.
//
//   root (one_for_one) ── logger
//                      ├─ pipeline (rest_for_one) ── reader parser writer
//                      └─ replicas (one_for_all)  ── r1 r2
#include <chrono>
#include <cstdio>
#include <thread>

#include "framework/swarm.hpp"

using namespace std::chrono_literals;

// A stage that counts what it processed; crashing loses the count (a fresh instance).
class stage : public swarm::actor {
public:
  int process(int n) { return done_ += n; }
  int done() const { return done_; }
  void crash() { throw swarm::actor_failure("bad input"); }

private:
  int done_ = 0;
};

// Reads a stage's count, waiting out a restart (calls meanwhile fail with actor_died).
int count_of(const swarm::actor_handle<stage>& s) {
  for (int i = 0; i < 1000; ++i) {
    if (auto r = s.call(&stage::done).get(1s)) return *r;
    std::this_thread::sleep_for(5ms);
  }
  return -1;
}

int main() {
  swarm::application app;
  auto stage_t = app.actor_type<stage>("stage");
  swarm::runtime rt{app};

  swarm::supervisor_spec pipeline{swarm::strategy::rest_for_one};
  pipeline.child("reader", stage_t).child("parser", stage_t).child("writer", stage_t);
  swarm::supervisor_spec replicas{swarm::strategy::one_for_all};
  replicas.child("r1", stage_t).child("r2", stage_t);
  swarm::supervisor_spec root{swarm::strategy::one_for_one, {10, 5s}};
  root.child("logger", stage_t).child("pipeline", pipeline).child("replicas", replicas);
  auto tree = rt.supervise(root);

  const char* ids[] = {"logger", "reader", "parser", "writer", "r1", "r2"};
  std::vector<swarm::actor_handle<stage>> s;
  for (auto* id : ids) {
    s.push_back(tree.child(stage_t, id).value());
    s.back().call(&stage::process, 1);
  }
  auto restarts = [&] {
    size_t n = 0;
    for (auto& e : tree.events())
      n += e.rfind("restart", 0) == 0;
    return n;
  };
  auto crash_and_report = [&](size_t who, size_t restarts_after) {
    s[who].call(&stage::crash);
    for (int i = 0; i < 1000 && restarts() < restarts_after; ++i)
      std::this_thread::sleep_for(5ms);
    std::printf("crashed %-7s counts now:", ids[who]);
    std::vector<int> counts;
    for (size_t i = 0; i < s.size(); ++i) {
      counts.push_back(count_of(s[i]));
      std::printf(" %s=%d", ids[i], counts.back());
    }
    std::printf("\n");
    for (auto& h : s) // back to 1 everywhere for the next round
      if (count_of(h) == 0) h.call(&stage::process, 1).get(5s);
    return counts;
  };
  auto parser = crash_and_report(2, 2); // rest_for_one: parser and writer restart
  auto r2 = crash_and_report(5, 4);     // one_for_all: both replicas restart
  auto logger = crash_and_report(0, 5); // one_for_one: only the logger restarts
  for (auto& e : tree.events())
    if (e.rfind("restart", 0) == 0) std::printf("  %s\n", e.c_str());

  bool ok = parser == std::vector<int>{1, 1, 0, 0, 1, 1} &&
            r2 == std::vector<int>{1, 1, 1, 1, 0, 0} &&
            logger == std::vector<int>{0, 1, 1, 1, 1, 1} && tree.alive();
  std::printf("%s\n",
              ok ? "every supervisor restarted what its strategy says" : "UNEXPECTED");
  return ok ? 0 : 1;
}
