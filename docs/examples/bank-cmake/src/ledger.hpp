// Moves money between accounts and remembers how much it moved.
#pragma once

#include <atomic>

#include "account.hpp"

class Ledger {
public:
    // Moves `amount` from `from` to `to` if `from` has it.
    bool transfer(Account &from, Account &to, long amount);
    long moved() const { return moved_.load(); }

private:
    std::atomic<long> moved_{0};
};
