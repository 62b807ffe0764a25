// A bank account shared by threads.
#pragma once

#include <mutex>

class Account {
public:
    explicit Account(long balance) : balance_(balance) {}

    // Takes `amount` out if the balance covers it; says whether it did.
    bool withdraw(long amount);
    void deposit(long amount);
    long balance();

private:
    std::mutex lock_;
    long balance_;
};
