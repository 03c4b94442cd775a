#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "base/result.hpp"
#include "framework/detail/device_memory.hpp"
#include "framework/detail/type_descriptor.hpp"
#include "transport/codec.hpp"

namespace swarm {

class context;

/// Bytes in the memory of a GPU: what a GPU task returns to leave its output on the
/// device. Passed to a task on the same device, nothing moves; on another device of the
/// node, `context::on_device` copies it there (a peer copy); read by another node
/// process of the same host, that one maps the same device memory (CUDA IPC); sent to
/// another host, its bytes are read to the host once and travel by the bulk path, and
/// `on_device` writes them to the device of the task there. Read on the host only with
/// `to_host`. The
/// device memory is freed when the last buffer holding it goes, like any object. Made
/// by `context::device_alloc` and `context::to_device` inside a GPU task.
class device_buffer {
public:
  device_buffer() = default;

  /// For the runtime: a buffer on a device.
  explicit device_buffer(std::shared_ptr<detail::device_block> b)
      : block_(std::move(b)), size_(block_->bytes) {}

  /// Its size in bytes.
  size_t size() const noexcept { return size_; }

  /// Whether its bytes are in the memory of a device of this node (not only on the host,
  /// having come from another node).
  bool on_device() const noexcept { return block_ != nullptr; }

  /// The device of this node it is on; -1 when it is not on one.
  int device() const noexcept { return block_ ? static_cast<int>(block_->device) : -1; }

  /// Its device memory (for kernels); nullptr when it is not on a device.
  void* data() const noexcept { return block_ ? block_->ptr : nullptr; }

  /// `data()` as an array of `T`.
  template <class T> T* data_as() const noexcept { return static_cast<T*>(data()); }

  /// Came from another node as bytes: the device of this node they were written to as
  /// they arrived, chunk by chunk, until a task there takes them (`context::on_device`
  /// then copies nothing); -1 otherwise.
  int landed_device() const;

  /// Why its bytes are gone (the device it was on failed before it was sent); empty
  /// while it holds them.
  const std::string& lost() const noexcept { return lost_; }

  /// Its bytes, copied to the host.
  result<std::vector<uint8_t>> to_host() const;

  /// Its bytes as `T`s, copied to the host; its size must be a multiple of `sizeof(T)`.
  template <class T> result<std::vector<T>> to_host_as() const {
    static_assert(std::is_trivially_copyable_v<T>, "to_host_as needs plain data");
    if (size_ % sizeof(T) != 0)
      return error{errc::type_mismatch, "a device buffer of " + std::to_string(size_) +
                                            " bytes is no array of " +
                                            std::to_string(sizeof(T)) + "-byte values"};
    std::vector<T> out(size_ / sizeof(T));
    if (auto ok = copy_to(out.data()); !ok) return ok.err();
    return out;
  }

  /// For the runtime: its `size()` bytes in host memory, read from the device once and
  /// kept with it (in staging memory, which the device copies at full speed).
  result<std::shared_ptr<const uint8_t>> host_bytes() const;

  /// For the runtime: a buffer of bytes that came from another node, on no device yet,
  /// held in `bytes`; `arrival` writes them to a device of this node as they come.
  static device_buffer staged(std::shared_ptr<const uint8_t> bytes, size_t size,
                              std::shared_ptr<detail::device_arrival> arrival = nullptr);
  /// For the runtime: the same, held in a vector.
  static device_buffer staged(std::vector<uint8_t> bytes);
  /// For the runtime: a buffer whose bytes were lost, and why.
  static device_buffer lost(std::string why, size_t size);

  /// For the runtime: whether a bulk layout of it reads its bytes from the device only
  /// when they are sent (a large buffer on a device, not read to the host yet).
  bool reads_when_sent() const;
  /// For the runtime: host memory its bytes are read into when first sent
  /// (`read_mirror`).
  const uint8_t* mirror() const;
  /// Reads its first `up_to` bytes (all by default) into `mirror()`, each byte once, as
  /// the chunks of a send need them; false, with why, when they cannot be.
  bool read_mirror(std::string& why, size_t up_to = SIZE_MAX) const;

