/* Wrong: the starter handed in as it is (no lock at all).
 * Lost update: two tellers deposit into one account at the same time.
 * Make deposit() correct when several threads call it at once.
 * Keep teller() and main() as they are. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define TELLERS 2
#define DEPOSITS 2
#define AMOUNT 10

static int balance = 100;

static void deposit(int amount) {
    /* TODO: another teller may run this at the same time. */
    balance = balance + amount;
}

static void *teller(void *arg) {
    (void)arg;
    for (int i = 0; i < DEPOSITS; i++)
        deposit(AMOUNT);
    return NULL;
}

int main(void) {
    pthread_t tellers[TELLERS];
    for (int i = 0; i < TELLERS; i++)
        pthread_create(&tellers[i], NULL, teller, NULL);
    for (int i = 0; i < TELLERS; i++)
        pthread_join(tellers[i], NULL);
    printf("balance = %d\n", balance);
    assert(balance == 100 + TELLERS * DEPOSITS * AMOUNT && "a deposit was lost");
    return 0;
}
