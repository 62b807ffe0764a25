#include "account.hpp"

bool Account::withdraw(long amount)
{
    if (balance_ < amount) {
        return false;
    }
    std::lock_guard<std::mutex> guard(lock_);
    balance_ -= amount;
    return true;
}

void Account::deposit(long amount)
{
    std::lock_guard<std::mutex> guard(lock_);
    balance_ += amount;
}

long Account::balance()
{
    std::lock_guard<std::mutex> guard(lock_);
    return balance_;
}
