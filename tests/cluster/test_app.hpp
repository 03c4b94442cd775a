#pragma once

// What the 3-node tests run: the driver (the test binary) and the node processes
// register the same functions and actor types, as every host of a cluster does.

#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "framework/swarm.hpp"

namespace swarm::cluster_test {

inline int add(int a, int b) {
  return a + b;
}

inline int pid() {
  return static_cast<int>(::getpid());
}

/// The node it runs on.
inline std::string node_name(context& ctx) {
  return ctx.node_name();
}

/// A device buffer of the ints 1..n made on this node's GPU.
inline device_buffer device_fill(context& ctx, int n) {
  std::vector<int> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = i + 1;
  return ctx.to_device(v).value();
}

/// Where `b` arrived (on a device of this node or not), the device its bytes were
/// written to as they came from another node (-1: none), whether the task took them
/// there as they were, the node, and its ints read back from this node's GPU.
struct device_seen {
  bool arrived_on_device = false;
  int landed = -1;
  bool took_landed = false;
  std::string node;
  std::vector<int> values;
};

template <class Inspector> bool inspect(Inspector& f, device_seen& s) {
  return f(s.arrived_on_device, s.landed, s.took_landed, s.node, s.values);
}

inline device_seen device_read(context& ctx, device_buffer b) {
  auto landed = b.landed_device();
  auto here = ctx.on_device(b).value();
  // Taken by this task: no other reader finds it landed.
  bool took = landed >= 0 && b.landed_device() < 0 && here.device() == landed;
  return {b.on_device(), landed, took, ctx.node_name(), here.to_host_as<int>().value()};
}

/// The device `b`'s bytes were written to as they came from another node (-1: none),
/// read by a task that takes no GPU.
inline int device_landed(device_buffer b) {
  return b.landed_device();
}

/// Writes its process id to the file `mark` as it starts, sleeps `ms`, then returns it.
inline int nap_pid(const std::string& mark, int ms) {
  std::ofstream{mark} << ::getpid() << std::endl;
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  return static_cast<int>(::getpid());
}

/// The node a task ran on.
inline std::string where(context& ctx) {
  return ctx.node_name();
}

/// Puts `n` copies of `n` as the durable object `name` from the node it runs on; that
/// node's name.
inline std::string put_durable_here(context& ctx, const std::string& name, int n) {
  auto r = ctx.put_durable(name, std::vector<int>(static_cast<size_t>(n), n));
  if (!r) throw std::runtime_error(r.err().to_string());
  return ctx.node_name();
}

/// `n` bytes counting up, as a large object.
inline std::vector<uint8_t> blob(int n) {
  std::vector<uint8_t> out(static_cast<size_t>(n));
  std::iota(out.begin(), out.end(), uint8_t{0});
  return out;
}

/// Works until it is cancelled, `ms` at most; how many 1 ms rounds it ran.
inline int until_cancelled(context& ctx, int ms) {
  int rounds = 0;
  for (; rounds < ms && !ctx.cancelled(); ++rounds)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return rounds;
}

/// Adds its node's pid as a line to the file `runs`, sleeps `ms`, returns the pid: a
/// task whose runs are counted.
inline int counted_nap(const std::string& runs, int ms) {
  std::ofstream{runs, std::ios::app} << ::getpid() << std::endl;
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  return static_cast<int>(::getpid());
}

/// Adds the line `label` to the file `order` as it starts, then sleeps `ms`.
inline int mark_nap(const std::string& order, const std::string& label, int ms) {
  std::ofstream{order, std::ios::app} << label << std::endl;
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  return ms;
}

/// Submits `mark_nap(order, label, ms)` from here to `node` at `priority`.
inline object_ref<int> mark_nap_on(context& ctx, const std::string& order,
                                   const std::string& label, int ms,
                                   const std::string& node, int priority) {
  task_options o;
  o.node = node;
  o.priority = priority;
  auto f =
      ctx.app()
          .find_function<int(const std::string&, const std::string&, int)>("mark_nap")
          .value();
  return ctx.submit(o, f, order, label, ms);
}

/// `n` bytes counting up, after adding a line to the file `runs`: a large result whose
/// runs are counted.
inline std::vector<uint8_t> counted_blob(const std::string& runs, int n) {
  std::ofstream{runs, std::ios::app} << ::getpid() << std::endl;
  return blob(n);
}

/// Where a large input was read, and what it summed to.
/// The sum of `b`'s bytes, after `ms` of work.
inline int64_t slow_sum(const std::vector<uint8_t>& b, int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  return std::accumulate(b.begin(), b.end(), int64_t{0});
}

/// `n` bytes counting up after `ms` of work: a large result that takes a while.
inline std::vector<uint8_t> slow_blob(int n, int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  return blob(n);
}

/// The wall clock, microseconds since the epoch: the same on every node of one host.
inline int64_t wall_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// `n` bytes counting up, returned at `at_us` (`wall_us`) or at once when later: tasks
/// that make their results at the same moment.
inline std::vector<uint8_t> blob_at(int n, int64_t at_us) {
  auto b = blob(n);
  if (auto wait = at_us - wall_us(); wait > 0)
    std::this_thread::sleep_for(std::chrono::microseconds(wait));
  return b;
}

/// When its argument was here (`wall_us`).
inline int64_t arrived_us(const std::vector<uint8_t>& b) {
  (void)b;
  return wall_us();
}

inline std::vector<int64_t> read_blob(const std::vector<uint8_t>& b) {
  return {static_cast<int64_t>(::getpid()),
          std::accumulate(b.begin(), b.end(), int64_t{0})};
}

/// A user type with a large buffer between small fields.
struct sample {
  std::string label;
  std::vector<float> data;
  std::array<int32_t, 4> dims{};
  int64_t tail = 0;
};

template <class Inspector> bool inspect(Inspector& f, sample& x) {
  return f(x.label, x.data, x.dims, x.tail);
}

/// Bytes that differ everywhere (a 64-bit LCG), so a misplaced chunk shows.
inline std::vector<uint8_t> noise(size_t n, uint64_t seed) {
  std::vector<uint8_t> out(n);
  for (auto& b : out) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    b = static_cast<uint8_t>(seed >> 56);
  }
  return out;
}

