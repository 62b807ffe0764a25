/* A correct counter behind a hand-written spin lock: each thread takes the
 * lock with a compare-and-swap loop, bumps the counter and releases it. A
 * fair scheduler lets the holder finish, so no execution fails; a tool
 * that never runs the holder again must not call the spinning a livelock. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define THREADS 3
#define ROUNDS 4

static atomic_int lock;
static int counter;

static void acquire(void) {
    int expected = 0;
    while (!atomic_compare_exchange_weak(&lock, &expected, 1))
        expected = 0;
}

static void release(void) { atomic_store(&lock, 0); }

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        acquire();
        counter++;
        release();
    }
    return NULL;
}

int main(void) {
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&threads[i], NULL, worker, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    printf("counter = %d\n", counter);
    assert(counter == THREADS * ROUNDS);
    return 0;
}
