/* Wrong: put() signals `not_full` where it means `not_empty` (a copy and
 * paste from take()): a consumer waiting for an item is never woken. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define SLOTS 1
#define ITEMS 2 /* per producer and per consumer */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static int slots[SLOTS];
static int count = 0; /* items in the buffer */
static int first = 0; /* the slot of the oldest item */

/* Puts `item` into the buffer, waiting while it is full. */
static void put(int item) {
    pthread_mutex_lock(&lock);
    while (count == SLOTS)
        pthread_cond_wait(&not_full, &lock);
    slots[(first + count) % SLOTS] = item;
    count++;
    pthread_cond_signal(&not_full);
    pthread_mutex_unlock(&lock);
}

/* Takes the oldest item out of the buffer, waiting while it is empty. */
static int take(void) {
    pthread_mutex_lock(&lock);
    while (count == 0)
        pthread_cond_wait(&not_empty, &lock);
    int item = slots[first];
    first = (first + 1) % SLOTS;
    count--;
    pthread_cond_signal(&not_full);
    pthread_mutex_unlock(&lock);
    return item;
}

static void *producer(void *arg) {
    int base = *(int *)arg;
    for (int i = 0; i < ITEMS; i++)
        put(base + i);
    return NULL;
}

static int sums[2];

static void *consumer(void *arg) {
    int *sum = arg;
    for (int i = 0; i < ITEMS; i++)
        *sum += take();
    return NULL;
}

int main(void) {
    static int bases[2] = {100, 200};
    pthread_t threads[4];
    for (int i = 0; i < 2; i++) {
        pthread_create(&threads[i], NULL, consumer, &sums[i]);
        pthread_create(&threads[2 + i], NULL, producer, &bases[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(threads[i], NULL);
    printf("sums: %d %d\n", sums[0], sums[1]);
    assert(sums[0] + sums[1] == 100 + 101 + 200 + 201 && "an item was lost");
    return 0;
}
