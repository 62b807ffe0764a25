/* Two workers bump a plain counter with no lock at all: `hits++` is a
 * load and a store that the other worker can interleave, and the two
 * accesses race. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define WORKERS 2
#define ROUNDS 3

static int hits;

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < ROUNDS; i++)
        hits++;
    return NULL;
}

int main(void) {
    pthread_t threads[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&threads[i], NULL, worker, NULL);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(threads[i], NULL);
    printf("hits: %d\n", hits);
    assert(hits == WORKERS * ROUNDS && "an increment was lost");
    return 0;
}