/// Contiguous values of each kind, `n` bytes of payload each, made the same on any node.
inline std::string noise_text(int n) {
  auto b = noise(static_cast<size_t>(n), 1);
  return {b.begin(), b.end()};
}

inline std::vector<double> noise_doubles(int n) {
  auto b = noise(static_cast<size_t>(n) / sizeof(double) * sizeof(double), 2);
  std::vector<double> out(b.size() / sizeof(double));
  std::memcpy(out.data(), b.data(), b.size());
  return out;
}

inline sample noise_sample(int n) {
  auto b = noise(static_cast<size_t>(n) / sizeof(float) * sizeof(float), 3);
  sample s{"sample-" + std::to_string(n),
           std::vector<float>(b.size() / sizeof(float)),
           {1, 2, 3, n},
           -n};
  std::memcpy(s.data.data(), b.data(), b.size());
  return s;
}

/// FNV-1a over bytes: what a node saw, to compare bit for bit with the sender's.
inline uint64_t fnv(const void* p, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<const uint8_t*>(p)[i];
    h *= 1099511628211ULL;
  }
  return h;
}

inline uint64_t digest_bytes(const std::vector<uint8_t>& b) {
  return fnv(b.data(), b.size());
}
inline uint64_t digest_text(const std::string& s) {
  return fnv(s.data(), s.size());
}
inline uint64_t digest_doubles(const std::vector<double>& d) {
  return fnv(d.data(), d.size() * sizeof(double));
}
inline uint64_t digest_sample(const sample& s) {
  return fnv(s.data.data(), s.data.size() * sizeof(float)) ^
         fnv(s.label.data(), s.label.size()) ^ fnv(s.dims.data(), sizeof s.dims) ^
         static_cast<uint64_t>(s.tail);
}

class counter : public actor {
public:
  counter() = default;
  explicit counter(int start) : n_(start) {}
  int add(int x) { return n_ += x; }
  int fail(std::string why) { throw std::runtime_error(why); }
  int where() const { return static_cast<int>(::getpid()); }
  std::string node() { return actor_context().node_name(); }
  int say(std::string text) {
    actor_context().print(text);
    return n_;
  }
  std::vector<uint8_t> on_checkpoint() override { return encode(n_); }
  void on_restore(const std::vector<uint8_t>& state) override {
    std::string why;
    if (!decode(state.data(), state.size(), n_, why)) throw std::runtime_error(why);
  }

private:
  int n_ = 0;
};

