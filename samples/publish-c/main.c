/* Message passing done right: a writer fills in a message and only then
 * raises a flag; a reader spins until it sees the flag and then reads the
 * message, which must be complete. Small enough for `--strategy dpor` to
 * run every schedule and say so. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

static atomic_int ready;
static atomic_int message[2];

static void *writer(void *arg) {
    (void)arg;
    atomic_store(&message[0], 40);
    atomic_store(&message[1], 2);
    atomic_store(&ready, 1);
    return NULL;
}

static void *reader(void *arg) {
    (void)arg;
    while (!atomic_load(&ready))
        ;
    assert(atomic_load(&message[0]) + atomic_load(&message[1]) == 42);
    return NULL;
}

int main(void) {
    pthread_t w, r;
    pthread_create(&r, NULL, reader, NULL);
    pthread_create(&w, NULL, writer, NULL);
    pthread_join(r, NULL);
    pthread_join(w, NULL);
    return 0;
}
