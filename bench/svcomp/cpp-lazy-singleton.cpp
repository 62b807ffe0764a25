#include <cassert>
#include <cstdlib>
extern "C" void reach_error() { assert(0); }
#include <mutex>
#include <thread>

struct Registry {
  int entries = 0;
};

Registry *registry = nullptr;
int constructed = 0;
std::mutex count_lock;

Registry &get() {
  if (registry == nullptr) {           /* check-then-act without a lock */
    registry = new Registry();
    std::lock_guard<std::mutex> guard(count_lock);
    constructed++;
  }
  return *registry;
}

int main() {
  std::thread a([] { get(); });
  std::thread b([] { get(); });
  a.join();
  b.join();
  if (constructed != 1) { reach_error(); abort(); }
  return 0;
}