/// A pipeline stage: adds its node's name to a path and hands it on to the stage it was
/// linked to, if any; the whole path.
class relay : public actor {
public:
  void link(actor_handle<relay> next) { next_ = std::move(next); }
  actor_handle<relay> next() const { return next_; }
  std::string pass(std::string path) {
    path += (path.empty() ? "" : ">") + actor_context().node_name();
    if (!next_.valid()) return path;
    auto r = next_.call(&relay::pass, path).get(std::chrono::seconds(20));
    if (!r) throw std::runtime_error(r.err().to_string());
    return *r;
  }
  /// As `pass`, returning at once: the path is the next stage's answer (async).
  object_ref<std::string> hand_on(std::string path) {
    path += (path.empty() ? "" : ">") + actor_context().node_name();
    if (!next_.valid()) return actor_context().put(path);
    return next_.call(&relay::hand_on, path);
  }

private:
  actor_handle<relay> next_;
};

/// A handle inside a user type.
struct route {
  std::string label;
  actor_handle<relay> to;
};

template <class Inspector> bool inspect(Inspector& f, route& x) {
  return f(x.label, x.to);
}

/// Sends its label along a route: the path the stage it names returns.
inline std::string follow(const route& r) {
  auto got = r.to.call(&relay::pass, r.label).get(std::chrono::seconds(20));
  if (!got) throw std::runtime_error(got.err().to_string());
  return *got;
}

/// The sum of the objects `refs` name, read where this runs.
inline int sum_of(const std::vector<object_ref<int>>& refs) {
  int sum = 0;
  for (auto& r : refs) {
    auto v = r.get(std::chrono::seconds(20));
    if (!v) throw std::runtime_error(v.err().to_string());
    sum += *v;
  }
  return sum;
}

/// Puts 1..n on the node this runs on (which owns them) and returns their refs.
inline std::vector<object_ref<int>> make_refs(context& ctx, int n) {
  std::vector<object_ref<int>> out;
  for (int i = 1; i <= n; ++i)
    out.push_back(ctx.put(i));
  return out;
}

/// Puts `n` blobs of 128 KiB, each byte `fill`, on the node this runs on (which owns
/// them: too large to travel in their refs) and returns their refs.
inline std::vector<object_ref<std::vector<uint8_t>>> put_blobs(context& ctx, int fill,
                                                               int n) {
  std::vector<object_ref<std::vector<uint8_t>>> out;
  for (int i = 0; i < n; ++i)
    out.push_back(ctx.put(std::vector<uint8_t>(128 << 10, static_cast<uint8_t>(fill))));
  return out;
}

/// Hands `refs` on to `sum_of` on node `node` (lending what it borrowed): its future.
inline object_ref<int> sum_on(context& ctx, std::vector<object_ref<int>> refs,
                              std::string node) {
  task_options o;
  o.node = std::move(node);
  auto f = ctx.app().find_function<int(const std::vector<object_ref<int>>&)>("sum_of");
  return ctx.submit(o, f.value(), std::move(refs));
}

/// The sizes of the blobs `refs` name, read where this runs.
inline std::vector<int>
blob_sizes(const std::vector<object_ref<std::vector<uint8_t>>>& refs) {
  std::vector<int> out;
  for (auto& r : refs) {
    auto v = r.get_shared(std::chrono::seconds(20));
    if (!v) throw std::runtime_error(v.err().to_string());
    out.push_back(static_cast<int>((*v)->size()));
  }
  return out;
}

/// The objects the node this runs on keeps for other nodes' borrowed refs, and the
/// objects of other nodes it borrows.
inline std::vector<uint64_t> borrow_counts(context& ctx) {
  auto s = ctx.stats();
  return {s.lent_objects, s.borrowed_objects};
}

/// A pipeline stage: adds one, and says where it ran.
class plus_one : public actor {
public:
  int add(int x) { return x + 1; }
};

/// Keeps refs it is given after the call that gave them returned (a borrower).
class keeper : public actor {
public:
  void keep(std::vector<object_ref<int>> refs) { refs_ = std::move(refs); }
  int sum() const { return sum_of(refs_); }
  void drop() { refs_.clear(); }

private:
  std::vector<object_ref<int>> refs_;
};

