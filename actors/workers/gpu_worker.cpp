#include "actors/workers/gpu_worker.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <unordered_map>

#include "base/human_bytes.hpp"

namespace swarm::actors {

// -- device_board -----------------------------------------------------------------------

device_board::device_board(size_t devices)
    : views_(devices), faults_(devices), lost_(devices),
      epochs_(new std::atomic<uint64_t>[devices]) {
  for (size_t i = 0; i < devices; ++i)
    epochs_[i] = 0;
}

std::shared_ptr<const device_board::view> device_board::get(uint32_t device) const {
  if (device >= views_.size()) return nullptr;
  return std::atomic_load(&views_[device]);
}

void device_board::publish(uint32_t device, std::shared_ptr<const view> v) {
  if (device >= views_.size() || closed_) return;
  std::atomic_store(&views_[device], std::move(v));
}

void device_board::withdraw(uint32_t device, uint64_t epoch) {
  if (device >= views_.size()) return;
  auto current = std::atomic_load(&views_[device]);
  while (current && current->epoch == epoch &&
         !std::atomic_compare_exchange_weak(&views_[device], &current,
                                            std::shared_ptr<const view>{})) {
  }
}

uint64_t device_board::next_epoch(uint32_t device) {
  return epochs_[device].fetch_add(1) + 1;
}

void device_board::note_fault(uint32_t device, std::string why) {
  if (device < faults_.size())
    std::atomic_store(&faults_[device],
                      std::make_shared<const std::string>(std::move(why)));
}

std::string device_board::last_fault(uint32_t device) const {
  auto why = device < faults_.size() ? std::atomic_load(&faults_[device]) : nullptr;
  return why ? *why : std::string{};
}

void device_board::lose(uint32_t device, std::string why) {
  if (device < lost_.size())
    std::atomic_store(&lost_[device],
                      std::make_shared<const std::string>(std::move(why)));
}

std::string device_board::lost(uint32_t device) const {
  auto why = device < lost_.size() ? std::atomic_load(&lost_[device]) : nullptr;
  return why ? *why : std::string{};
}

void device_board::close() {
  closed_ = true;
  for (auto& v : views_)
    std::atomic_store(&v, std::shared_ptr<const view>{});
}

// -- gpu_worker -------------------------------------------------------------------------

namespace {

using dev_expire_atom = caf::atom_constant<caf::atom("devexpire")>;
using dev_poll_atom = caf::atom_constant<caf::atom("devpoll")>;

class gpu_worker final : public caf::event_based_actor {
public:
  gpu_worker(caf::actor_config& c, gpu_worker_config cfg)
      : caf::event_based_actor(c), cfg_(std::move(cfg)) {}

  caf::behavior make_behavior() override {
    epoch_ = cfg_.board->next_epoch(cfg_.device);
    auto dev = static_cast<int>(cfg_.device);
    // Every start after the first follows a fault or a crash: begin on a fresh context.
    if (auto ok = cfg_.api->open(dev, epoch_ > 1); !ok) {
      if (epoch_ > 1) return serve_lost(ok.err().message);
      cfg_.log.error(where() + " could not start: " + ok.err().message);
      quit(caf::make_error(caf::sec::runtime_error, where() + ": " + ok.err().message));
      return {};
    }
    // What is free once its context is open: other processes, and the context itself,
    // hold the rest.
    auto free_now = cfg_.api->free_memory(dev);
    if (!free_now) {
      cfg_.log.error(where() + " could not start: " + free_now.err().message);
      quit(caf::make_error(caf::sec::runtime_error,
                           where() + ": " + free_now.err().message));
      return {};
    }
    capacity_ = cfg_.memory_bytes ? std::min(cfg_.memory_bytes, *free_now) : *free_now;
    auto v = std::make_shared<device_board::view>();
    v->epoch = epoch_;
    v->worker = caf::actor_cast<caf::actor>(this);
    auto pool = stream_pool::make(cfg_.api, dev, cfg_.streams);
    if (!pool) {
      cfg_.log.error(where() + " could not start: " + pool.err().message);
      quit(caf::make_error(caf::sec::runtime_error, where() + ": " + pool.err().message));
      return {};
    }
    streams_ = *pool;
    v->streams = std::move(*pool);
    cfg_.board->publish(cfg_.device, std::move(v));
    if (epoch_ > 1) cfg_.log.info(where() + ": restarted on a fresh context");
    return {
        [this](dev_alloc_atom, uint64_t bytes, caf::timespan wait)
            -> caf::result<device_grant> { return allocate(bytes, wait); },
        [this](dev_free_atom, uint64_t address, uint64_t epoch) { free(address, epoch); },
        [this](dev_fail_atom, const std::string& why) {
          cfg_.log.error(where() + " failed: " + why +
                         "; its worker restarts on a fresh context, and the buffers "
                         "it held are lost");
          cfg_.board->note_fault(cfg_.device, why);
          quit(caf::make_error(caf::sec::runtime_error, where() + " failed: " + why));
        },
        [this](dev_expire_atom, uint64_t id) { expire(id); },
        [this](dev_unmap_atom, unmap_request& r) { unmap(r); },
        [this](dev_poll_atom) {
          polling_ = false;
          poll_unmaps();
        },
        [this](dev_stats_atom) {
          return caf::make_message(
              static_cast<uint64_t>(used_), static_cast<uint64_t>(cached_),
              static_cast<uint64_t>(capacity_), static_cast<uint64_t>(waiting_.size()));
        },
    };
  }

