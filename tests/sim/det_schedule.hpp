#pragma once

// The deterministic schedule's core, shared by its two halves: the schedule itself
// (det_schedule.cpp) and the C library's names that lead every thread into it
// (det_libc.cpp). Nothing outside tests/sim/det_* uses it; det_threads.hpp is the API.
//
// The records are process-wide by nature: every thread's calls come here, and the
// schedule is the one thing they share. One mutex (the C library's) guards them.

#include <dlfcn.h>
#include <pthread.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <unordered_map>
#include <vector>

namespace swarm::sim::det::detail {

// -- the C library's functions, looked up past this executable's

template <class F>
F real_fn(std::atomic<void*>& slot, const char* name, const char* version = nullptr) {
  auto* p = slot.load(std::memory_order_acquire);
  if (p == nullptr) {
    p = version != nullptr ? dlvsym(RTLD_NEXT, name, version) : dlsym(RTLD_NEXT, name);
    if (p == nullptr) {
      std::fprintf(stderr, "det_threads: no '%s' in the C library\n", name);
      std::abort();
    }
    slot.store(p, std::memory_order_release);
  }
  return reinterpret_cast<F>(p);
}

#define SWARM_REAL(name, type, ...)                                                      \
  real_fn<type>(                                                                         \
      []() -> std::atomic<void*>& {                                                      \
        static std::atomic<void*> slot{nullptr};                                         \
        return slot;                                                                     \
      }(),                                                                               \
      #name, ##__VA_ARGS__)

using create_fn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
using join_fn = int (*)(pthread_t, void**);
using mutex_fn = int (*)(pthread_mutex_t*);
using mutex_timed_fn = int (*)(pthread_mutex_t*, const timespec*);
using mutex_clock_fn = int (*)(pthread_mutex_t*, clockid_t, const timespec*);
using cond_wait_fn = int (*)(pthread_cond_t*, pthread_mutex_t*);
using cond_timed_fn = int (*)(pthread_cond_t*, pthread_mutex_t*, const timespec*);
using cond_clock_fn = int (*)(pthread_cond_t*, pthread_mutex_t*, clockid_t,
                              const timespec*);
using cond_fn = int (*)(pthread_cond_t*);
using rw_fn = int (*)(pthread_rwlock_t*);
using nanosleep_fn = int (*)(const timespec*, timespec*);
using clock_nanosleep_fn = int (*)(clockid_t, int, const timespec*, timespec*);
using usleep_fn = int (*)(useconds_t);
using yield_fn = int (*)();
using gettime_fn = int (*)(clockid_t, timespec*);
using gettimeofday_fn = int (*)(timeval*, void*);
using time_fn = time_t (*)(time_t*);
using syscall_fn = long (*)(long, ...);

int real_lock(pthread_mutex_t* m);
int real_unlock(pthread_mutex_t* m);
int real_wait(pthread_cond_t* c, pthread_mutex_t* m);
int real_signal(pthread_cond_t* c);

// -- the schedule

constexpr int64_t step_ns = 1000;       // virtual time a hand-over takes
constexpr uint64_t preempt_one_in = 16; // mutexes taken that hand the turn on first
constexpr int64_t monotonic_base = 1'000'000'000'000;        // 1,000 s
constexpr int64_t realtime_base = 1'700'000'000'000'000'000; // late 2023
constexpr int64_t forever = std::numeric_limits<int64_t>::max();

enum class thread_state { runnable, blocked, done };

struct thread_rec {
  int id = 0;
  pthread_cond_t turn = PTHREAD_COND_INITIALIZER; // signalled when it gets the turn
  thread_state state = thread_state::runnable;
  int64_t wake_at = forever; // a timed wait's deadline
  bool timed_out = false;
  std::vector<thread_rec*>* waiting_in = nullptr; // the list it waits in
  const char* doing = "starts";
  std::vector<thread_rec*> joiners;
};

struct mutex_rec {
  thread_rec* owner = nullptr;
  int count = 0;
  std::vector<thread_rec*> waiters;
};

struct rwlock_rec {
  thread_rec* writer = nullptr;
  int writes = 0;
  std::vector<thread_rec*> readers; // one entry per read lock held
  std::vector<thread_rec*> waiters;
};

struct world {
  pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
  std::atomic<bool> on{false};
  std::vector<thread_rec*> threads; // those not done, in the order they started
  int started = 0;
  thread_rec* current = nullptr;
  std::atomic<int64_t> now{0};
  std::mt19937_64 rng;
  std::atomic<uint64_t> switches{0};
  uint64_t fingerprint = 1469598103934665603ull;
  std::unordered_map<const void*, mutex_rec> mutexes;
  std::unordered_map<const void*, std::vector<thread_rec*>> conds;
  std::unordered_map<const void*, rwlock_rec> rwlocks;
  std::unordered_map<const void*, std::vector<thread_rec*>> futexes;
  std::unordered_map<pthread_t, thread_rec*> by_handle;
};

world& the_world();

/// The calling thread's record; null for a thread the schedule does not run.
extern thread_local thread_rec* me;

/// Whether the calling thread runs on the schedule.
bool scheduled();

/// Holds the schedule's mutex.
struct held {
  world& w;
  explicit held(world& x) : w(x) { real_lock(&w.mtx); }
  ~held() { real_unlock(&w.mtx); }
  held(const held&) = delete;
  held& operator=(const held&) = delete;
};

/// Makes `t` runnable again, out of the list it waited in.
void wake(thread_rec* t, bool timed_out);
/// Hands the turn on and waits until the calling thread has it again (unless it is
/// done). The schedule's mutex is held.
void pass(world& w);
/// Blocks the calling thread in `list` until woken or `deadline`; true when it timed out.
bool block_in(world& w, std::vector<thread_rec*>& list, int64_t deadline,
              const char* doing);

/// glibc's kind of `m` (normal, recursive, error-checking).
int mutex_kind(const pthread_mutex_t* m);
/// Takes `m`, waiting up to `deadline`; lets go of it entirely (its count before).
int acquire(world& w, pthread_mutex_t* m, int64_t deadline);
int release(world& w, pthread_mutex_t* m);
int lock_mutex(pthread_mutex_t* m, int64_t deadline);

int64_t ns_of(const timespec& ts);
/// Whether clock `c` reads virtual time; what it reads at virtual time 0; the virtual
/// deadline of `abstime` on it.
bool virtual_clock(clockid_t c);
int64_t clock_base(clockid_t c);
int64_t deadline_of(clockid_t c, const timespec* abstime);

int wait_cond(pthread_cond_t* c, pthread_mutex_t* m, int64_t deadline);
int sleep_until(int64_t deadline);
long futex_wait(const uint32_t* addr, uint32_t expected, int64_t deadline);
long futex_wake(const uint32_t* addr, long most);

/// Starts a thread on the schedule (`create` is the C library's pthread_create).
int start_thread(create_fn create, pthread_t* t, const pthread_attr_t* attr,
                 void* (*fn)(void*), void* arg);
/// Waits until the scheduled thread `t` is done.
void await_thread(pthread_t t);

} // namespace swarm::sim::det::detail
