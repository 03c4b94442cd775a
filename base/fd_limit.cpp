#include "base/fd_limit.hpp"

#include <sys/resource.h>

namespace swarm {

size_t raise_fd_limit() noexcept {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return 0;
  if (r.rlim_cur < r.rlim_max) {
    auto raised = r;
    raised.rlim_cur = r.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) r = raised;
  }
  return r.rlim_cur == RLIM_INFINITY ? static_cast<size_t>(-1)
                                     : static_cast<size_t>(r.rlim_cur);
}

} // namespace swarm
