// Correct: deposits under a std::mutex, a std::atomic counter of
// operations, and an auditor that waits on a condition variable with a
// predicate until every depositor is done.
#include <atomic>
#include <cassert>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

class Bank {
public:
    void deposit(int amount) {
        {
            std::lock_guard<std::mutex> guard(lock_);
            balance_ += amount;
            ++finished_;
        }
        operations_.fetch_add(1);
        done_.notify_all();
    }

    int audit(int depositors) {
        std::unique_lock<std::mutex> guard(lock_);
        done_.wait(guard, [&] { return finished_ == depositors; });
        return balance_;
    }

    int operations() const { return operations_.load(); }

private:
    std::mutex lock_;
    std::condition_variable done_;
    int balance_ = 0;
    int finished_ = 0;
    std::atomic<int> operations_{0};
};

int main() {
    Bank bank;
    int total = 0;
    std::thread auditor([&] { total = bank.audit(3); });
    std::vector<std::thread> depositors;
    for (int i = 1; i <= 3; i++)
        depositors.emplace_back([&bank, i] { bank.deposit(i * 10); });
    for (auto &t : depositors)
        t.join();
    auditor.join();
    assert(total == 60);
    assert(bank.operations() == 3);
    return 0;
}
