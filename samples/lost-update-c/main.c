/* Two threads increment a shared counter with a separate atomic load and
 * store instead of one atomic add: an increment can be lost. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define THREADS 2
#define INCREMENTS 10

static atomic_uint counter;

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < INCREMENTS; i++) {
        unsigned seen = atomic_load(&counter);
        atomic_store(&counter, seen + 1);
    }
    return NULL;
}

int main(void) {
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&threads[i], NULL, worker, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    unsigned total = atomic_load(&counter);
    printf("counter = %u\n", total);
    assert(total == THREADS * INCREMENTS && "lost an update");
    return 0;
}