  /// The block it is on a device in; null when it is not.
  const std::shared_ptr<detail::device_block>& block() const noexcept { return block_; }

  /// For the runtime: the block its bytes were written to on `device` as they arrived,
  /// once all are there, for the one reader that takes it; null otherwise.
  std::shared_ptr<detail::device_block> take_landed(uint32_t device) const;

private:
  result<void> copy_to(void* dst) const;

  std::shared_ptr<detail::device_block> block_;
  std::shared_ptr<const uint8_t> host_; // came from another node
  std::shared_ptr<detail::device_arrival> arrival_; // ... and lands on a device here
  size_t size_ = 0;
  std::string lost_;
};

namespace detail {
/// Host memory for `bytes` bytes of a device buffer arriving at the node `ctx` (may be
/// null): its devices' staging memory when it has devices and the bytes are many, plain
/// memory otherwise (not value-initialised).
std::shared_ptr<uint8_t> arrival_memory(codec_context* ctx, size_t bytes);
/// A device of the node `ctx` (may be null) with room for the `bytes` arriving into
/// `host` now, written there as they come; null when there is none.
std::shared_ptr<device_arrival> arrival_on_device(codec_context* ctx, const uint8_t* host,
                                                  size_t bytes);
} // namespace detail

/// Sends a buffer as its bytes (read from the device once), or as why they are lost: a
/// byte count, then the bytes, as a `std::vector<uint8_t>` is sent.
template <class Inspector> bool inspect(Inspector& f, device_buffer& b) {
  uint8_t lost = 0;
  if constexpr (std::is_same_v<Inspector, binary_reader>) {
    if (!f(lost)) return false;
    if (lost) {
      std::string why;
      uint64_t size = 0;
      if (!f(why, size)) return false;
      b = device_buffer::lost(std::move(why), size);
      return true;
    }
    uint64_t size = 0;
    std::shared_ptr<uint8_t> bytes;
    if (!f(size) || !f.read_bytes(size, [&](size_t n) {
          bytes = detail::arrival_memory(f.context(), n);
          return bytes.get();
        }))
      return false;
    // Received chunk by chunk (a pull): written to a device as they come.
    std::shared_ptr<detail::device_arrival> arrival;
    if (f.lands_later())
      if ((arrival = detail::arrival_on_device(f.context(), bytes.get(), size)))
        f.when_landed(
            [a = arrival](uint64_t offset, uint64_t length) { a->land(offset, length); });
    b = device_buffer::staged(std::move(bytes), static_cast<size_t>(size),
                              std::move(arrival));
    return true;
  } else {
    if (!b.lost().empty()) {
      auto why = b.lost();
      uint64_t size = b.size();
      lost = 1;
      return f(lost, why, size);
    }
    uint64_t size = b.size();
    if constexpr (std::is_same_v<Inspector, basic_writer<detail::counting_sink>>) {
      // Counted as sent, without reading the device.
      f(lost, size);
      f.sink().append(nullptr, b.size());
      return true;
    } else {
      if constexpr (std::is_same_v<Inspector, basic_writer<detail::segment_sink>>)
        if (b.reads_when_sent()) {
          // Laid out for the bulk path: its bytes leave the device only if it is sent.
          f(lost, size);
          f.sink().blocks.emplace_back(b.mirror(), b.size());
          f.sink().fills.emplace_back(
              f.sink().blocks.size() - 1,
              [b](uint64_t offset, uint64_t length, std::string& why) {
                return b.read_mirror(why, offset + length);
              });
          return true;
        }
      auto host = b.host_bytes();
      if (!host) {
        lost = 1;
        auto why = b.lost().empty() ? host.err().message : b.lost();
        return f(lost, why, size);
      }
      f(lost, size);
      f.sink().append(host->get(), b.size());
      return true;
    }
  }
}

namespace detail {
/// A device buffer's shape for drivers in other languages (see `shape_of`): `d`, a flag
/// (0: its bytes follow, as a vector of bytes; 1: lost, why and its size follow).
template <> struct shape_trait<device_buffer> {
  static std::string get() { return "d"; }
};
} // namespace detail

} // namespace swarm
