/* The correct twin of verifier-account-c: the withdrawal's check and update
 * run in one __VERIFIER_atomic_ function, so the balance never goes below
 * zero and reach_error() is unreachable. */
#include <pthread.h>
#include <stdatomic.h>

extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *)
    __attribute__((__noreturn__));
void reach_error() { __assert_fail("0", "main.c", 11, "reach_error"); }
extern int __VERIFIER_nondet_int(void);
void assume_abort_if_not(int cond) {
    if (!cond) {
        abort();
    }
}

atomic_int balance;
int amount;

void __VERIFIER_atomic_deposit(int value) {
    int current = atomic_load(&balance);
    atomic_store(&balance, current + value);
}

void __VERIFIER_atomic_withdraw(void) {
    int current = atomic_load(&balance);
    if (current >= amount) {
        current = atomic_load(&balance);
        atomic_store(&balance, current - amount);
    }
}

void *withdraw(void *arg) {
    (void)arg;
    __VERIFIER_atomic_withdraw();
    return 0;
}

int main() {
    int initial = __VERIFIER_nondet_int();
    amount = __VERIFIER_nondet_int();
    assume_abort_if_not(initial >= 0 && initial <= 10);
    assume_abort_if_not(amount > 0 && amount <= initial);
    __VERIFIER_atomic_deposit(initial);
    pthread_t t1, t2;
    pthread_create(&t1, 0, withdraw, 0);
    pthread_create(&t2, 0, withdraw, 0);
    pthread_join(t1, 0);
    pthread_join(t2, 0);
    if (atomic_load(&balance) < 0) {
        reach_error();
    }
    return 0;
}
