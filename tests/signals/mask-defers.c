/* handler-race.c fixed: the worker blocks SIGUSR1 while it counts, so the
 * handler runs once it unblocks it, never between a read and its write. */
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

static atomic_int count, ready, sent;

static void on_usr1(int sig) {
    (void)sig;
    atomic_store(&count, atomic_load(&count) + 1);
}

static void *worker(void *arg) {
    (void)arg;
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, NULL);
    atomic_store(&ready, 1);
    while (!atomic_load(&sent))
        ;
    for (int i = 0; i < 2; i++) {
        int seen = atomic_load(&count);
        atomic_store(&count, seen + 1);
    }
    /* The pending signal is delivered before this returns. */
    pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
    assert(atomic_load(&count) == 3);
    return NULL;
}

int main(void) {
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = on_usr1;
    sigemptyset(&act.sa_mask);
    sigaction(SIGUSR1, &act, NULL);
    pthread_t thread;
    pthread_create(&thread, NULL, worker, NULL);
    while (!atomic_load(&ready))
        ;
    pthread_kill(thread, SIGUSR1);
    atomic_store(&sent, 1);
    pthread_join(thread, NULL);
    assert(atomic_load(&count) == 3);
    return 0;
}