  void on_exit() override {
    cfg_.board->withdraw(cfg_.device, epoch_);
    for (auto& [p, n] : live_)
      release(p);
    while (!cache_.empty())
      drop_cached(cache_.begin());
    if (streams_) streams_->close();
    live_.clear();
    cache_.clear();
    for (auto& w : waiting_)
      w.rp.deliver(device_grant{0, 0, {errc::device_failed, where() + " stopped"}});
    waiting_.clear();
    for (auto& u : unmapping_)
      close(u);
    unmapping_.clear();
  }

private:
  // A restart after a fault that could not reopen the device: CUDA gives no fresh
  // context to a process whose context a sticky error took. The worker stays, so that
  // nothing restarts it in a loop, and refuses every allocation saying so.
  caf::behavior serve_lost(const std::string& open_error) {
    auto fault = cfg_.board->last_fault(cfg_.device);
    auto why = where() + " is lost to this process: a fault took its CUDA context (" +
               (fault.empty() ? std::string{"a kernel failed"} : fault) +
               ") and it cannot be opened again here (" + open_error +
               "); the node's process must be restarted to use it";
    cfg_.log.error(why);
    cfg_.board->lose(cfg_.device, why);
    return {
        [why](dev_alloc_atom, uint64_t, caf::timespan) {
          return device_grant{0, 0, {errc::device_failed, why}};
        },
        [](dev_free_atom, uint64_t, uint64_t) {},
        [](dev_fail_atom, const std::string&) {},
        [](dev_expire_atom, uint64_t) {},
        [](dev_unmap_atom, unmap_request& r) { r.released(); },
        [](dev_poll_atom) {},
        [](dev_stats_atom) {
          return caf::make_message(uint64_t{0}, uint64_t{0}, uint64_t{0}, uint64_t{0});
        },
    };
  }

  struct waiter {
    uint64_t id;
    size_t bytes;
    caf::response_promise rp;
  };

  // A freed block, reused once the work queued on every stream when it was freed is
  // done: a kernel of the task that dropped it may still write it (on whichever stream
  // that task held).
  struct freed {
    void* p;
    std::vector<gpu::event_handle> after;
  };

  // Memory another process shared, let go here: unmapped once the work queued on every
  // stream when it was let go is done (a kernel of the task that dropped it may still
  // read it).
  struct unmapping {
    void* p;
    std::vector<gpu::event_handle> after;
    std::function<void()> released;
  };

  // Events on every stream now: done once the work queued before them is.
  std::vector<gpu::event_handle> record_all() {
    std::vector<gpu::event_handle> out;
    for (auto stream : streams_->all())
      if (auto e = cfg_.api->record(static_cast<int>(cfg_.device), stream))
        out.push_back(*e);
    return out;
  }

  bool all_done(const std::vector<gpu::event_handle>& events) {
    auto dev = static_cast<int>(cfg_.device);
    return std::all_of(events.begin(), events.end(),
                       [&](gpu::event_handle e) { return cfg_.api->done(dev, e); });
  }

  void unmap(unmap_request& r) {
    if (r.epoch != epoch_) return r.released(); // its context took the mapping
    unmapping_.push_back(
        {reinterpret_cast<void*>(r.address), record_all(), std::move(r.released)});
    poll_unmaps();
  }

  void poll_unmaps() {
    for (auto i = unmapping_.begin(); i != unmapping_.end();) {
      if (!all_done(i->after)) {
        ++i;
        continue;
      }
      close(*i);
      i = unmapping_.erase(i);
    }
    if (!unmapping_.empty() && !polling_) {
      polling_ = true;
      delayed_send(this, std::chrono::milliseconds(1), dev_poll_atom::value);
    }
  }

  void close(unmapping& u) {
    auto dev = static_cast<int>(cfg_.device);
    for (auto e : u.after)
      cfg_.api->destroy_event(dev, e);
    cfg_.api->close_shared(dev, u.p);
    u.released();
  }

  std::string where() const {
    return "GPU " + std::to_string(cfg_.device) + " of node '" + cfg_.node + "'";
  }

  device_grant out_of_memory(size_t bytes, const char* how) const {
    return {0,
            0,
            {errc::device_out_of_memory,
             where() + " has no room for " + human_bytes(bytes) + " " + how + " (" +
                 human_bytes(used_) + " of " + human_bytes(capacity_) +
                 " held by live buffers)"}};
  }

  caf::result<device_grant> allocate(uint64_t bytes, caf::timespan wait) {
    if (bytes > capacity_)
      return out_of_memory(bytes,
                           "ever: it is larger than its memory (what the device had free "
                           "when its worker started)");
    if (waiting_.empty())
      if (auto g = try_grant(bytes)) return *g;
    if (wait.count() <= 0) return out_of_memory(bytes, "now");
    auto id = next_waiter_++;
    waiting_.push_back({id, bytes, make_response_promise()});
    delayed_send(this, wait, dev_expire_atom::value, id);
    return waiting_.back().rp;
  }

