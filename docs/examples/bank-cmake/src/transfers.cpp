// Two clerks move money out of one account at the same time; the bank
// must never let it go below zero.
#include <cassert>
#include <cstdio>
#include <thread>

#include "ledger.hpp"

int main()
{
    Account checking(100);
    Account savings(0);
    Ledger ledger;
    std::thread first([&] { ledger.transfer(checking, savings, 80); });
    std::thread second([&] { ledger.transfer(checking, savings, 60); });
    first.join();
    second.join();
    std::printf("checking %ld, savings %ld\n", checking.balance(), savings.balance());
    assert(checking.balance() >= 0);
    assert(checking.balance() + savings.balance() == 100);
    return 0;
}
