#include "actors/ownership/stream_sender.hpp"

#include <caf/all.hpp>

#include <map>

#include "framework/detail/wire_convert.hpp"

namespace swarm::actors {

namespace {

// Writers wait in steps this long, to see a cancellation or a lost reader nobody signals.
constexpr auto poll = std::chrono::milliseconds(20);

// Class-based: a function-based actor spawned without arguments trips UBSan inside
// CAF 0.17 (a reference bound to its empty argument tuple's null pointer).
class stream_senders : public stream_senders_actor::base {
public:
  explicit stream_senders(caf::actor_config& cfg) : stream_senders_actor::base(cfg) {}

  behavior_type make_behavior() override {
    return {
        [this](put_atom, const object_key& k,
               const std::weak_ptr<detail::stream_sink>& s) { senders_[k] = s; },
        [this](stream_atom, const object_key& k, uint64_t taken) {
          auto i = senders_.find(k);
          if (i == senders_.end()) return;
          if (auto s = i->second.lock())
            s->taken(taken);
          else
            senders_.erase(i);
        },
        [this](erase_atom, const object_key& k) { senders_.erase(k); },
    };
  }

private:
  std::map<object_key, std::weak_ptr<detail::stream_sink>> senders_;
};

} // namespace

stream_senders_actor spawn_stream_senders(caf::actor_system& sys) {
  return sys.spawn<stream_senders>();
}

stream_sender::stream_sender(stream_route route, object_id result, uint64_t items_owner,
                             size_t window)
    : route_(std::move(route)), result_(result), items_owner_(items_owner),
      window_(window == 0 ? 1 : window) {}

stream_sender::~stream_sender() {
  if (route_.ended) route_.ended();
}

result<void> stream_sender::write(uint64_t seq, detail::boxed_value v,
                                  const std::atomic<bool>& cancelled) {
  bool gone = false;
  {
    std::unique_lock<std::mutex> guard{mtx_};
    for (;;) {
      gone = cancelled.load() || taken_ == detail::reader_gone;
      if (gone || seq < taken_ + window_) break;
      if (!route_.connected())
        return error{errc::node_unreachable,
                     "the reader of stream " + result_.to_string() + " is unreachable"};
      cv_.wait_for(guard, poll);
    }
  }
  if (gone)
    return error{errc::cancelled, "the stream's reader went away or cancelled it"};
  auto id = detail::stream_item_id(items_owner_, seq);
  route_.send(wire_msg::stream_item{detail::to_wire(result_), seq, route_.travel(id, v)});
  return {};
}

void stream_sender::taken(uint64_t taken) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (taken <= taken_) return;
  taken_ = taken;
  cv_.notify_all();
}

} // namespace swarm::actors
