/* What a thread wrote before it sent a signal, the handler reads without
 * any lock: the send orders the two, as the kernel does natively (no data
 * race). The worker waits for its handler before it ends. */
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

static int message, seen;
static atomic_int handled;

static void on_usr1(int sig) {
    (void)sig;
    seen = message;
    atomic_store(&handled, 1);
}

static void *worker(void *arg) {
    (void)arg;
    while (!atomic_load(&handled))
        ;
    return NULL;
}

int main(void) {
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = on_usr1;
    sigaction(SIGUSR1, &act, NULL);
    pthread_t thread;
    pthread_create(&thread, NULL, worker, NULL);
    message = 42;
    pthread_kill(thread, SIGUSR1);
    pthread_join(thread, NULL);
    assert(seen == 42);
    return 0;
}