/// Makes a relay on the node this task runs on and returns its handle.
inline actor_handle<relay> make_relay(context& ctx) {
  return ctx.spawn(ctx.app().find_actor_type<relay>("relay").value());
}

/// From the node it runs on: reserves a placement group of `n` one-slot bundles spread
/// over distinct nodes (waiting up to `wait_ms` for it), runs `where` in each, and
/// removes it; where each ran.
inline std::vector<std::string> in_group(context& ctx, int n, int wait_ms) {
  placement_group_options o;
  o.strategy = placement_strategy::strict_spread;
  resource_set one_slot;
  one_slot.set("slot", 1);
  o.bundles.assign(static_cast<size_t>(n), one_slot);
  auto g = ctx.create_placement_group(o).value();
  g.wait(std::chrono::milliseconds(wait_ms)).value();
  auto at = ctx.app().find_function<std::string()>("where").value();
  std::vector<std::string> out;
  for (uint32_t i = 0; i < static_cast<uint32_t>(n); ++i) {
    task_options in;
    in.resources = one_slot;
    in.bundle = g.bundle(i);
    out.push_back(ctx.submit(in, at).get(std::chrono::seconds(20)).value());
  }
  ctx.remove_placement_group(g).value();
  return out;
}

/// Calls the actor named `name` from wherever this task runs.
inline int call_named(context& ctx, const std::string& name, int x) {
  auto cls = ctx.app().find_actor_type<counter>("counter").value();
  auto a = ctx.find_actor(cls, name).value();
  return a.call(&counter::add, x).get().value();
}

/// An actor that keeps the order its calls ran in.
class call_log : public actor {
public:
  /// Writes the file `started`, then waits (at most 10 s) for the file `open`.
  bool hold(std::string started, std::string open) {
    std::ofstream{started} << "started";
    for (int i = 0; i < 1000 && !std::ifstream{open}; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return static_cast<bool>(std::ifstream{open});
  }
  std::vector<int> append(int x) {
    log_.push_back(x);
    return log_;
  }

private:
  std::vector<int> log_;
};

/// Calls `log.append(x)` from wherever this task runs, at `priority`; returns once the
/// call is sent, not run.
inline int append_at(actor_handle<call_log> log, int x, int priority) {
  log.priority(priority).call(&call_log::append, x);
  return x;
}

/// An actor holding `kib` KiB, counting its live instances in this process (so a test
/// sees whether dropped ones are reclaimed).
class ballast : public actor {
public:
  static std::atomic<int>& live() {
    static std::atomic<int> n{0};
    return n;
  }
  explicit ballast(int kib) : bytes_(static_cast<size_t>(kib) << 10, 1) { ++live(); }
  ~ballast() override { --live(); }
  int kib() const { return static_cast<int>(bytes_.size() >> 10); }

private:
  std::vector<uint8_t> bytes_;
};

/// Creates a counter wherever the resource "special" is, from wherever this task runs,
/// and calls it once.
inline int spawn_special(context& ctx, int start) {
  auto cls = ctx.app().find_actor_type<counter>("counter").value();
  actor_options o;
  o.resources.set("special", 1);
  auto a = ctx.spawn(o, cls, start);
  return a.call(&counter::add, 1).get().value();
}

/// Runs `node_name` wherever the resource "special" is, from wherever this task runs;
/// the name it gives.
inline std::string where_special(context& ctx) {
  auto f = ctx.app().find_function<std::string()>("node_name").value();
  task_options o;
  o.resources.set("special", 1);
  return ctx.submit(o, f).get().value();
}

/// Prints `text` as its output; its node's name.
inline std::string shout(context& ctx, std::string text) {
  ctx.print(text);
  return ctx.node_name();
}

/// Writes `n` items, item i being {i, this process's id}, napping `nap_ms` before each.
inline void count_up(stream_writer<std::vector<int64_t>>& out, int n, int nap_ms) {
  for (int i = 0; i < n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(nap_ms));
    out.write({i, static_cast<int64_t>(::getpid())}).value();
  }
}

/// Writes `n` blobs of `bytes` bytes, blob i filled with `i & 0xff`.
inline void blobs(stream_writer<std::vector<uint8_t>>& out, int n, int bytes) {
  for (int i = 0; i < n; ++i)
    out.write(std::vector<uint8_t>(static_cast<size_t>(bytes), static_cast<uint8_t>(i)))
        .value();
}

