/* Three threads each take a lock twice, bump a counter and append an entry
 * to a log that nothing ever reads. The orders of the entries make the
 * final memories differ, but no read can tell them apart: a search that
 * counts never-read bytes as state explores every order of the log, one
 * that leaves them out explores as much as for a log of equal entries
 * (built with -DEQUAL_ENTRIES). */
#include <assert.h>
#include <pthread.h>

#define WORKERS 3
#define ROUNDS 2

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int counter;
static int log_length;
static int log_entries[WORKERS * ROUNDS];

static void *worker(void *arg) {
    int id = (int)(long)arg;
    for (int round = 0; round < ROUNDS; round++) {
        pthread_mutex_lock(&lock);
        counter++;
#ifdef EQUAL_ENTRIES
        log_entries[log_length++] = 1;
#else
        log_entries[log_length++] = id * 10 + round + 1;
#endif
        pthread_mutex_unlock(&lock);
    }
    return 0;
}

int main(void) {
    pthread_t threads[WORKERS];
    for (long i = 0; i < WORKERS; i++)
        pthread_create(&threads[i], 0, worker, (void *)i);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(threads[i], 0);
    assert(counter == WORKERS * ROUNDS);
    assert(log_length == WORKERS * ROUNDS);
    return 0;
}
