// Transfers between two accounts lock the source first, then the target:
// two opposite transfers can each hold one lock and wait for the other.
#include <mutex>
#include <thread>

struct Account {
    std::mutex lock;
    int balance = 100;
};

void transfer(Account &from, Account &to, int amount) {
    std::lock_guard<std::mutex> first(from.lock);
    std::lock_guard<std::mutex> second(to.lock);
    from.balance -= amount;
    to.balance += amount;
}

int main() {
    Account alice, bob;
    std::thread a([&] { transfer(alice, bob, 10); });
    std::thread b([&] { transfer(bob, alice, 20); });
    a.join();
    b.join();
    return alice.balance + bob.balance == 200 ? 0 : 1;
}
