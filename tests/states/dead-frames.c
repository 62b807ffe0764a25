/* Two threads each take a lock, note the counter they found in a scratch
 * array on their own stack (left behind when the call returns), bump the
 * counter, wait for each other at a barrier, and then bump a total behind
 * a second lock. Whichever thread went first, once both passed the
 * barrier the program's memory is the same but for the scratch arrays
 * below the threads' stack pointers: a search that counts those dead
 * bytes as state meets no state twice. */
#include <assert.h>
#include <pthread.h>

static pthread_mutex_t first = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t second = PTHREAD_MUTEX_INITIALIZER;
static int counter;
static int total;
static pthread_barrier_t passed;

/* Fills a scratch array with what the thread found; returns 1. */
__attribute__((noinline)) static int note(int seen) {
    volatile int scratch[8];
    for (int i = 0; i < 8; i++)
        scratch[i] = seen * 8 + i;
    return scratch[seen & 7] >= 0;
}

static void *worker(void *arg) {
    (void)arg;
    pthread_mutex_lock(&first);
    counter += note(counter);
    pthread_mutex_unlock(&first);
    pthread_barrier_wait(&passed);
    pthread_mutex_lock(&second);
    total++;
    pthread_mutex_unlock(&second);
    return 0;
}

int main(void) {
    pthread_t threads[2];
    pthread_barrier_init(&passed, 0, 2);
    for (int i = 0; i < 2; i++)
        pthread_create(&threads[i], 0, worker, 0);
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], 0);
    assert(counter == 2 && total == 2);
    return 0;
}
