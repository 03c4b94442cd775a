#include "framework/application.hpp"
#include "framework/version.hpp"

#include <caf/config.hpp>

#include <dlfcn.h>

namespace swarm {

const char* version() noexcept {
  return SWARM_VERSION;
}

result<void> application::load_library(const std::string& path) {
  auto fail = [&](const std::string& why) -> result<void> {
    return error{errc::invalid_argument, "cannot load user code '" + path + "': " + why};
  };
  // RTLD_NOW: a symbol it lacks is found now, not when a task first runs.
  std::shared_ptr<void> lib{::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL), [](void* h) {
                              if (h) ::dlclose(h);
                            }};
  if (!lib) return fail(::dlerror());
  auto* build =
      reinterpret_cast<const char* (*)()>(::dlsym(lib.get(), "swarm_plugin_build"));
  auto* entry = reinterpret_cast<void (*)(application&)>(
      ::dlsym(lib.get(), "swarm_plugin_register"));
  if (!build || !entry)
    return fail("it has no entry point (define one with SWARM_REGISTER, "
                "framework/plugin.hpp)");
  if (std::string{build()} != SWARM_BUILD_ID)
    return fail(std::string{"it was built against '"} + build() + "', this node runs '" +
                SWARM_BUILD_ID + "': rebuild it against this Swarm");
  try {
    entry(*this);
  } catch (const failure& f) {
    return fail(f.err().message);
  } catch (const std::exception& e) {
    return fail(std::string{"its entry point threw: "} + e.what());
  }
  libraries_.push_back(std::move(lib));
  return {};
}

} // namespace swarm
