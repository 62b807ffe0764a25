/* Reference solution: the lock is held around the whole read-modify-write. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define TELLERS 2
#define DEPOSITS 2
#define AMOUNT 10

static int balance = 100;
static pthread_mutex_t balance_lock = PTHREAD_MUTEX_INITIALIZER;

static void deposit(int amount) {
    pthread_mutex_lock(&balance_lock);
    balance = balance + amount;
    pthread_mutex_unlock(&balance_lock);
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
