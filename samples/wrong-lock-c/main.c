/* Two kinds of workers update one counter, but each kind takes its own
 * mutex: the updater's critical section (read, write, read back) is
 * protected only against other updaters, and a bumper slips in between.
 * The counter is atomic so that each access is a step of its own; the bug is
 * the lock, not the accesses. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define UPDATERS 2
#define BUMPERS 2

static pthread_mutex_t update_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t bump_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int counter;

static void *updater(void *arg) {
    (void)arg;
    pthread_mutex_lock(&update_lock);
    int seen = atomic_load(&counter);
    atomic_store(&counter, seen + 1);
    int now = atomic_load(&counter);
    if (now != seen + 1) {
        printf("counter moved from %d to %d under the lock\n", seen + 1, now);
        assert(0 && "the counter changed inside the critical section");
    }
    pthread_mutex_unlock(&update_lock);
    return NULL;
}

static void *bumper(void *arg) {
    (void)arg;
    pthread_mutex_lock(&bump_lock); /* should be update_lock */
    atomic_store(&counter, atomic_load(&counter) + 1);
    pthread_mutex_unlock(&bump_lock);
    return NULL;
}

int main(void) {
    pthread_t threads[UPDATERS + BUMPERS];
    for (int i = 0; i < UPDATERS + BUMPERS; i++)
        pthread_create(&threads[i], NULL, i < UPDATERS ? updater : bumper, NULL);
    for (int i = 0; i < UPDATERS + BUMPERS; i++)
        pthread_join(threads[i], NULL);
    printf("counter: %d\n", atomic_load(&counter));
    return 0;
}
