// The user code the Python driver's tests call: loaded by the driver and by the nodes of
// the cluster the tests start (`swarm start --load`).

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "framework/plugin.hpp"
#include "framework/swarm.hpp"

namespace {

int64_t add(int64_t a, int64_t b) {
  return a + b;
}

int32_t add_small(int32_t a, int16_t b) {
  return a + b;
}

uint8_t byte_of(uint8_t x) {
  return x;
}

double half(double x) {
  return x / 2;
}

std::string greet(std::string name) {
  return "hello, " + name;
}

bool negate(bool b) {
  return !b;
}

std::vector<float> scale(std::vector<float> xs, float by) {
  for (auto& x : xs)
    x *= by;
  return xs;
}

double sum_doubles(std::vector<double> xs) {
  double s = 0;
  for (auto x : xs)
    s += x;
  return s;
}

std::vector<float> ramp(int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<float>(i);
  return out;
}

std::map<std::string, int64_t> word_lengths(std::vector<std::string> words) {
  std::map<std::string, int64_t> out;
  for (auto& w : words)
    out[w] = static_cast<int64_t>(w.size());
  return out;
}

std::tuple<int64_t, std::string, std::optional<double>>
describe(std::pair<int64_t, std::string> p, std::optional<double> o) {
  return {p.first * 2, p.second + "!", o};
}

std::vector<std::vector<int32_t>> nested(std::vector<std::vector<int32_t>> xs) {
  for (auto& row : xs)
    row.push_back(static_cast<int32_t>(row.size()));
  return xs;
}

int64_t fail(std::string why) {
  throw std::runtime_error(why);
}

int64_t sleep_ms(int64_t ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds{ms});
  return ms;
}

std::string where(swarm::context& ctx) {
  return ctx.node_name();
}

// Where it ran, after `ms`.
std::string slow_where(swarm::context& ctx, int64_t ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds{ms});
  return ctx.node_name();
}

// Kills its node process the first time it runs (no marker file yet); returns 42 once
// the marker exists.
int64_t die_once(std::string marker) {
  if (access(marker.c_str(), F_OK) != 0) {
    if (FILE* f = fopen(marker.c_str(), "w")) fclose(f);
    _exit(9);
  }
  return 42;
}

int64_t pid() {
  return static_cast<int64_t>(::getpid());
}

// A ref made in C++: the task it starts, whose value its caller gets.
swarm::object_ref<int64_t> forward(swarm::context& ctx, int64_t x) {
  return ctx.call<int64_t>("add", x, x);
}

// Streams the squares of 0..n-1; fails after `fail_after` items when that is below n.
void squares(swarm::stream_writer<int64_t>& out, int64_t n, int64_t fail_after) {
  for (int64_t i = 0; i < n; ++i) {
    if (i == fail_after)
      throw std::runtime_error("squares failed after " + std::to_string(i));
    if (!out.write(i * i)) return;
  }
}

// Device buffers: a GPU task's input and output; on a node without one, staged bytes.
int64_t buffer_size(swarm::device_buffer b) {
  return static_cast<int64_t>(b.size());
}

swarm::device_buffer make_buffer(int64_t n) {
  return swarm::device_buffer::staged(std::vector<uint8_t>(static_cast<size_t>(n), 7));
}

void nothing() {}

struct point {
  double x = 0;
  double y = 0;
};

template <class Inspector> bool inspect(Inspector& f, point& p) {
  return f(p.x, p.y);
}

point origin() {
  return {};
}

class counter : public swarm::actor {
public:
  counter() = default;
  explicit counter(int64_t start) : n_(start) {}
  int64_t add(int64_t by) { return n_ += by; }
  int64_t value() const { return n_; }
  std::string home() { return actor_context().node_name(); }
  // Streams the counter's next `k` values, adding one each time.
  void count_up(swarm::stream_writer<int64_t>& out, int64_t k) {
    for (int64_t i = 0; i < k; ++i)
      if (!out.write(++n_)) return;
  }

private:
  int64_t n_ = 0;
};

} // namespace

SWARM_REGISTER(app) {
  app.function("add", add);
  app.function("add_small", add_small);
  app.function("byte_of", byte_of);
  app.function("half", half);
  app.function("greet", greet);
  app.function("negate", negate);
  app.function("scale", scale);
  app.function("sum_doubles", sum_doubles);
  app.function("ramp", ramp);
  app.function("word_lengths", word_lengths);
  app.function("describe", describe);
  app.function("nested", nested);
  app.function("fail", fail);
  app.function("sleep_ms", sleep_ms);
  app.function("where", where);
  app.function("slow_where", slow_where);
  app.function("pid", pid);
  app.function("die_once", die_once);
  app.function("nothing", nothing);
  app.function("buffer_size", buffer_size);
  app.function("make_buffer", make_buffer);
  app.function("forward", forward);
  app.function("squares", squares);
  app.function("origin", origin);
  app.actor_type<counter>("counter")
      .constructor<>()
      .constructor<int64_t>()
      .method("add", &counter::add)
      .method("value", &counter::value)
      .method("home", &counter::home)
      .method("count_up", &counter::count_up);
}
