#include "framework/detail/device_memory.hpp"

namespace swarm::detail {

void device_arrival::land(uint64_t offset, uint64_t length) noexcept {
  std::lock_guard<std::mutex> guard{mtx_};
  if (!block_ || offset > size_ || length > size_ - offset) return;
  if (!block_->memory->from_host(*block_, offset, host_ + offset, length,
                                 thread_gpu_slot())) {
    block_.reset(); // its readers copy it from the host
    return;
  }
  landed_ += length;
}

int device_arrival::landed_on() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return block_ && landed_ == size_ ? static_cast<int>(block_->device) : -1;
}

std::shared_ptr<device_block> device_arrival::take(uint32_t device) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (!block_ || block_->device != device || landed_ != size_) return nullptr;
  return std::move(block_);
}

void device_arrival::reclaim(uint32_t device) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (block_ && block_->device == device) block_.reset();
}

} // namespace swarm::detail
