/* A correct hand-off by busy waiting: the waiter polls a flag and counts
 * its polls in a shared atomic, the main thread sets the flag. Under a
 * scheduler that keeps the waiter running the flag is never set, but the
 * program is not livelocked: any fair scheduler lets the main thread run. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int flag;
static atomic_int polls;

static void *waiter(void *arg) {
    (void)arg;
    while (!atomic_load(&flag))
        atomic_store(&polls, atomic_load(&polls) + 1);
    return NULL;
}

int main(void) {
    pthread_t thread;
    pthread_create(&thread, NULL, waiter, NULL);
    atomic_store(&flag, 1);
    pthread_join(thread, NULL);
    printf("the waiter polled %d times\n", atomic_load(&polls));
    return 0;
}
