/* A cache of the last value computed, whose fast path skips the lock: a
 * reader that finds the cache valid reads `cached` without the mutex,
 * while a writer refreshes it under the mutex. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool valid;
static int cached;

static int compute(int n) { return n * n + 1; }

static int lookup(int n) {
    if (valid) /* the fast path takes no lock */
        return cached;
    pthread_mutex_lock(&lock);
    if (!valid) {
        cached = compute(n);
        valid = true;
    }
    int value = cached;
    pthread_mutex_unlock(&lock);
    return value;
}

static void *reader(void *arg) {
    int *out = arg;
    *out = lookup(7);
    return NULL;
}

int main(void) {
    int results[2];
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&threads[i], NULL, reader, &results[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], NULL);
    printf("%d %d\n", results[0], results[1]);
    return 0;
}