/// Writes one item, `blob_at(n, at_us)`: streams whose items are made at one moment.
inline void blob_item_at(stream_writer<std::vector<uint8_t>>& out, int n, int64_t at_us) {
  out.write(blob_at(n, at_us)).value();
}

/// Writes 0, 1, ... `n - 1`, then fails with `why`.
inline void count_then_fail(stream_writer<int>& out, int n, std::string why) {
  for (int i = 0; i < n; ++i)
    out.write(i).value();
  throw std::runtime_error(why);
}

/// An actor streaming numbers from where its last stream ended.
struct ticker : actor {
  int next = 0;
  /// Writes `n` numbers on from `next`; stops early, returning, when the reader went
  /// away.
  void ticks(stream_writer<int>& out, int n) {
    for (int i = 0; i < n; ++i)
      if (!out.write(next++)) return;
  }
  int where_now() const { return next; }
};

/// Throws `why`.
inline int fail_with(std::string why) {
  throw std::runtime_error(why);
}

inline void register_all(application& app) {
  app.function("fail_with", fail_with);
  app.function("shout", shout);
  app.function("add", add);
  app.function("pid", pid);
  app.function("node_name", node_name);
  app.function("device_fill", device_fill);
  app.function("device_read", device_read);
  app.function("device_landed", device_landed);
  app.function("where", where);
  app.function("put_durable_here", put_durable_here);
  app.function("nap_pid", nap_pid);
  app.function("blob", blob);
  app.function("slow_blob", slow_blob);
  app.function("blob_at", blob_at);
  app.function("counted_blob", counted_blob);
  app.function("counted_nap", counted_nap);
  app.function("mark_nap", mark_nap);
  app.function("mark_nap_on", mark_nap_on);
  app.function("until_cancelled", until_cancelled);
  app.function("read_blob", read_blob);
  app.function("arrived_us", arrived_us);
  app.function("slow_sum", slow_sum);
  app.function("call_named", call_named);
  app.function("append_at", append_at);
  app.function("noise_text", noise_text);
  app.function("noise_doubles", noise_doubles);
  app.function("noise_sample", noise_sample);
  app.function("digest_bytes", digest_bytes);
  app.function("digest_text", digest_text);
  app.function("digest_doubles", digest_doubles);
  app.function("digest_sample", digest_sample);
  app.function("spawn_special", spawn_special);
  app.function("where_special", where_special);
  app.function("follow", follow);
  app.function("make_relay", make_relay);
  app.function("in_group", in_group);
  app.function("sum_of", sum_of);
  app.function("make_refs", make_refs);
  app.function("put_blobs", put_blobs);
  app.function("sum_on", sum_on);
  app.function("blob_sizes", blob_sizes);
  app.function("borrow_counts", borrow_counts);
  app.function("count_up", count_up);
  app.function("blobs", blobs);
  app.function("blob_item_at", blob_item_at);
  app.function("count_then_fail", count_then_fail);
  app.actor_type<plus_one>("plus_one").method("add", &plus_one::add);
  app.actor_type<ticker>("ticker")
      .method("ticks", &ticker::ticks)
      .method("where_now", &ticker::where_now);
  app.actor_type<keeper>("keeper")
      .method("keep", &keeper::keep)
      .method("sum", &keeper::sum)
      .method("drop", &keeper::drop);
  app.actor_type<relay>("relay")
      .method("link", &relay::link)
      .method("next", &relay::next)
      .method("pass", &relay::pass)
      .method("hand_on", &relay::hand_on);
  app.actor_type<call_log>("call_log")
      .method("hold", &call_log::hold)
      .method("append", &call_log::append);
  app.actor_type<ballast>("ballast").constructor<int>().method("kib", &ballast::kib);
  app.actor_type<counter>("counter")
      .constructor<int>()
      .method("add", &counter::add)
      .method("fail", &counter::fail)
      .method("where", &counter::where)
      .method("node", &counter::node)
      .method("say", &counter::say);
}

/// How a program named `name` connects as a client to the cluster of `cfg`: by its
/// head's address and the secret.
inline client_options client_of(const cluster_config& cfg, const std::string& name) {
  client_options o;
  o.address = cfg.head().address;
  o.port = cfg.head().port;
  o.secret = cfg.secret;
  o.tls = cfg.tls;
  o.name = name;
  return o;
}

} // namespace swarm::cluster_test
