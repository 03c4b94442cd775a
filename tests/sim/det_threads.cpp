#include "tests/sim/det_threads.hpp"

// The process's pthread, sleep and clock functions, defined here (the executable exports
// them: every library's calls land here first) and forwarded to the C library's until
// `start`. After it, mutexes, condition variables and read-write locks are records in
// this file, keyed by their address: the C library's objects are never touched, and a
// thread that must wait parks on a condition variable of its own until the schedule
// gives it the turn.
//
// The records are process-wide by nature: every thread's calls come here, and the
// schedule is the one thing they share. One mutex (the C library's) guards them.

#include <dlfcn.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <unordered_map>
#include <vector>

namespace {

// -- the C library's functions

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

// The real mutex and condition variables of the schedule itself.
int real_lock(pthread_mutex_t* m) {
  return SWARM_REAL(pthread_mutex_lock, mutex_fn)(m);
}
int real_unlock(pthread_mutex_t* m) {
  return SWARM_REAL(pthread_mutex_unlock, mutex_fn)(m);
}
int real_wait(pthread_cond_t* c, pthread_mutex_t* m) {
  return SWARM_REAL(pthread_cond_wait, cond_wait_fn, "GLIBC_2.3.2")(c, m);
}
int real_signal(pthread_cond_t* c) {
  return SWARM_REAL(pthread_cond_signal, cond_fn, "GLIBC_2.3.2")(c);
}

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

world& the_world() {
  static world w;
  return w;
}

thread_local thread_rec* me = nullptr;

bool scheduled() {
  return me != nullptr && the_world().on.load();
}

struct held {
  world& w;
  explicit held(world& x) : w(x) { real_lock(&w.mtx); }
  ~held() { real_unlock(&w.mtx); }
  held(const held&) = delete;
  held& operator=(const held&) = delete;
};

void wake(thread_rec* t, bool timed_out) {
  if (t->waiting_in != nullptr) {
    auto& list = *t->waiting_in;
    list.erase(std::remove(list.begin(), list.end(), t), list.end());
    t->waiting_in = nullptr;
  }
  t->state = thread_state::runnable;
  t->wake_at = forever;
  t->timed_out = timed_out;
}

[[noreturn]] void deadlock(world& w) {
  std::fprintf(stderr,
               "det_threads: every thread waits and none has a deadline (at %.6f "
               "virtual s):\n",
               static_cast<double>(w.now.load()) / 1e9);
  for (auto* t : w.threads)
    std::fprintf(stderr, "  thread %d: %s\n", t->id, t->doing);
  std::fflush(stderr);
  _exit(3);
}

// The next thread to run: drawn among those that can, after waking the timed waits that
// are due; with none, time moves to the next deadline.
thread_rec* pick(world& w) {
  std::vector<thread_rec*> ready;
  for (;;) {
    ready.clear();
    int64_t soonest = forever;
    auto now = w.now.load();
    for (auto* t : w.threads) {
      if (t->state == thread_state::blocked && t->wake_at != forever) {
        if (t->wake_at <= now)
          wake(t, true);
        else
          soonest = std::min(soonest, t->wake_at);
      }
      if (t->state == thread_state::runnable) ready.push_back(t);
    }
    if (!ready.empty()) return ready[w.rng() % ready.size()];
    if (soonest == forever) deadlock(w);
    w.now.store(soonest);
  }
}

// Hands the turn to the next thread and waits until this one has it again (unless it
// is done). `w.mtx` is held.
void pass(world& w) {
  w.now.fetch_add(step_ns);
  auto* next = pick(w);
  w.switches.fetch_add(1);
  if (next != me) {
    w.current = next;
    real_signal(&next->turn);
  }
  while (w.current != me && me->state != thread_state::done)
    real_wait(&me->turn, &w.mtx);
}

// Blocks `me` in `list` until woken or `deadline`; true when it timed out.
bool block_in(world& w, std::vector<thread_rec*>& list, int64_t deadline,
              const char* doing) {
  if (deadline != forever && w.now.load() >= deadline) return true;
  me->state = thread_state::blocked;
  me->wake_at = deadline;
  me->timed_out = false;
  me->waiting_in = &list;
  me->doing = doing;
  list.push_back(me);
  pass(w);
  me->doing = "runs";
  return me->timed_out;
}

int mutex_kind(const pthread_mutex_t* m) {
  return m->__data.__kind & 3;
}

// Takes `m` for `me`, waiting up to `deadline`. `w.mtx` is held.
int acquire(world& w, pthread_mutex_t* m, int64_t deadline) {
  for (;;) {
    auto& r = w.mutexes[m];
    if (r.owner == nullptr) {
      r.owner = me;
      r.count = 1;
      return 0;
    }
    if (r.owner == me) {
      if (mutex_kind(m) == PTHREAD_MUTEX_RECURSIVE_NP) {
        ++r.count;
        return 0;
      }
      if (mutex_kind(m) == PTHREAD_MUTEX_ERRORCHECK_NP) return EDEADLK;
    }
    if (block_in(w, r.waiters, deadline, "waits for a mutex")) return ETIMEDOUT;
  }
}

// Lets go of `m` entirely; its count before.
int release(world& w, pthread_mutex_t* m) {
  auto i = w.mutexes.find(m);
  if (i == w.mutexes.end() || i->second.owner != me) return 0;
  auto count = i->second.count;
  for (auto* t : std::vector<thread_rec*>{i->second.waiters})
    wake(t, false);
  w.mutexes.erase(i);
  return count;
}

int64_t ns_of(const timespec& ts) {
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Every clock reads virtual time, the CPU-time ones too (what a node reports of its load
// must not depend on the machine either).
bool virtual_clock(clockid_t c) {
  return c == CLOCK_REALTIME || c == CLOCK_MONOTONIC || c == CLOCK_MONOTONIC_RAW ||
         c == CLOCK_REALTIME_COARSE || c == CLOCK_MONOTONIC_COARSE ||
         c == CLOCK_BOOTTIME || c == CLOCK_PROCESS_CPUTIME_ID ||
         c == CLOCK_THREAD_CPUTIME_ID;
}

int64_t clock_base(clockid_t c) {
  return c == CLOCK_REALTIME || c == CLOCK_REALTIME_COARSE ? realtime_base
                                                           : monotonic_base;
}

// The virtual deadline of `abstime` on clock `c`.
int64_t deadline_of(clockid_t c, const timespec* abstime) {
  return ns_of(*abstime) - clock_base(c);
}

int wait_cond(pthread_cond_t* c, pthread_mutex_t* m, int64_t deadline) {
  auto& w = the_world();
  held h{w};
  auto count = release(w, m);
  bool timed_out = block_in(w, w.conds[c], deadline, "waits on a condition");
  if (auto i = w.conds.find(c); i != w.conds.end() && i->second.empty()) w.conds.erase(i);
  acquire(w, m, forever);
  w.mutexes[m].count = std::max(count, 1);
  return timed_out ? ETIMEDOUT : 0;
}

int sleep_until(int64_t deadline) {
  auto& w = the_world();
  held h{w};
  std::vector<thread_rec*> none;
  block_in(w, none, deadline, "sleeps");
  return 0;
}

int lock_mutex(pthread_mutex_t* m, int64_t deadline) {
  auto& w = the_world();
  held h{w};
  if (w.rng() % preempt_one_in == 0) pass(w);
  return acquire(w, m, deadline);
}

// A futex of the C++ library's own (std::future, std::call_once, static locals): waits
// while `*addr == expected`, up to `deadline`.
long futex_wait(const uint32_t* addr, uint32_t expected, int64_t deadline) {
  auto& w = the_world();
  held h{w};
  if (__atomic_load_n(addr, __ATOMIC_SEQ_CST) != expected) {
    errno = EAGAIN;
    return -1;
  }
  bool timed_out = block_in(w, w.futexes[addr], deadline, "waits on a futex");
  if (auto i = w.futexes.find(addr); i != w.futexes.end() && i->second.empty())
    w.futexes.erase(i);
  if (timed_out) {
    errno = ETIMEDOUT;
    return -1;
  }
  return 0;
}

long futex_wake(const uint32_t* addr, long most) {
  auto& w = the_world();
  held h{w};
  auto i = w.futexes.find(addr);
  if (i == w.futexes.end()) return 0;
  long woken = 0;
  while (!i->second.empty() && woken < most) {
    wake(i->second.front(), false);
    ++woken;
  }
  if (i->second.empty()) w.futexes.erase(i);
  return woken;
}

struct start_pack {
  thread_rec* rec;
  void* (*fn)(void*);
  void* arg;
};

pthread_key_t gone_key;

// The thread's end, once its thread-locals are destroyed: joiners wake, the turn goes on.
void on_thread_gone(void*) {
  auto& w = the_world();
  held h{w};
  me->state = thread_state::done;
  me->doing = "done";
  for (auto* j : me->joiners)
    wake(j, false);
  me->joiners.clear();
  w.threads.erase(std::find(w.threads.begin(), w.threads.end(), me));
  pass(w);
  me = nullptr;
}

void* trampoline(void* p) {
  auto pack = *static_cast<start_pack*>(p);
  delete static_cast<start_pack*>(p);
  me = pack.rec;
  pthread_setspecific(gone_key, me);
  {
    auto& w = the_world();
    held h{w};
    while (w.current != me)
      real_wait(&me->turn, &w.mtx);
    me->doing = "runs";
  }
  return pack.fn(pack.arg);
}

// Stops the run when no thread got the turn for a long (real) while: the thread that has
// it waits where the schedule cannot see.
void* watchdog(void*) {
  auto& w = the_world();
  uint64_t seen = w.switches.load();
  int still = 0;
  for (;;) {
    timespec two{2, 0};
    SWARM_REAL(nanosleep, nanosleep_fn)(&two, nullptr);
    auto now = w.switches.load();
    still = now == seen ? still + 1 : 0;
    seen = now;
    if (still >= 30) {
      auto* t = w.current;
      std::fprintf(stderr,
                   "det_threads: no hand-over for 60 s: thread %d (%s) holds the turn "
                   "and waits where the schedule cannot see\n",
                   t != nullptr ? t->id : -1, t != nullptr ? t->doing : "?");
      std::fflush(stderr);
      _exit(4);
    }
  }
  return nullptr;
}

} // namespace

namespace swarm::sim::det {

void start(uint64_t seed) {
  auto& w = the_world();
  pthread_key_create(&gone_key, on_thread_gone);
  auto* first = new thread_rec{};
  first->doing = "runs";
  {
    held h{w};
    w.rng.seed(seed);
    first->id = w.started++;
    w.threads.push_back(first);
    w.current = first;
  }
  pthread_t dog;
  SWARM_REAL(pthread_create, create_fn)(&dog, nullptr, watchdog, nullptr);
  pthread_detach(dog);
  me = first;
  w.on.store(true);
}

bool running() {
  return the_world().on.load();
}

uint64_t switches() {
  return the_world().switches.load();
}

double virtual_seconds() {
  return static_cast<double>(the_world().now.load()) / 1e9;
}

void observe(const std::string& what) {
  auto& w = the_world();
  held h{w};
  for (unsigned char c : what) {
    w.fingerprint ^= c;
    w.fingerprint *= 1099511628211ull;
  }
  w.fingerprint ^= 0xff;
  w.fingerprint *= 1099511628211ull;
}

uint64_t fingerprint() {
  auto& w = the_world();
  held h{w};
  return w.fingerprint;
}

} // namespace swarm::sim::det

// -- the C library's names

extern "C" {

int pthread_create(pthread_t* t, const pthread_attr_t* attr, void* (*fn)(void*),
                   void* arg) noexcept {
  auto create = SWARM_REAL(pthread_create, create_fn);
  if (!scheduled()) return create(t, attr, fn, arg);
  auto& w = the_world();
  auto* rec = new thread_rec{};
  {
    held h{w};
    rec->id = w.started++;
    w.threads.push_back(rec);
    rec->state = thread_state::blocked; // until the thread exists
  }
  auto rc = create(t, attr, trampoline, new start_pack{rec, fn, arg});
  held h{w};
  if (rc != 0) {
    rec->state = thread_state::done;
    return rc;
  }
  rec->state = thread_state::runnable;
  w.by_handle[*t] = rec;
  return 0;
}

int pthread_join(pthread_t t, void** ret) {
  if (scheduled()) {
    auto& w = the_world();
    held h{w};
    auto i = w.by_handle.find(t);
    if (i != w.by_handle.end()) {
      auto* rec = i->second;
      if (rec->state != thread_state::done) {
        me->state = thread_state::blocked;
        me->doing = "joins a thread";
        rec->joiners.push_back(me);
        pass(w);
        me->doing = "runs";
      }
      w.by_handle.erase(t);
    }
  }
  return SWARM_REAL(pthread_join, join_fn)(t, ret);
}

int pthread_mutex_lock(pthread_mutex_t* m) noexcept {
  if (!scheduled()) return SWARM_REAL(pthread_mutex_lock, mutex_fn)(m);
  return lock_mutex(m, forever);
}

int pthread_mutex_trylock(pthread_mutex_t* m) noexcept {
  if (!scheduled()) return SWARM_REAL(pthread_mutex_trylock, mutex_fn)(m);
  auto& w = the_world();
  held h{w};
  auto& r = w.mutexes[m];
  if (r.owner == nullptr) {
    r.owner = me;
    r.count = 1;
    return 0;
  }
  if (r.owner == me && mutex_kind(m) == PTHREAD_MUTEX_RECURSIVE_NP) {
    ++r.count;
    return 0;
  }
  return EBUSY;
}

int pthread_mutex_timedlock(pthread_mutex_t* m, const timespec* abstime) noexcept {
  if (!scheduled())
    return SWARM_REAL(pthread_mutex_timedlock, mutex_timed_fn)(m, abstime);
  return lock_mutex(m, deadline_of(CLOCK_REALTIME, abstime));
}

int pthread_mutex_clocklock(pthread_mutex_t* m, clockid_t c,
                            const timespec* abstime) noexcept {
  if (!scheduled())
    return SWARM_REAL(pthread_mutex_clocklock, mutex_clock_fn)(m, c, abstime);
  return lock_mutex(m, deadline_of(c, abstime));
}

int pthread_mutex_unlock(pthread_mutex_t* m) noexcept {
  if (!scheduled()) return SWARM_REAL(pthread_mutex_unlock, mutex_fn)(m);
  auto& w = the_world();
  held h{w};
  auto i = w.mutexes.find(m);
  if (i == w.mutexes.end() || i->second.owner != me) return EPERM;
  if (--i->second.count > 0) return 0;
  for (auto* t : std::vector<thread_rec*>{i->second.waiters})
    wake(t, false);
  w.mutexes.erase(i);
  return 0;
}

int pthread_cond_wait(pthread_cond_t* c, pthread_mutex_t* m) {
  if (!scheduled()) return real_wait(c, m);
  return wait_cond(c, m, forever);
}

int pthread_cond_timedwait(pthread_cond_t* c, pthread_mutex_t* m,
                           const timespec* abstime) {
  if (!scheduled())
    return SWARM_REAL(pthread_cond_timedwait, cond_timed_fn, "GLIBC_2.3.2")(c, m,
                                                                            abstime);
  // The condition's clock, as pthread_condattr_setclock left it (glibc's flag).
  bool monotonic = (c->__data.__wrefs & 2) != 0;
  return wait_cond(c, m,
                   deadline_of(monotonic ? CLOCK_MONOTONIC : CLOCK_REALTIME, abstime));
}

int pthread_cond_clockwait(pthread_cond_t* c, pthread_mutex_t* m, clockid_t clock,
                           const timespec* abstime) {
  if (!scheduled())
    return SWARM_REAL(pthread_cond_clockwait, cond_clock_fn)(c, m, clock, abstime);
  return wait_cond(c, m, deadline_of(clock, abstime));
}

int pthread_cond_signal(pthread_cond_t* c) noexcept {
  auto& w = the_world();
  if (!w.on.load()) return real_signal(c);
  held h{w};
  auto i = w.conds.find(c);
  if (i == w.conds.end() || i->second.empty()) return 0;
  wake(i->second.front(), false);
  return 0;
}

int pthread_cond_broadcast(pthread_cond_t* c) noexcept {
  auto& w = the_world();
  if (!w.on.load()) return SWARM_REAL(pthread_cond_broadcast, cond_fn, "GLIBC_2.3.2")(c);
  held h{w};
  auto i = w.conds.find(c);
  if (i == w.conds.end()) return 0;
  for (auto* t : std::vector<thread_rec*>{i->second})
    wake(t, false);
  return 0;
}

int pthread_rwlock_rdlock(pthread_rwlock_t* l) noexcept {
  if (!scheduled()) return SWARM_REAL(pthread_rwlock_rdlock, rw_fn)(l);
  auto& w = the_world();
  held h{w};
  for (;;) {
    auto& r = w.rwlocks[l];
    if (r.writer == nullptr || r.writer == me) {
      r.readers.push_back(me);
      return 0;
    }
    block_in(w, r.waiters, forever, "waits for a read lock");
  }
}

int pthread_rwlock_tryrdlock(pthread_rwlock_t* l) noexcept {
  if (!scheduled()) return SWARM_REAL(pthread_rwlock_tryrdlock, rw_fn)(l);
  auto& w = the_world();
  held h{w};
  auto& r = w.rwlocks[l];
  if (r.writer != nullptr && r.writer != me) return EBUSY;
  r.readers.push_back(me);
  return 0;
}

int pthread_rwlock_wrlock(pthread_rwlock_t* l) noexcept {
  if (!scheduled()) return SWARM_REAL(pthread_rwlock_wrlock, rw_fn)(l);
  auto& w = the_world();
  held h{w};
  for (;;) {
    auto& r = w.rwlocks[l];
    if ((r.writer == nullptr || r.writer == me) && r.readers.empty()) {
      r.writer = me;
      ++r.writes;
      return 0;
    }
    block_in(w, r.waiters, forever, "waits for a write lock");
  }
}

int pthread_rwlock_trywrlock(pthread_rwlock_t* l) noexcept {
  if (!scheduled()) return SWARM_REAL(pthread_rwlock_trywrlock, rw_fn)(l);
  auto& w = the_world();
  held h{w};
  auto& r = w.rwlocks[l];
  if ((r.writer != nullptr && r.writer != me) || !r.readers.empty()) return EBUSY;
  r.writer = me;
  ++r.writes;
  return 0;
}

int pthread_rwlock_unlock(pthread_rwlock_t* l) noexcept {
  if (!scheduled()) return SWARM_REAL(pthread_rwlock_unlock, rw_fn)(l);
  auto& w = the_world();
  held h{w};
  auto i = w.rwlocks.find(l);
  if (i == w.rwlocks.end()) return EPERM;
  auto& r = i->second;
  if (r.writer == me && r.writes > 0) {
    if (--r.writes == 0) r.writer = nullptr;
  } else if (auto at = std::find(r.readers.begin(), r.readers.end(), me);
             at != r.readers.end()) {
    r.readers.erase(at);
  } else {
    return EPERM;
  }
  if (r.writer == nullptr && r.readers.empty()) {
    for (auto* t : std::vector<thread_rec*>{r.waiters})
      wake(t, false);
    w.rwlocks.erase(i);
  }
  return 0;
}

int nanosleep(const timespec* req, timespec* rem) {
  if (!scheduled()) return SWARM_REAL(nanosleep, nanosleep_fn)(req, rem);
  auto deadline = the_world().now.load() + ns_of(*req);
  if (rem != nullptr) *rem = timespec{0, 0}; // may be `req`
  return sleep_until(deadline);
}

int clock_nanosleep(clockid_t c, int flags, const timespec* req, timespec* rem) {
  if (!scheduled() || !virtual_clock(c))
    return SWARM_REAL(clock_nanosleep, clock_nanosleep_fn)(c, flags, req, rem);
  auto deadline = (flags & TIMER_ABSTIME) != 0 ? deadline_of(c, req)
                                               : the_world().now.load() + ns_of(*req);
  if (rem != nullptr) *rem = timespec{0, 0}; // may be `req`
  return sleep_until(deadline);
}

int usleep(useconds_t us) {
  if (!scheduled()) return SWARM_REAL(usleep, usleep_fn)(us);
  return sleep_until(the_world().now.load() + static_cast<int64_t>(us) * 1000);
}

int sched_yield() noexcept {
  if (!scheduled()) return SWARM_REAL(sched_yield, yield_fn)();
  auto& w = the_world();
  held h{w};
  pass(w);
  return 0;
}

int clock_gettime(clockid_t c, timespec* ts) noexcept {
  if (!the_world().on.load() || !virtual_clock(c))
    return SWARM_REAL(clock_gettime, gettime_fn)(c, ts);
  auto ns = the_world().now.load() + clock_base(c);
  ts->tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  ts->tv_nsec = static_cast<long>(ns % 1'000'000'000);
  return 0;
}

int gettimeofday(timeval* tv, void* tz) noexcept {
  if (!the_world().on.load()) return SWARM_REAL(gettimeofday, gettimeofday_fn)(tv, tz);
  auto ns = the_world().now.load() + realtime_base;
  tv->tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  tv->tv_usec = static_cast<suseconds_t>(ns % 1'000'000'000 / 1000);
  return 0;
}

time_t time(time_t* out) noexcept {
  if (!the_world().on.load()) return SWARM_REAL(time, time_fn)(out);
  auto t = static_cast<time_t>((the_world().now.load() + realtime_base) / 1'000'000'000);
  if (out != nullptr) *out = t;
  return t;
}

long syscall(long number, ...) noexcept {
  va_list ap;
  va_start(ap, number);
  long a[6];
  for (auto& x : a)
    x = va_arg(ap, long);
  va_end(ap);
  if (number == SYS_futex && scheduled()) {
    auto* addr = reinterpret_cast<const uint32_t*>(a[0]);
    auto op = static_cast<int>(a[1]);
    auto cmd = op & FUTEX_CMD_MASK;
    auto val = static_cast<uint32_t>(a[2]);
    auto* ts = reinterpret_cast<const timespec*>(a[3]);
    if (cmd == FUTEX_WAIT)
      return futex_wait(addr, val,
                        ts != nullptr ? the_world().now.load() + ns_of(*ts) : forever);
    if (cmd == FUTEX_WAIT_BITSET)
      return futex_wait(addr, val,
                        ts != nullptr ? deadline_of((op & FUTEX_CLOCK_REALTIME) != 0
                                                        ? CLOCK_REALTIME
                                                        : CLOCK_MONOTONIC,
                                                    ts)
                                      : forever);
    if (cmd == FUTEX_WAKE || cmd == FUTEX_WAKE_BITSET) return futex_wake(addr, a[2]);
  }
  return SWARM_REAL(syscall, syscall_fn)(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

} // extern "C"
