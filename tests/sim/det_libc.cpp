// The C library's pthread, sleep, clock and syscall functions, defined in the
// executable (which exports them, so every library's calls land here first) and forwarded
// to the C library's until `det::start`. After it, mutexes, condition variables,
// read-write locks and futexes are the schedule's records, keyed by their address: the
// C library's objects are never touched, and a thread that must wait parks until the
// schedule gives it the turn.

#include "tests/sim/det_schedule.hpp"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>

#include <cstdarg>

using namespace swarm::sim::det::detail;

namespace {

// Takes read-write lock `l` for `me`, to write or to read; waits for it, or says EBUSY.
int lock_rw(pthread_rwlock_t* l, bool write, bool wait) {
  auto& w = the_world();
  held h{w};
  for (;;) {
    auto& r = w.rwlocks[l];
    bool other_writer = r.writer != nullptr && r.writer != me;
    if (write && !other_writer && r.readers.empty()) {
      r.writer = me;
      ++r.writes;
      return 0;
    }
    if (!write && !other_writer) {
      r.readers.push_back(me);
      return 0;
    }
    if (!wait) return EBUSY;
    block_in(w, r.waiters, forever,
             write ? "waits for a write lock" : "waits for a read lock");
  }
}

} // namespace

// -- the C library's names

extern "C" {

int pthread_create(pthread_t* t, const pthread_attr_t* attr, void* (*fn)(void*),
                   void* arg) noexcept {
  auto create = SWARM_REAL(pthread_create, create_fn);
  if (!scheduled()) return create(t, attr, fn, arg);
  return start_thread(create, t, attr, fn, arg);
}

int pthread_join(pthread_t t, void** ret) {
  if (scheduled()) await_thread(t);
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
  if (i->second.count > 1) {
    --i->second.count;
    return 0;
  }
  release(w, m);
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
  return lock_rw(l, false, true);
}

int pthread_rwlock_tryrdlock(pthread_rwlock_t* l) noexcept {
  if (!scheduled()) return SWARM_REAL(pthread_rwlock_tryrdlock, rw_fn)(l);
  return lock_rw(l, false, false);
}

int pthread_rwlock_wrlock(pthread_rwlock_t* l) noexcept {
  if (!scheduled()) return SWARM_REAL(pthread_rwlock_wrlock, rw_fn)(l);
  return lock_rw(l, true, true);
}

int pthread_rwlock_trywrlock(pthread_rwlock_t* l) noexcept {
  if (!scheduled()) return SWARM_REAL(pthread_rwlock_trywrlock, rw_fn)(l);
  return lock_rw(l, true, false);
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
