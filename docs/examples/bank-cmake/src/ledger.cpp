#include "ledger.hpp"

bool Ledger::transfer(Account &from, Account &to, long amount)
{
    if (!from.withdraw(amount)) {
        return false;
    }
    to.deposit(amount);
    moved_ += amount;
    return true;
}
