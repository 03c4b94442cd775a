#include "gpu/device_api.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

namespace swarm::gpu {

namespace {

// A block of simulated device memory: a memory file mapped here, which another process
// of the host maps too when it is shared (page-aligned, like cudaMalloc's 256 bytes and
// more).
struct host_block {
  size_t bytes = 0;  // asked for
  size_t mapped = 0; // rounded up to pages
  int fd = -1;
};

size_t page_size() {
  static const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

size_t page_rounded(size_t n) {
  auto page = page_size();
  return (std::max<size_t>(n, 1) + page - 1) / page * page;
}

void unmap(void* p, const host_block& b) {
  ::munmap(p, b.mapped);
  if (b.fd >= 0) ::close(b.fd);
}

} // namespace

// The simulated devices' memory and failures; the mutex makes each call thread-safe, as
// the CUDA runtime's are.
struct host_device_api::state {
  struct device {
    std::map<void*, host_block> blocks;
    std::map<void*, host_block> opened; // shared by other processes, mapped here
    std::set<int*> streams;
    size_t used = 0;
    std::string failed;
  };
  std::mutex mtx;
  std::vector<device> devs;
};

host_device_api::host_device_api(const std::vector<size_t>& memory_bytes)
    : state_(std::make_unique<state>()) {
  for (size_t i = 0; i < memory_bytes.size(); ++i)
    devices_.push_back({static_cast<int>(i), "host-simulated device " + std::to_string(i),
                        memory_bytes[i], -1, "host-" + std::to_string(i)});
  state_->devs.resize(memory_bytes.size());
}

host_device_api::~host_device_api() {
  for (auto& d : state_->devs) {
    for (auto& [p, b] : d.blocks)
      unmap(p, b);
    for (auto& [p, b] : d.opened)
      unmap(p, b);
    for (auto* s : d.streams)
      delete s;
  }
}

namespace {

error bad_device(int device, size_t count) {
  return {errc::invalid_argument, "host device " + std::to_string(device) +
                                      " does not exist (there are " +
                                      std::to_string(count) + ")"};
}

} // namespace

#define SWARM_HOST_DEVICE(device)                                                        \
  if (device < 0 || static_cast<size_t>(device) >= state_->devs.size())                  \
    return bad_device(device, state_->devs.size());                                      \
  std::lock_guard<std::mutex> guard{state_->mtx};                                        \
  auto& dev = state_->devs[static_cast<size_t>(device)];                                 \
  if (!dev.failed.empty())                                                               \
    return error{errc::device_failed,                                                    \
                 "host device " + std::to_string(device) + " failed: " + dev.failed};

result<void> host_device_api::open(int device, bool reset) {
  if (device < 0 || static_cast<size_t>(device) >= state_->devs.size())
    return bad_device(device, state_->devs.size());
  std::lock_guard<std::mutex> guard{state_->mtx};
  auto& dev = state_->devs[static_cast<size_t>(device)];
  // As under CUDA, a fault poisons the context for as long as the process runs: a reset
  // frees what it held, and opening it again fails.
  if (reset) {
    for (auto& [p, b] : dev.blocks)
      unmap(p, b);
    for (auto& [p, b] : dev.opened)
      unmap(p, b);
    for (auto* s : dev.streams)
      delete s;
    dev.blocks.clear();
    dev.opened.clear();
    dev.streams.clear();
    dev.used = 0;
  }
  if (!dev.failed.empty())
    return error{errc::device_failed, "host device " + std::to_string(device) +
                                          " is unavailable after its fault (" +
                                          dev.failed + ")"};
  return {};
}

result<size_t> host_device_api::free_memory(int device) {
  SWARM_HOST_DEVICE(device)
  return devices_[static_cast<size_t>(device)].memory_bytes - dev.used;
}

result<void*> host_device_api::allocate(int device, size_t bytes) {
  SWARM_HOST_DEVICE(device)
  auto capacity = devices_[static_cast<size_t>(device)].memory_bytes;
  if (bytes > capacity - dev.used)
    return error{errc::device_out_of_memory,
                 "host device " + std::to_string(device) +
                     " is out of memory: " + std::to_string(bytes) + " bytes asked, " +
                     std::to_string(capacity - dev.used) + " free"};
  host_block b{bytes, page_rounded(bytes),
               ::memfd_create("swarm-host-device", MFD_CLOEXEC)};
  void* p = MAP_FAILED;
  if (b.fd >= 0 && ::ftruncate(b.fd, static_cast<off_t>(b.mapped)) == 0)
    p = ::mmap(nullptr, b.mapped, PROT_READ | PROT_WRITE, MAP_SHARED, b.fd, 0);
  if (p == MAP_FAILED) {
    auto why = std::strerror(errno);
    if (b.fd >= 0) ::close(b.fd);
    return error{errc::device_out_of_memory, "host memory for simulated device " +
                                                 std::to_string(device) +
                                                 " ran out: " + why};
  }
  dev.blocks.emplace(p, b);
  dev.used += bytes;
  return p;
}

result<void> host_device_api::release(int device, void* p) noexcept {
  if (device < 0 || static_cast<size_t>(device) >= state_->devs.size())
    return bad_device(device, state_->devs.size());
  std::lock_guard<std::mutex> guard{state_->mtx};
  auto& dev = state_->devs[static_cast<size_t>(device)];
  auto i = dev.blocks.find(p);
  if (i == dev.blocks.end())
    return error{errc::invalid_argument, "host device " + std::to_string(device) +
                                             " holds no block at that address"};
  dev.used -= i->second.bytes;
  unmap(p, i->second);
  dev.blocks.erase(i);
  return {};
}

result<void*> host_device_api::host_alloc(size_t bytes) {
  void* p = std::aligned_alloc(page_size(), page_rounded(bytes));
  if (!p)
    return error{errc::device_out_of_memory,
                 "no host memory for " + std::to_string(bytes) + " bytes of staging"};
  return p;
}

void host_device_api::host_free(void* p) noexcept {
  std::free(p);
}

result<stream_handle> host_device_api::make_stream(int device) {
  SWARM_HOST_DEVICE(device)
  auto* s = new int{device};
  dev.streams.insert(s);
  return static_cast<stream_handle>(s);
}

void host_device_api::destroy_stream(int device, stream_handle s) noexcept {
  if (device < 0 || static_cast<size_t>(device) >= state_->devs.size()) return;
  std::lock_guard<std::mutex> guard{state_->mtx};
  auto& dev = state_->devs[static_cast<size_t>(device)];
  if (dev.streams.erase(static_cast<int*>(s)) > 0) delete static_cast<int*>(s);
}

result<void> host_device_api::copy(int dst_device, void* dst, int src_device,
                                   const void* src, size_t n, stream_handle) {
  {SWARM_HOST_DEVICE(src_device)} {SWARM_HOST_DEVICE(dst_device)} std::memcpy(dst, src,
                                                                              n);
  return {};
}

result<void> host_device_api::to_host(void* dst, int device, const void* src, size_t n,
                                      stream_handle) {
  {SWARM_HOST_DEVICE(device)} std::memcpy(dst, src, n);
  return {};
}

result<void> host_device_api::from_host(int device, void* dst, const void* src, size_t n,
                                        stream_handle) {
  {SWARM_HOST_DEVICE(device)} std::memcpy(dst, src, n);
  return {};
}

result<void> host_device_api::synchronize(int device, stream_handle) {
  SWARM_HOST_DEVICE(device)
  return {};
}

// Host copies are done when they return: every event is done as soon as it is recorded.
result<event_handle> host_device_api::record(int device, stream_handle) {
  SWARM_HOST_DEVICE(device)
  return static_cast<event_handle>(new int{device});
}

bool host_device_api::done(int, event_handle) noexcept {
  return true;
}

void host_device_api::wait(int, event_handle) noexcept {}

void host_device_api::destroy_event(int, event_handle e) noexcept {
  delete static_cast<int*>(e);
}

std::string host_device_api::sharing_host() const {
  auto id = boot_id();
  return id.empty() ? id : "host:" + id;
}

result<std::string> host_device_api::share(int device, void* p) {
  SWARM_HOST_DEVICE(device)
  auto i = dev.blocks.find(p);
  if (i == dev.blocks.end())
    return error{errc::invalid_argument, "host device " + std::to_string(device) +
                                             " made no block at that address to share"};
  return std::to_string(::getpid()) + "/" + std::to_string(i->second.fd);
}

result<void*> host_device_api::open_shared(int device, const std::string& handle,
                                           size_t bytes) {
  SWARM_HOST_DEVICE(device)
  auto slash = handle.find('/');
  auto path = "/proc/" + handle.substr(0, slash) + "/fd/" +
              (slash == std::string::npos ? "" : handle.substr(slash + 1));
  host_block b{bytes, page_rounded(bytes), -1};
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  // Mapped past its end, the memory would fault when read: a sharer that says it holds
  // more than it does is refused.
  struct stat st {};
  if (fd >= 0 && ::fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) < bytes) {
    ::close(fd);
    return error{errc::invalid_argument, "host device " + std::to_string(device) +
                                             ": the memory shared as '" + handle +
                                             "' holds " + std::to_string(st.st_size) +
                                             " bytes, fewer than the " +
                                             std::to_string(bytes) + " its sharer said"};
  }
  void* p = fd < 0 ? MAP_FAILED
                   : ::mmap(nullptr, b.mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  auto why = std::strerror(errno);
  if (fd >= 0) ::close(fd);
  if (p == MAP_FAILED)
    return error{errc::device_error, "host device " + std::to_string(device) +
                                         ": cannot map the memory shared as '" + handle +
                                         "' (" + path + "): " + why};
  dev.opened.emplace(p, b);
  return p;
}

void host_device_api::close_shared(int device, void* p) noexcept {
  if (device < 0 || static_cast<size_t>(device) >= state_->devs.size()) return;
  std::lock_guard<std::mutex> guard{state_->mtx};
  auto& dev = state_->devs[static_cast<size_t>(device)];
  if (auto i = dev.opened.find(p); i != dev.opened.end()) {
    unmap(p, i->second);
    dev.opened.erase(i);
  }
}

void host_device_api::fail(int device, std::string why) {
  if (device < 0 || static_cast<size_t>(device) >= state_->devs.size()) return;
  std::lock_guard<std::mutex> guard{state_->mtx};
  state_->devs[static_cast<size_t>(device)].failed = std::move(why);
}

#undef SWARM_HOST_DEVICE

} // namespace swarm::gpu
