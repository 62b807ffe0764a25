/* An account balance guarded by a mutex, except that the code paying
 * interest takes the statistics mutex instead: deposits and interest
 * payments each hold a lock, but not the same one, so their accesses to
 * `balance` race. */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t balance_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static long balance = 1000;
static int operations;

static void *depositor(void *arg) {
    long amount = *(long *)arg;
    pthread_mutex_lock(&balance_lock);
    balance += amount;
    pthread_mutex_unlock(&balance_lock);
    pthread_mutex_lock(&stats_lock);
    operations++;
    pthread_mutex_unlock(&stats_lock);
    return NULL;
}

static void *interest(void *arg) {
    (void)arg;
    pthread_mutex_lock(&stats_lock); /* the wrong lock for balance */
    balance += balance / 100;
    operations++;
    pthread_mutex_unlock(&stats_lock);
    return NULL;
}

int main(void) {
    long amounts[2] = {50, 70};
    pthread_t threads[3];
    pthread_create(&threads[0], NULL, depositor, &amounts[0]);
    pthread_create(&threads[1], NULL, interest, NULL);
    pthread_create(&threads[2], NULL, depositor, &amounts[1]);
    for (int i = 0; i < 3; i++)
        pthread_join(threads[i], NULL);
    printf("balance %ld after %d operations\n", balance, operations);
    return 0;
}
