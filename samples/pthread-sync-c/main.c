/* A correct program that uses every kind of pthread synchronisation on
 * plain data: a mutex around a counter, a condition variable for a
 * one-slot mailbox, a reader-writer lock around a table, and a barrier
 * between two phases of work on per-thread slots. No access races. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define WORKERS 3

static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static int count;

static pthread_mutex_t box_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t box_changed = PTHREAD_COND_INITIALIZER;
static int box;
static int box_full;

static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static int table[4];

static pthread_barrier_t phase;
static int slots[WORKERS];
static int sums[WORKERS];

static void *worker(void *arg) {
    int id = *(int *)arg;
    pthread_mutex_lock(&count_lock);
    count++;
    pthread_mutex_unlock(&count_lock);

    pthread_rwlock_rdlock(&table_lock);
    int seen = table[id % 4];
    pthread_rwlock_unlock(&table_lock);
    pthread_rwlock_wrlock(&table_lock);
    table[id % 4] = seen + id;
    pthread_rwlock_unlock(&table_lock);

    slots[id] = id * 10;
    pthread_barrier_wait(&phase);
    /* After the barrier every slot is written: read the neighbour's. */
    sums[id] = slots[id] + slots[(id + 1) % WORKERS];

    if (id == 0) {
        pthread_mutex_lock(&box_lock);
        while (box_full)
            pthread_cond_wait(&box_changed, &box_lock);
        box = 42;
        box_full = 1;
        pthread_cond_broadcast(&box_changed);
        pthread_mutex_unlock(&box_lock);
    }
    return NULL;
}

int main(void) {
    pthread_barrier_init(&phase, NULL, WORKERS);
    pthread_t threads[WORKERS];
    int ids[WORKERS];
    for (int i = 0; i < WORKERS; i++) {
        ids[i] = i;
        pthread_create(&threads[i], NULL, worker, &ids[i]);
    }
    pthread_mutex_lock(&box_lock);
    while (!box_full)
        pthread_cond_wait(&box_changed, &box_lock);
    int got = box;
    box_full = 0;
    pthread_cond_broadcast(&box_changed);
    pthread_mutex_unlock(&box_lock);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&phase);
    assert(got == 42);
    assert(count == WORKERS);
    int total = 0;
    for (int i = 0; i < WORKERS; i++)
        total += sums[i];
    assert(total == 2 * (0 + 10 + 20));
    printf("count %d, box %d, total %d\n", count, got, total);
    return 0;
}
