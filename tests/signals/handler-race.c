/* The handler and the code it interrupts both add to `count`: a signal
 * delivered between the worker's read and its write loses one addition
 * (found; mask-defers.c is the fix). The worker starts counting once the
 * signal is sent, and waits for its handler before it ends. */
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

static atomic_int count, sent, handled;

static void on_usr1(int sig) {
    (void)sig;
    atomic_store(&count, atomic_load(&count) + 1);
    atomic_store(&handled, 1);
}

static void *worker(void *arg) {
    (void)arg;
    while (!atomic_load(&sent))
        ;
    for (int i = 0; i < 2; i++) {
        int seen = atomic_load(&count);
        atomic_store(&count, seen + 1);
    }
    while (!atomic_load(&handled))
        ;
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
    pthread_kill(thread, SIGUSR1);
    atomic_store(&sent, 1);
    pthread_join(thread, NULL);
    assert(atomic_load(&count) == 3);
    return 0;
}
