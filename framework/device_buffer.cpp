#include "framework/device_buffer.hpp"

#include "framework/detail/core.hpp"

#include <algorithm>
#include <cstring>

namespace swarm {

namespace detail {

namespace {
thread_local uint64_t current_gpu_slot = 0;
} // namespace

uint64_t thread_gpu_slot() noexcept {
  return current_gpu_slot;
}

gpu_slot_scope::gpu_slot_scope(uint64_t slot) noexcept : before_(current_gpu_slot) {
  current_gpu_slot = slot;
}

gpu_slot_scope::~gpu_slot_scope() {
  current_gpu_slot = before_;
}

namespace {

// `mem`'s staging memory for `bytes` when it has some to give (and `mem` is not null),
// else plain memory, not value-initialised: its pages are touched only when written.
std::shared_ptr<uint8_t> host_memory(device_memory* mem, size_t bytes) {
  if (auto out = mem ? mem->staging(bytes) : nullptr) return out;
  return std::shared_ptr<uint8_t>{new uint8_t[bytes], std::default_delete<uint8_t[]>{}};
}

} // namespace

std::shared_ptr<uint8_t> arrival_memory(codec_context* ctx, size_t bytes) {
  std::shared_ptr<device_memory> mem;
  if (auto* node = dynamic_cast<core*>(ctx); node && bytes >= bulk_block_min)
    mem = node->devices();
  return host_memory(mem.get(), bytes);
}

std::shared_ptr<device_arrival> arrival_on_device(codec_context* ctx, const uint8_t* host,
                                                  size_t bytes) {
  auto* node = dynamic_cast<core*>(ctx);
  auto mem = node ? node->devices() : nullptr;
  return mem ? mem->arrival(bytes, host) : nullptr;
}

} // namespace detail

device_buffer device_buffer::staged(std::shared_ptr<const uint8_t> bytes, size_t size,
                                    std::shared_ptr<detail::device_arrival> arrival) {
  device_buffer b;
  b.size_ = size;
  b.host_ = std::move(bytes);
  b.arrival_ = std::move(arrival);
  return b;
}

int device_buffer::landed_device() const {
  return arrival_ ? arrival_->landed_on() : -1;
}

std::shared_ptr<detail::device_block> device_buffer::take_landed(uint32_t device) const {
  return arrival_ ? arrival_->take(device) : nullptr;
}

device_buffer device_buffer::staged(std::vector<uint8_t> bytes) {
  auto v = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  return staged(std::shared_ptr<const uint8_t>{v, v->data()}, v->size());
}

device_buffer device_buffer::lost(std::string why, size_t size) {
  device_buffer b;
  b.size_ = size;
  b.lost_ = why.empty() ? "its bytes were lost" : std::move(why);
  return b;
}

result<std::shared_ptr<const uint8_t>> device_buffer::host_bytes() const {
  if (host_) return host_;
  if (!lost_.empty()) return error{errc::object_lost, "device buffer: " + lost_};
  if (!block_ || size_ == 0) return std::shared_ptr<const uint8_t>{};
  mirror();
  if (std::string why; !read_mirror(why)) return error{errc::object_lost, why};
  return std::shared_ptr<const uint8_t>{block_->mirror};
}

bool device_buffer::reads_when_sent() const {
  if (!block_ || !lost_.empty() || size_ < bulk_block_min) return false;
  std::lock_guard<std::mutex> guard{block_->host_mtx};
  return !block_->mirror_read;
}

const uint8_t* device_buffer::mirror() const {
  std::lock_guard<std::mutex> guard{block_->host_mtx};
  if (!block_->mirror) block_->mirror = detail::host_memory(block_->memory.get(), size_);
  return block_->mirror.get();
}

bool device_buffer::read_mirror(std::string& why, size_t up_to) const {
  std::lock_guard<std::mutex> guard{block_->host_mtx};
  auto& b = *block_;
  auto end = std::min(up_to, size_);
  if (b.mirror_read || end <= b.mirror_upto) return true;
  auto ok = b.memory->to_host(b.mirror.get() + b.mirror_upto, b, b.mirror_upto,
                              end - b.mirror_upto, detail::thread_gpu_slot());
  if (!ok) {
    why = "device buffer: " + ok.err().message;
    return false;
  }
  b.mirror_upto = end;
  b.mirror_read = end == size_;
  return true;
}

result<void> device_buffer::copy_to(void* dst) const {
  if (!lost_.empty()) return error{errc::object_lost, "device buffer: " + lost_};
  if (size_ == 0) return {};
  if (block_) {
    {
      std::lock_guard<std::mutex> guard{block_->host_mtx};
      if (block_->mirror_read) {
        std::memcpy(dst, block_->mirror.get(), size_);
        return {};
      }
    }
    return block_->memory->to_host(dst, *block_, 0, size_, detail::thread_gpu_slot());
  }
  if (host_) std::memcpy(dst, host_.get(), size_);
  return {};
}

result<std::vector<uint8_t>> device_buffer::to_host() const {
  std::vector<uint8_t> out(size_);
  if (auto ok = copy_to(out.data()); !ok) return ok.err();
  return out;
}

} // namespace swarm
