#include <cassert>
#include <cstdlib>
extern "C" void reach_error() { assert(0); }
#include <condition_variable>
#include <mutex>
#include <thread>

std::mutex m;
std::condition_variable changed;
int stage = 0;

void advance(int from) {
  std::unique_lock<std::mutex> guard(m);
  changed.wait(guard, [from] { return stage == from; });
  stage = from + 1;
  changed.notify_all();
}

int main() {
  std::thread c([] { advance(2); });
  std::thread b([] { advance(1); });
  std::thread a([] { advance(0); });
  a.join();
  b.join();
  c.join();
  if (stage != 3) { reach_error(); abort(); }
  return 0;
}
