#include <cassert>
#include <cstdlib>
extern "C" void reach_error() { assert(0); }
#include <atomic>
#include <thread>
#include <vector>

std::atomic<int> hits{0};

int main() {
  std::vector<std::thread> workers;
  for (int i = 0; i < 3; i++)
    workers.emplace_back([] { hits.fetch_add(1); });
  for (auto &w : workers) w.join();
  if (hits.load() != 3) { reach_error(); abort(); }
  return 0;
}
