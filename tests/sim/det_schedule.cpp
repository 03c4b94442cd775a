#include "tests/sim/det_schedule.hpp"

// The schedule: one thread runs at a time, and hands the turn on where it would block.

#include "tests/sim/det_threads.hpp"

namespace swarm::sim::det::detail {

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

world& the_world() {
  static world w;
  return w;
}

thread_local thread_rec* me = nullptr;

bool scheduled() {
  return me != nullptr && the_world().on.load();
}

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

namespace {

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

} // namespace

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

namespace {

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

int start_thread(create_fn create, pthread_t* t, const pthread_attr_t* attr,
                 void* (*fn)(void*), void* arg) {
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
    w.threads.erase(std::find(w.threads.begin(), w.threads.end(), rec));
    return rc;
  }
  rec->state = thread_state::runnable;
  w.by_handle[*t] = rec;
  return 0;
}

void await_thread(pthread_t t) {
  auto& w = the_world();
  held h{w};
  auto i = w.by_handle.find(t);
  if (i == w.by_handle.end()) return;
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

} // namespace swarm::sim::det::detail

namespace swarm::sim::det {

using namespace detail;

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