#include <cassert>
#include <cstdlib>
extern "C" void reach_error() { assert(0); }
#include <mutex>
#include <thread>

struct Account {
  std::mutex lock;
  int balance = 100;
};

void transfer(Account &from, Account &to, int amount) {
  std::scoped_lock both(from.lock, to.lock);   /* deadlock-free in any order */
  from.balance -= amount;
  to.balance += amount;
}

int main() {
  Account x, y;
  std::thread a([&] { transfer(x, y, 10); });
  std::thread b([&] { transfer(y, x, 30); });
  a.join();
  b.join();
  if (x.balance + y.balance != 200 || x.balance != 120) { reach_error(); abort(); }
  return 0;
}