  // A grant, or nullopt when `bytes` does not fit until buffers are freed.
  std::optional<device_grant> try_grant(size_t bytes) {
    if (used_ + bytes > capacity_) return std::nullopt;
    auto dev = static_cast<int>(cfg_.device);
    void* p = reuse(bytes);
    if (!p) {
      while (used_ + cached_ + bytes > capacity_ && !cache_.empty())
        drop_cached(std::prev(cache_.end()));
      auto fresh = cfg_.api->allocate(dev, std::max<size_t>(bytes, 1));
      if (!fresh && fresh.err().code == errc::device_out_of_memory && !cache_.empty()) {
        // Something outside this worker holds device memory: give back all it keeps.
        while (!cache_.empty())
          drop_cached(cache_.begin());
        fresh = cfg_.api->allocate(dev, std::max<size_t>(bytes, 1));
      }
      // The device is full beyond what this worker counts (another process, or the
      // CUDA context's own): wait for this worker's buffers while it holds some.
      if (!fresh && fresh.err().code == errc::device_out_of_memory && used_ > 0)
        return std::nullopt;
      if (!fresh) return device_grant{0, 0, fresh.err()};
      p = *fresh;
    }
    live_.emplace(p, bytes);
    used_ += bytes;
    return device_grant{reinterpret_cast<uint64_t>(p), epoch_, {}};
  }

  // A freed block of exactly `bytes` whose last users are done: one that is ready now,
  // else, when the device has no room for a fresh one, the first, once it is ready.
  void* reuse(size_t bytes) {
    auto dev = static_cast<int>(cfg_.device);
    auto [first, last] = cache_.equal_range(bytes);
    if (first == last) return nullptr;
    auto pick = last;
    for (auto i = first; i != last && pick == last; ++i)
      if (all_done(i->second.after)) pick = i;
    if (pick == last) {
      if (used_ + cached_ + bytes <= capacity_) return nullptr; // room for a fresh one
      pick = first;
      for (auto e : pick->second.after)
        cfg_.api->wait(dev, e); // this worker has its own thread
    }
    for (auto e : pick->second.after)
      cfg_.api->destroy_event(dev, e);
    void* p = pick->second.p;
    cache_.erase(pick);
    cached_ -= bytes;
    return p;
  }

  // Frees `p`; the first failure of this incarnation is logged (after a fault, every
  // free reports that fault again).
  void release(void* p) {
    auto ok = cfg_.api->release(static_cast<int>(cfg_.device), p);
    if (!ok && !release_failed_) {
      release_failed_ = true;
      cfg_.log.warn(where() + ": freeing device memory failed: " + ok.err().message);
    }
  }

  void drop_cached(std::multimap<size_t, freed>::iterator i) {
    auto dev = static_cast<int>(cfg_.device);
    for (auto e : i->second.after)
      cfg_.api->destroy_event(dev, e);
    release(i->second.p); // cudaFree waits for the work on it
    cached_ -= i->first;
    cache_.erase(i);
  }

  void free(uint64_t address, uint64_t epoch) {
    if (epoch != epoch_) return; // of an incarnation whose context is gone
    auto i = live_.find(reinterpret_cast<void*>(address));
    if (i == live_.end()) return;
    used_ -= i->second;
    cached_ += i->second;
    cache_.emplace(i->second, freed{i->first, record_all()});
    live_.erase(i);
    // First come, first served: a large request is not passed by smaller ones forever.
    while (!waiting_.empty()) {
      auto g = try_grant(waiting_.front().bytes);
      if (!g) break;
      waiting_.front().rp.deliver(std::move(*g));
      waiting_.pop_front();
    }
  }

  void expire(uint64_t id) {
    for (auto i = waiting_.begin(); i != waiting_.end(); ++i)
      if (i->id == id) {
        i->rp.deliver(out_of_memory(i->bytes, "within its wait"));
        waiting_.erase(i);
        return;
      }
  }

  gpu_worker_config cfg_;
  uint64_t epoch_ = 0;
  size_t capacity_ = 0;
  size_t used_ = 0;   // held by live buffers
  size_t cached_ = 0; // freed blocks kept for reuse
  std::unordered_map<void*, size_t> live_;
  std::multimap<size_t, freed> cache_;
  std::shared_ptr<stream_pool> streams_;
  std::deque<waiter> waiting_;
  uint64_t next_waiter_ = 1;
  bool release_failed_ = false;
  std::vector<unmapping> unmapping_;
  bool polling_ = false; // a poll of unmapping_ is due
};

} // namespace

caf::actor spawn_gpu_worker(caf::actor_system& sys, gpu_worker_config cfg) {
  if (!cfg.own_thread) return sys.spawn<gpu_worker>(std::move(cfg));
  return sys.spawn<gpu_worker, caf::detached>(std::move(cfg));
}

} // namespace swarm::actors
