/* Transfers lock the source account, then the destination: two opposite
 * transfers can each hold one lock and wait forever for the other. */
#include <pthread.h>
#include <stdio.h>

struct account {
    pthread_mutex_t lock;
    long balance;
};

struct transfer {
    struct account *from, *to;
    long amount;
};

static void *run_transfer(void *arg) {
    struct transfer *t = arg;
    pthread_mutex_lock(&t->from->lock);
    pthread_mutex_lock(&t->to->lock);
    t->from->balance -= t->amount;
    t->to->balance += t->amount;
    pthread_mutex_unlock(&t->to->lock);
    pthread_mutex_unlock(&t->from->lock);
    return NULL;
}

int main(void) {
    struct account alice = {PTHREAD_MUTEX_INITIALIZER, 100};
    struct account bob = {PTHREAD_MUTEX_INITIALIZER, 100};
    struct transfer one = {&alice, &bob, 10}, two = {&bob, &alice, 20};
    pthread_t t1, t2;
    pthread_create(&t1, NULL, run_transfer, &one);
    pthread_create(&t2, NULL, run_transfer, &two);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    printf("total = %ld\n", alice.balance + bob.balance);
    return alice.balance + bob.balance == 200 ? 0 : 1;
}
