#include "actors/workers/node_devices.hpp"

#include <caf/all.hpp>

#include <algorithm>

namespace swarm::actors {

namespace {

// How much longer than its own wait an allocation waits for the worker's answer.
constexpr auto answer_slack = std::chrono::seconds(10);

// The stream of `slot`'s task on the device of `v`, taken at its first use.
gpu::stream_handle pick(const device_board::view& v, uint64_t slot) {
  return v.streams->take(slot);
}

// An error when bytes [offset, offset + length) are not all in `b`.
result<void> within(size_t offset, size_t length, const detail::device_block& b,
                    const std::string& node) {
  if (offset <= b.bytes && length <= b.bytes - offset) return {};
  return error{errc::invalid_argument,
               "bytes " + std::to_string(offset) + " to " +
                   std::to_string(offset + length) + " of a device buffer of " +
                   std::to_string(b.bytes) + " bytes (node '" + node + "')"};
}

} // namespace

node_devices::node_devices(caf::actor_system& sys, std::shared_ptr<gpu::device_api> api,
                           std::shared_ptr<device_board> board, std::string node,
                           size_t staging_keep)
    : sys_(sys), api_(std::move(api)), board_(std::move(board)), node_(std::move(node)),
      staging_(std::make_shared<staging_pool>(api_, staging_keep)) {}

uint32_t node_devices::count() const noexcept {
  return static_cast<uint32_t>(board_->size());
}

result<std::shared_ptr<const device_board::view>>
node_devices::running(uint32_t device) const {
  if (device >= board_->size())
    return error{errc::invalid_argument, "node '" + node_ + "' has no GPU " +
                                             std::to_string(device) + " (it has " +
                                             std::to_string(board_->size()) + ")"};
  auto v = board_->get(device);
  if (!v)
    if (auto why = board_->lost(device); !why.empty())
      return error{errc::device_failed, why};
  if (!v)
    return error{errc::device_failed, "the worker of GPU " + std::to_string(device) +
                                          " of node '" + node_ +
                                          "' is not running (it restarts after a "
                                          "fault, or the node stops)"};
  return v;
}

result<std::shared_ptr<const device_board::view>>
node_devices::live(const detail::device_block& b) const {
  auto v = running(b.device);
  if (!v) return error{errc::object_lost, "device buffer lost: " + v.err().message};
  if ((*v)->epoch != b.epoch)
    return error{errc::object_lost, "device buffer lost: GPU " +
                                        std::to_string(b.device) + " of node '" + node_ +
                                        "' failed and restarted since it was made"};
  return v;
}

result<std::shared_ptr<detail::device_block>>
node_devices::allocate(uint32_t device, size_t bytes, std::chrono::milliseconds wait) {
  // Arrived buffers no task took yet give their memory up before anything waits for it.
  bool arrivals = false;
  {
    std::lock_guard<std::mutex> guard{arrivals_mtx_};
    arrivals_.erase(std::remove_if(arrivals_.begin(), arrivals_.end(),
                                   [](auto& a) { return a.second.expired(); }),
                    arrivals_.end());
    arrivals = std::any_of(arrivals_.begin(), arrivals_.end(),
                           [&](auto& a) { return a.first == device; });
  }
  if (arrivals) {
    auto now = ask(device, bytes, std::chrono::milliseconds{0});
    if (now || now.err().code != errc::device_out_of_memory) return now;
    reclaim(device);
  }
  return ask(device, bytes, wait);
}

std::shared_ptr<detail::device_arrival> node_devices::arrival(size_t bytes,
                                                              const uint8_t* host) {
  auto n = count();
  uint32_t first = 0;
  {
    std::lock_guard<std::mutex> guard{arrivals_mtx_};
    first = next_arrival_++;
  }
  for (uint32_t i = 0; i < n; ++i) {
    auto device = (first + i) % n;
    auto b = ask(device, bytes, std::chrono::milliseconds{0});
    if (!b) continue;
    auto a = std::make_shared<detail::device_arrival>(std::move(*b), host);
    std::lock_guard<std::mutex> guard{arrivals_mtx_};
    arrivals_.emplace_back(device, a);
    return a;
  }
  return nullptr;
}

void node_devices::reclaim(uint32_t device) {
  std::vector<std::shared_ptr<detail::device_arrival>> live;
  {
    std::lock_guard<std::mutex> guard{arrivals_mtx_};
    for (auto& [on, w] : arrivals_)
      if (auto a = on == device ? w.lock() : nullptr) live.push_back(std::move(a));
  }
  for (auto& a : live)
    a->reclaim(device);
}

result<std::shared_ptr<detail::device_block>>
node_devices::ask(uint32_t device, size_t bytes, std::chrono::milliseconds wait) {
  auto v = running(device);
  if (!v) return v.err();
  caf::scoped_actor self{sys_};
  result<std::shared_ptr<detail::device_block>> out =
      error{errc::device_failed, "no answer"};
  self->request((*v)->worker, wait + answer_slack, dev_alloc_atom::value,
                static_cast<uint64_t>(bytes), caf::timespan{wait})
      .receive(
          [&](device_grant& g) {
            if (!g.ok()) {
              out = std::move(g.err);
              return;
            }
            out = std::make_shared<detail::device_block>(
                shared_from_this(), device, g.epoch, reinterpret_cast<void*>(g.address),
                bytes);
          },
          [&](caf::error& e) {
            out = error{errc::device_failed,
                        "allocating " + std::to_string(bytes) + " bytes on GPU " +
                            std::to_string(device) + " of node '" + node_ +
                            "': its worker did not answer: " + sys_.render(e)};
          });
  return out;
}

void node_devices::release(detail::device_block& b) noexcept {
  if (b.unmap) return b.unmap();
  if (auto v = board_->get(b.device); v && v->epoch == b.epoch)
    caf::anon_send(v->worker, dev_free_atom::value, reinterpret_cast<uint64_t>(b.ptr),
                   b.epoch);
}

result<void> node_devices::holds(const detail::device_block& b) const {
  if (auto v = live(b); !v) return v.err();
  return {};
}

result<void> node_devices::failed(const device_board::view& v, error e) {
  if (e.code == errc::device_failed)
    caf::anon_send(v.worker, dev_fail_atom::value, e.message);
  e.message += " (node '" + node_ + "')";
  return e;
}

result<void> node_devices::copy(const detail::device_block& dst,
                                const detail::device_block& src, uint64_t slot) {
  auto d = live(dst);
  if (!d) return d.err();
  auto s = live(src);
  if (!s) return s.err();
  auto n = std::min(dst.bytes, src.bytes);
  if (auto ok = api_->copy(static_cast<int>(dst.device), dst.ptr,
                           static_cast<int>(src.device), src.ptr, n, pick(**d, slot));
      !ok)
    return failed(**d, ok.err());
  return {};
}

result<void> node_devices::to_host(void* dst, const detail::device_block& src,
                                   size_t offset, size_t length, uint64_t slot) {
  if (auto in = within(offset, length, src, node_); !in) return in;
  auto v = live(src);
  if (!v) return v.err();
  if (auto ok = api_->to_host(dst, static_cast<int>(src.device),
                              static_cast<const uint8_t*>(src.ptr) + offset, length,
                              pick(**v, slot));
      !ok) {
    auto e = failed(**v, ok.err()).err();
    // A fault its worker has not taken down yet: the buffer went with the context.
    if (e.code == errc::device_failed)
      return error{errc::object_lost, "device buffer lost: " + e.message};
    return e;
  }
  return {};
}

result<void> node_devices::from_host(const detail::device_block& dst, size_t offset,
                                     const void* src, size_t length, uint64_t slot) {
  if (auto in = within(offset, length, dst, node_); !in) return in;
  auto v = live(dst);
  if (!v) return v.err();
  if (auto ok = api_->from_host(static_cast<int>(dst.device),
                                static_cast<uint8_t*>(dst.ptr) + offset, src, length,
                                pick(**v, slot));
      !ok)
    return failed(**v, ok.err());
  return {};
}

result<detail::shared_block> node_devices::share(const detail::device_block& b) {
  if (b.unmap)
    return error{
        errc::invalid_argument,
        "a device buffer node '" + node_ +
            "' maps from another process is not shared on (it is read as bytes)"};
  auto v = live(b);
  if (!v) return v.err();
  auto handle = api_->share(static_cast<int>(b.device), b.ptr);
  if (!handle) return handle.err();
  return detail::shared_block{api_->devices().at(b.device).uuid, std::move(*handle)};
}

result<std::shared_ptr<detail::device_block>>
node_devices::map_shared(const detail::shared_block& s, size_t bytes,
                         std::function<void()> released) {
  auto& devs = api_->devices();
  auto d = std::find_if(devs.begin(), devs.end(),
                        [&](const gpu::device_info& i) { return i.uuid == s.device; });
  if (d == devs.end())
    return error{errc::invalid_argument, "node '" + node_ + "' has no GPU " + s.device +
                                             " to map a shared device buffer on"};
  auto device = static_cast<uint32_t>(d - devs.begin());
  auto v = running(device);
  if (!v) return v.err();
  auto p = api_->open_shared(static_cast<int>(device), s.handle, bytes);
  if (!p) return p.err();
  auto b = std::make_shared<detail::device_block>(shared_from_this(), device, (*v)->epoch,
                                                  *p, bytes);
  // Its worker unmaps it once the device's queued work is done; a restarted device's
  // context took the mapping with it: only the sharer is told.
  b->unmap = [board = board_, device, epoch = (*v)->epoch, p = *p,
              released = std::move(released)] {
    if (auto now = board->get(device); now && now->epoch == epoch)
      caf::anon_send(now->worker, dev_unmap_atom::value,
                     unmap_request{reinterpret_cast<uint64_t>(p), epoch, released});
    else
      released();
  };
  return b;
}

std::vector<node_devices::usage> node_devices::usages(std::chrono::milliseconds timeout) {
  std::vector<usage> out;
  caf::scoped_actor self{sys_};
  for (uint32_t d = 0; d < count(); ++d) {
    usage u;
    u.device = d;
    if (d < api_->devices().size()) u.uuid = api_->devices()[d].uuid;
    if (auto v = board_->get(d)) {
      u.restarts = v->epoch - 1;
      self->request(v->worker, timeout, dev_stats_atom::value)
          .receive(
              [&](uint64_t used, uint64_t cached, uint64_t capacity, uint64_t waiting) {
                u.running = true;
                u.used = used;
                u.cached = cached;
                u.capacity = capacity;
                u.waiting = waiting;
              },
              [](caf::error&) {});
    }
    out.push_back(u);
  }
  return out;
}

std::string node_devices::lost() const {
  std::string out;
  for (uint32_t d = 0; d < count(); ++d)
    if (auto why = board_->lost(d); !why.empty()) out += (out.empty() ? "" : "; ") + why;
  return out;
}

void* node_devices::stream(uint32_t device, uint64_t slot) {
  auto v = board_->get(device);
  return v ? pick(*v, slot) : nullptr;
}

result<void> node_devices::finish(uint32_t device, uint64_t slot) {
  auto v = running(device);
  if (!v) return v.err();
  // Also a task that queued nothing on its stream learns of a launch it got wrong.
  auto ok = api_->synchronize(static_cast<int>(device), pick(**v, slot));
  (*v)->streams->give_back(slot);
  if (!ok) return failed(**v, ok.err());
  return {};
}

} // namespace swarm::actors
