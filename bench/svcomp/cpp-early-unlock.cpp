#include <cassert>
#include <cstdlib>
extern "C" void reach_error() { assert(0); }
#include <mutex>
#include <thread>
#include <vector>

std::mutex m;
std::vector<int> log_lines;
int next_id = 0;

void record() {
  std::unique_lock<std::mutex> guard(m);
  int id = next_id;
  guard.unlock();                      /* released before the update */
  next_id = id + 1;
  guard.lock();
  log_lines.push_back(id);
}

int main() {
  std::thread a(record);
  std::thread b(record);
  a.join();
  b.join();
  if (next_id != 2) { reach_error(); abort(); }
  return 0;
}
