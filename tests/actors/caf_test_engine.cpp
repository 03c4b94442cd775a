// CAF's deterministic test fixture (caf/test/dsl.hpp) reads its command line from CAF's
// own test engine; doctest runs the tests, so the engine is linked without its main.
#define CAF_TEST_NO_MAIN
#include <caf/test/unit_test_impl.hpp>
