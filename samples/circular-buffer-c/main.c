/* A single-producer, single-consumer ring buffer that keeps a shared count
 * of the filled slots. Both sides update the count with a load and a store
 * instead of one atomic read-modify-write, so an update can be lost; the
 * consumer then reads a slot that was never filled (or the producer
 * overwrites one not yet read), and the sum of what it took is wrong. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define SLOTS 4
#define ITEMS 6

static atomic_int slots[SLOTS];
static atomic_int count;
static int sum;

static void *producer(void *arg) {
    (void)arg;
    int head = 0;
    for (int item = 1; item <= ITEMS; item++) {
        while (atomic_load(&count) == SLOTS)
            ;
        atomic_store(&slots[head], item);
        head = (head + 1) % SLOTS;
        int filled = atomic_load(&count);
        atomic_store(&count, filled + 1);
    }
    return NULL;
}

static void *consumer(void *arg) {
    (void)arg;
    int tail = 0;
    for (int taken = 0; taken < ITEMS; taken++) {
        while (atomic_load(&count) == 0)
            ;
        sum += atomic_exchange(&slots[tail], 0);
        tail = (tail + 1) % SLOTS;
        int filled = atomic_load(&count);
        atomic_store(&count, filled - 1);
    }
    return NULL;
}

int main(void) {
    pthread_t p, c;
    pthread_create(&p, NULL, producer, NULL);
    pthread_create(&c, NULL, consumer, NULL);
    pthread_join(p, NULL);
    pthread_join(c, NULL);
    printf("consumed a sum of %d\n", sum);
    assert(sum == ITEMS * (ITEMS + 1) / 2 && "an item was lost or read twice");
    return 0;
}
