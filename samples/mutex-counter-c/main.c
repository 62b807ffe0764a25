/* Correct: workers start together at a barrier, bump a counter behind a
 * mutex and append to a log behind a read-write lock. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define WORKERS 3
#define ROUNDS 4

static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t log_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t start;
static int counter;
static int log_entries[WORKERS * ROUNDS];
static int log_length;

static void *worker(void *arg) {
    int id = (int)(long)arg;
    pthread_barrier_wait(&start);
    for (int round = 0; round < ROUNDS; round++) {
        pthread_mutex_lock(&counter_lock);
        counter++;
        pthread_mutex_unlock(&counter_lock);
        pthread_rwlock_wrlock(&log_lock);
        log_entries[log_length++] = id * 100 + round;
        pthread_rwlock_unlock(&log_lock);
        pthread_rwlock_rdlock(&log_lock);
        assert(log_length >= 1);
        pthread_rwlock_unlock(&log_lock);
        usleep(1000);
    }
    return NULL;
}

int main(void) {
    pthread_t threads[WORKERS];
    pthread_barrier_init(&start, NULL, WORKERS);
    for (long i = 0; i < WORKERS; i++)
        pthread_create(&threads[i], NULL, worker, (void *)i);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(threads[i], NULL);
    printf("count = %d, log entries = %d\n", counter, log_length);
    assert(counter == WORKERS * ROUNDS);
    assert(log_length == WORKERS * ROUNDS);
    return 0;
}
