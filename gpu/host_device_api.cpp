#include "gpu/device_api.hpp"
#include "gpu/host_stream.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

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

// The simulated devices' memory, streams and failures; the mutex makes each call
// thread-safe, as the CUDA runtime's are (a stream's work runs outside it).
struct host_device_api::state {
  struct device {
    std::map<void*, host_block> blocks;
    std::map<void*, host_block> opened; // shared by other processes, mapped here
    std::map<void*, std::shared_ptr<host_stream>> streams;
    size_t used = 0;
    std::string failed;
    // Set with `failed`, read by its streams' threads: they run nothing more.
    std::shared_ptr<std::atomic<bool>> poisoned = std::make_shared<std::atomic<bool>>();
  };
  std::mutex mtx;
  std::vector<device> devs;
};

namespace {

// A point in a stream's work; null `stream`: the default stream's, done when recorded.
struct host_event {
  std::shared_ptr<host_stream> stream;
  host_stream::mark at = 0;
};

} // namespace

host_device_api::host_device_api(const std::vector<size_t>& memory_bytes)
    : state_(std::make_unique<state>()) {
  for (size_t i = 0; i < memory_bytes.size(); ++i)
    devices_.push_back({static_cast<int>(i), "host-simulated device " + std::to_string(i),
                        memory_bytes[i], -1, "host-" + std::to_string(i)});
  state_->devs.resize(memory_bytes.size());
}

host_device_api::~host_device_api() {
  // Each stream runs what was queued on it, then its thread ends.
  for (size_t d = 0; d < state_->devs.size(); ++d)
    drop_streams(static_cast<int>(d));
  for (auto& d : state_->devs) {
    for (auto& [p, b] : d.blocks)
      unmap(p, b);
    for (auto& [p, b] : d.opened)
      unmap(p, b);
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
  if (reset) drop_streams(device);
  std::lock_guard<std::mutex> guard{state_->mtx};
  auto& dev = state_->devs[static_cast<size_t>(device)];
  // As under CUDA, a fault poisons the context for as long as the process runs: a reset
  // frees what it held, and opening it again fails.
  if (reset) {
    for (auto& [p, b] : dev.blocks)
      unmap(p, b);
    for (auto& [p, b] : dev.opened)
      unmap(p, b);
    dev.blocks.clear();
    dev.opened.clear();
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
  // As cudaFree: after the work queued on the device so far.
  for (auto& s : streams_of(device))
    s->finish();
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
  auto s = std::make_shared<host_stream>(
      dev.poisoned, [this, device](std::string why) { fail(device, std::move(why)); });
  auto* handle = static_cast<stream_handle>(s.get());
  dev.streams.emplace(handle, std::move(s));
  return handle;
}

void host_device_api::destroy_stream(int device, stream_handle s) noexcept {
  if (device < 0 || static_cast<size_t>(device) >= state_->devs.size()) return;
  std::shared_ptr<host_stream> gone; // its work runs, then its thread ends, unlocked
  std::lock_guard<std::mutex> guard{state_->mtx};
  auto& dev = state_->devs[static_cast<size_t>(device)];
  if (auto i = dev.streams.find(s); i != dev.streams.end()) {
    gone = std::move(i->second);
    dev.streams.erase(i);
  }
}

result<std::shared_ptr<host_stream>> host_device_api::stream_of(int device,
                                                                stream_handle s) {
  SWARM_HOST_DEVICE(device)
  if (!s) return std::shared_ptr<host_stream>{};
  auto i = dev.streams.find(s);
  if (i == dev.streams.end())
    return error{errc::invalid_argument,
                 "host device " + std::to_string(device) + " has no such stream"};
  return i->second;
}

void host_device_api::drop_streams(int device) noexcept {
  std::map<void*, std::shared_ptr<host_stream>> gone;
  {
    std::lock_guard<std::mutex> guard{state_->mtx};
    gone.swap(state_->devs[static_cast<size_t>(device)].streams);
  }
}

std::vector<std::shared_ptr<host_stream>> host_device_api::streams_of(int device) {
  std::vector<std::shared_ptr<host_stream>> out;
  std::lock_guard<std::mutex> guard{state_->mtx};
  for (auto& [h, s] : state_->devs[static_cast<size_t>(device)].streams)
    out.push_back(s);
  return out;
}

result<void> host_device_api::failure(int device) {
  SWARM_HOST_DEVICE(device)
  return {};
}

result<void> host_device_api::in_order(int device, stream_handle s,
                                       const std::function<void()>& work) {
  auto stream = stream_of(device, s);
  if (!stream) return stream.err();
  if (*stream)
    (*stream)->run(work);
  else
    work(); // the default stream: in order with nothing else here
  return failure(device);
}

result<void> host_device_api::copy(int dst_device, void* dst, int src_device,
                                   const void* src, size_t n, stream_handle s) {
  if (auto ok = failure(src_device); !ok) return ok;
  return in_order(dst_device, s, [=] { std::memcpy(dst, src, n); });
}

result<void> host_device_api::to_host(void* dst, int device, const void* src, size_t n,
                                      stream_handle s) {
  return in_order(device, s, [=] { std::memcpy(dst, src, n); });
}

result<void> host_device_api::from_host(int device, void* dst, const void* src, size_t n,
                                        stream_handle s) {
  return in_order(device, s, [=] { std::memcpy(dst, src, n); });
}

result<void> host_device_api::launch(int device, stream_handle s,
                                     std::function<void()> kernel) {
  auto stream = stream_of(device, s);
  if (!stream) return stream.err();
  if (!*stream)
    return error{errc::invalid_argument,
                 "host device " + std::to_string(device) +
                     ": a kernel is launched on a stream (the task's gpu_stream())"};
  (*stream)->enqueue(std::move(kernel));
  return {};
}

result<void> host_device_api::synchronize(int device, stream_handle s) {
  auto stream = stream_of(device, s);
  if (!stream) return stream.err();
  if (*stream) (*stream)->finish();
  return failure(device);
}

result<event_handle> host_device_api::record(int device, stream_handle s) {
  auto stream = stream_of(device, s);
  if (!stream) return stream.err();
  auto mark = *stream ? (*stream)->now() : 0;
  return static_cast<event_handle>(new host_event{std::move(*stream), mark});
}

bool host_device_api::done(int, event_handle e) noexcept {
  auto& ev = *static_cast<host_event*>(e);
  return !ev.stream || ev.stream->passed(ev.at);
}

void host_device_api::wait(int, event_handle e) noexcept {
  auto& ev = *static_cast<host_event*>(e);
  if (ev.stream) ev.stream->wait(ev.at);
}

void host_device_api::destroy_event(int, event_handle e) noexcept {
  delete static_cast<host_event*>(e);
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
  auto& dev = state_->devs[static_cast<size_t>(device)];
  if (!dev.failed.empty()) return; // the first fault is the one to report
  dev.failed = std::move(why);
  dev.poisoned->store(true, std::memory_order_release);
}

#undef SWARM_HOST_DEVICE

} // namespace swarm::gpu
