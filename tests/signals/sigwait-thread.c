/* The server pattern: the main thread blocks SIGUSR1 and SIGTERM before it
 * creates any thread (they inherit its mask), and one thread takes them
 * with `sigwait`; the workers send them to the process (`kill`) and to
 * that thread (`pthread_kill`). No handler ever runs. */
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static pthread_t waiter;
static int usr1_seen;

static void *take_signals(void *arg) {
    sigset_t *set = arg;
    for (;;) {
        int sig;
        assert(sigwait(set, &sig) == 0);
        if (sig == SIGTERM)
            return NULL;
        assert(sig == SIGUSR1);
        usr1_seen++;
    }
}

static void *worker(void *arg) {
    (void)arg;
    kill(getpid(), SIGUSR1);
    return NULL;
}

int main(void) {
    static sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    pthread_create(&waiter, NULL, take_signals, &set);
    pthread_t workers[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&workers[i], NULL, worker, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(workers[i], NULL);
    pthread_kill(waiter, SIGTERM);
    pthread_join(waiter, NULL);
    /* Two sends of one signal before it is taken are one pending signal. */
    assert(usr1_seen == 1 || usr1_seen == 2);
    printf("SIGUSR1 taken %d times\n", usr1_seen);
    return 0;
}
